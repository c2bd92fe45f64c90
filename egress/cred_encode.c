/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The encodings credential brokering looks for a value in (include/cred_encode.h): a growing
 * buffer that wipes what it held, base64 in both alphabets, percent-encoding, hex digits. */
#include "cred_encode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cenc_b64std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const char cenc_b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---------- growing buffers ---------- */

void cbuf_put(struct cbuf *o, const void *d, size_t n)
{
	if (o->oom)
		return;
	if (o->n + n + 1 > o->cap) {
		size_t cap = (o->n + n + 1) * 2;
		char *s = realloc(o->s, cap);
		if (!s) {
			o->oom = true;
			return;
		}
		o->s = s;
		o->cap = cap;
	}
	if (n)
		memcpy(o->s + o->n, d, n);
	o->n += n;
	o->s[o->n] = '\0';
}

void cbuf_put_str(struct cbuf *o, const char *s)
{
	cbuf_put(o, s, strlen(s));
}

/* Wiped: an output buffer may have held a real value. */
void cbuf_free(struct cbuf *o)
{
	if (o->s)
		explicit_bzero(o->s, o->cap);
	free(o->s);
	*o = (struct cbuf){0};
}

/* ---------- encodings ---------- */

void cenc_b64_encode(struct cbuf *o, const unsigned char *in, size_t n, const char *alpha)
{
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		char q[4];
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		q[0] = alpha[v >> 18 & 63];
		q[1] = alpha[v >> 12 & 63];
		q[2] = i + 1 < n ? alpha[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? alpha[v & 63] : '=';
		cbuf_put(o, q, 4);
	}
}

static int b64_value(char c)
{
	const char *p = c ? strchr(cenc_b64std, c) : NULL;

	if (p)
		return (int)(p - cenc_b64std);
	return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* Standard or URL-safe, padding optional; false for anything else. */
bool cenc_b64_decode(struct cbuf *o, const char *in, size_t n)
{
	uint32_t acc = 0;
	int bits = 0;

	while (n && in[n - 1] == '=')
		n--;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(in[i]);
		if (v < 0)
			return false;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			char c = (char)(acc >> (bits - 8) & 0xff);
			bits -= 8;
			cbuf_put(o, &c, 1);
		}
	}
	return true;
}

int cenc_hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* %XX decoded once; false when nothing was decoded. */
bool cenc_pct_decode(struct cbuf *o, const char *in, size_t n)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == '%' && i + 2 < n && cenc_hexval(in[i + 1]) >= 0 &&
		    cenc_hexval(in[i + 2]) >= 0) {
			c = (char)(cenc_hexval(in[i + 1]) << 4 | cenc_hexval(in[i + 2]));
			i += 2;
			any = true;
		}
		cbuf_put(o, &c, 1);
	}
	return any;
}

void cenc_pct_encode(struct cbuf *o, const char *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		char q[4];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c)) {
			cbuf_put(o, &in[i], 1);
			continue;
		}
		snprintf(q, sizeof(q), "%%%02X", c);
		cbuf_put(o, q, 3);
	}
}
