/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The encodings credential brokering looks for a value in, shared by the request side
 * (credential.c: placeholders) and the response side (cred_scrub.c: real values): a growing
 * buffer that wipes what it held when freed, base64 in both alphabets, percent-encoding and
 * hex digits. Pure. */
#ifndef AGENTBOX_CRED_ENCODE_H
#define AGENTBOX_CRED_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

/* A growing buffer, always NUL-terminated; oom sticks once an allocation failed. */
struct cbuf {
	char *s;
	size_t n, cap;
	bool oom;
};

void cbuf_put(struct cbuf *o, const void *d, size_t n);
void cbuf_put_str(struct cbuf *o, const char *s);
/* Wiped, then freed: a buffer may have held a real value. */
void cbuf_free(struct cbuf *o);

extern const char cenc_b64std[];
extern const char cenc_b64url[];

/* With '=' padding. */
void cenc_b64_encode(struct cbuf *o, const unsigned char *in, size_t n, const char *alpha);
/* Standard or URL-safe, padding optional; false for anything else. */
bool cenc_b64_decode(struct cbuf *o, const char *in, size_t n);
/* A hex digit's value, or -1. */
int cenc_hexval(char c);
/* %XX decoded once; false when nothing was decoded. */
bool cenc_pct_decode(struct cbuf *o, const char *in, size_t n);
/* Everything but RFC 3986's unreserved characters as %XX. */
void cenc_pct_encode(struct cbuf *o, const char *in, size_t n);

#endif
