/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A small streaming JSON writer used by --explain and the audit trail. Output is pure ASCII:
 * control characters and every non-ASCII code point are written as \u escapes, and bytes that
 * are not valid UTF-8 become U+FFFD, so any line can be read by any JSON parser. */
#ifndef AGENTBOX_JSON_H
#define AGENTBOX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

/* Rewrites a string value before it is written (the audit trail's redaction): returns a
 * malloc'd replacement, or NULL to keep s; sets *oom on allocation failure. */
typedef char *(*json_filter)(void *ctx, const char *s, size_t n, bool *oom);

struct json {
	char *buf;
	size_t len, cap;
	bool oom;  /* an allocation failed; the document is unusable */
	int depth; /* open objects/arrays */
	bool first[JSON_MAX_DEPTH];
	bool after_key;	    /* next value belongs to the key just written */
	json_filter filter; /* applied to string values, not keys */
	void *filter_ctx;
};

void json_init(struct json *j);
void json_free(struct json *j);
/* The finished text (NUL-terminated), or NULL if memory ran out or nesting is unbalanced. */
const char *json_text(const struct json *j);

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s); /* NULL writes null */
void json_strn(struct json *j, const char *s, size_t n);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* Appends already-valid JSON text as one value (used to embed a finished fragment). */
void json_raw(struct json *j, const char *text);

/* Convenience: "key": value pairs inside an object. */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
/* Bytes that may not be UTF-8 (a file name): "key" as a string, and when s is not valid UTF-8
 * (so "key" holds U+FFFD in place of the bad bytes) also "key_b64", the exact bytes in base64
 * (RFC 4648, padded), unless the document has a filter. NULL writes "key": null. */
void json_kv_bytes(struct json *j, const char *key, const char *s);

#endif
