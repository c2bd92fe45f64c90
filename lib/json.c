/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

void json_free(struct json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

const char *json_text(const struct json *j)
{
	if (j->oom || j->depth != 0 || !j->buf)
		return NULL;
	return j->buf;
}

static void put(struct json *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (n + 1 > j->cap - j->len || !j->buf) {
		size_t want = j->cap ? j->cap : 256;
		while (want - j->len < n + 1) {
			if (want > SIZE_MAX / 2) {
				j->oom = true;
				return;
			}
			want *= 2;
		}
		char *nb = realloc(j->buf, want);
		if (!nb) {
			j->oom = true;
			return;
		}
		j->buf = nb;
		j->cap = want;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(struct json *j, const char *s)
{
	put(j, s, strlen(s));
}

/* Writes the separator a new value needs at the current position. */
static void sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		if (!j->first[j->depth - 1])
			put(j, ",", 1);
		j->first[j->depth - 1] = false;
	}
}

static void open_(struct json *j, const char *c)
{
	sep(j);
	if (j->depth >= JSON_MAX_DEPTH) {
		j->oom = true;
		return;
	}
	put(j, c, 1);
	j->first[j->depth++] = true;
}

static void close_(struct json *j, const char *c)
{
	if (j->depth <= 0) {
		j->oom = true;
		return;
	}
	j->depth--;
	put(j, c, 1);
}

void json_obj_begin(struct json *j)
{
	open_(j, "{");
}

void json_obj_end(struct json *j)
{
	close_(j, "}");
}

void json_arr_begin(struct json *j)
{
	open_(j, "[");
}

void json_arr_end(struct json *j)
{
	close_(j, "]");
}

static void put_u(struct json *j, unsigned cp)
{
	char tmp[8];
	snprintf(tmp, sizeof(tmp), "\\u%04x", cp & 0xffffu);
	put(j, tmp, 6);
}

static void put_escaped(struct json *j, const unsigned char *s, size_t n)
{
	size_t i = 0;

	put(j, "\"", 1);
	while (i < n) {
		unsigned c = s[i];
		size_t run = i;
		while (run < n && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' &&
		       s[run] != '\\')
			run++;
		if (run > i) {
			put(j, (const char *)s + i, run - i);
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			put(j, c == '"' ? "\\\"" : "\\\\", 2);
			i++;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			put(j, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", 2);
			i++;
		} else if (c < 0x80) {
			put_u(j, c);
			i++;
		} else {
			uint32_t cp;
			size_t len = utf8_decode(s + i, n - i, &cp);
			if (!len) {
				put_u(j, 0xfffd);
				i++;
				continue;
			}
			if (cp >= 0x10000) {
				cp -= 0x10000;
				put_u(j, 0xd800 + (cp >> 10));
				put_u(j, 0xdc00 + (cp & 0x3ff));
			} else {
				put_u(j, cp);
			}
			i += len;
		}
	}
	put(j, "\"", 1);
}

void json_key(struct json *j, const char *key)
{
	sep(j);
	put_escaped(j, (const unsigned char *)key, strlen(key));
	put(j, ":", 1);
	j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t n)
{
	char *replaced = NULL;
	bool oom = false;

	if (j->filter)
		replaced = j->filter(j->filter_ctx, s, n, &oom);
	if (oom)
		j->oom = true;
	sep(j);
	if (replaced)
		put_escaped(j, (const unsigned char *)replaced, strlen(replaced));
	else
		put_escaped(j, (const unsigned char *)s, n);
	free(replaced);
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_strn(j, s, strlen(s));
}

void json_int(struct json *j, int64_t v)
{
	char tmp[32];
	sep(j);
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	puts_(j, tmp);
}

void json_uint(struct json *j, uint64_t v)
{
	char tmp[32];
	sep(j);
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	puts_(j, tmp);
}

void json_bool(struct json *j, bool v)
{
	sep(j);
	puts_(j, v ? "true" : "false");
}

void json_null(struct json *j)
{
	sep(j);
	puts_(j, "null");
}

void json_raw(struct json *j, const char *text)
{
	sep(j);
	puts_(j, text);
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

/* Standard base64 of n bytes as one string value. */
static void json_base64(struct json *j, const unsigned char *p, size_t n)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char quad[4];

	sep(j);
	put(j, "\"", 1);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		quad[0] = abc[v >> 18 & 63];
		quad[1] = abc[v >> 12 & 63];
		quad[2] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		quad[3] = i + 2 < n ? abc[v & 63] : '=';
		put(j, quad, 4);
	}
	put(j, "\"", 1);
}

void json_kv_bytes(struct json *j, const char *key, const char *s)
{
	char k[64];

	json_kv_str(j, key, s);
	/* a filtered document (the audit trail) gets no exact bytes past its filter */
	if (!s || j->filter || utf8_valid(s, strlen(s)))
		return;
	snprintf(k, sizeof(k), "%s_b64", key);
	json_key(j, k);
	json_base64(j, (const unsigned char *)s, strlen(s));
}
