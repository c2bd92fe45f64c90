/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* h2 header blocks and HTTP/1.1 heads (see h2_fields.h). */
#include "h2_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void h2_fields_clear(struct h2_fields *f)
{
	free(f->buf);
	*f = (struct h2_fields){0};
}

void h2_fields_add(struct h2_fields *f, const uint8_t *name, size_t nlen, const uint8_t *value,
		   size_t vlen)
{
	size_t need = nlen + vlen + 2;

	f->size += nlen + vlen + 32;
	if (f->size > H2_MAX_FIELDS) {
		f->too_big = true;
		return;
	}
	if (f->len + need > f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 1024;
		char *buf;
		while (cap < f->len + need)
			cap *= 2;
		if (!(buf = realloc(f->buf, cap))) {
			f->no_memory = true;
			return;
		}
		f->buf = buf;
		f->cap = cap;
	}
	if (nlen) /* an empty one may come as NULL */
		memcpy(f->buf + f->len, name, nlen);
	f->buf[f->len + nlen] = '\0';
	if (vlen)
		memcpy(f->buf + f->len + nlen + 1, value, vlen);
	f->buf[f->len + need - 1] = '\0';
	f->len += need;
	f->n++;
}

/* The next field after *at (NULL: the first); false at the end. Values hold no NUL (nghttp2). */
static bool next_field(const struct h2_fields *f, const char **at, const char **name,
		       const char **value)
{
	const char *p = *at ? *at : f->buf, *end;

	if (!f->buf)
		return false;
	end = f->buf + f->len;
	if (p >= end)
		return false;
	*name = p;
	*value = p + strlen(p) + 1;
	*at = *value + strlen(*value) + 1;
	return true;
}

const char *h2_fields_get(const struct h2_fields *f, const char *want)
{
	const char *at = NULL, *name, *value;

	while (next_field(f, &at, &name, &value))
		if (!strcmp(name, want))
			return value;
	return NULL;
}

/* Text being written: grows as needed; NULL buf once out of memory. */
struct text {
	char *buf;
	size_t len, cap;
};

static void put(struct text *t, const char *a, size_t n)
{
	if (!t->buf)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *buf = realloc(t->buf, cap);
		if (!buf) {
			free(t->buf);
			t->buf = NULL;
			return;
		}
		t->buf = buf;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, a, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void puts3(struct text *t, const char *a, const char *b, const char *c)
{
	put(t, a, strlen(a));
	put(t, b, strlen(b));
	put(t, c, strlen(c));
}

static bool text_init(struct text *t)
{
	t->len = 0;
	t->cap = 1024;
	return (t->buf = malloc(t->cap)) != NULL;
}

/* The fields that are not pseudo-headers, as "name: value" lines; cookies (which h2 may split
 * into many fields) joined into one line, where HTTP/1.1 has them (RFC 9113 8.2.3). skip: a
 * field already written. */
static void put_fields(struct text *t, const struct h2_fields *f, const char *skip)
{
	const char *at = NULL, *name, *value;
	bool cookie = false;

	while (next_field(f, &at, &name, &value)) {
		if (name[0] == ':' || (skip && !strcmp(name, skip)))
			continue;
		if (!strcmp(name, "cookie")) {
			cookie = true;
			continue;
		}
		puts3(t, name, ": ", value);
		put(t, "\r\n", 2);
	}
	if (!cookie)
		return;
	put(t, "cookie: ", 8);
	at = NULL;
	cookie = false;
	while (next_field(f, &at, &name, &value)) {
		if (strcmp(name, "cookie"))
			continue;
		if (cookie)
			put(t, "; ", 2);
		put(t, value, strlen(value));
		cookie = true;
	}
	put(t, "\r\n", 2);
}

char *h2_fields_request_head(const struct h2_fields *f, size_t *len, const char **why)
{
	const char *method = h2_fields_get(f, ":method"), *scheme = h2_fields_get(f, ":scheme"),
		   *path = h2_fields_get(f, ":path"), *authority = h2_fields_get(f, ":authority"),
		   *host = h2_fields_get(f, "host");
	struct text t;

	*why = NULL;
	if (!method || !strcmp(method, "CONNECT") || !path)
		*why = "a CONNECT (or a request without :path) inside h2 is not forwarded";
	else if (strpbrk(path, " \t") || strpbrk(method, " \t"))
		*why = "an h2 request whose :path or :method holds a blank";
	else if (!scheme || strcmp(scheme, "https"))
		*why = "an h2 request inside TLS must have the scheme https";
	else if (!authority && !host)
		*why = "the h2 request names no authority (:authority or Host)";
	else if (authority && host && strcasecmp(authority, host))
		*why = "the h2 request's :authority and Host differ";
	if (*why || !text_init(&t))
		return NULL;
	puts3(&t, method, " ", path);
	puts3(&t, " HTTP/1.1\r\nhost: ", authority ? authority : host, "\r\n");
	put_fields(&t, f, "host");
	put(&t, "\r\n", 2);
	*len = t.len;
	return t.buf;
}

char *h2_fields_response_head(const struct h2_fields *f, size_t *len, const char **why)
{
	const char *status = h2_fields_get(f, ":status");
	struct text t;

	*why = NULL;
	if (!status || strlen(status) != 3 || strspn(status, "0123456789") != 3)
		*why = "an h2 response without a 3-digit :status";
	if (*why || !text_init(&t))
		return NULL;
	puts3(&t, "HTTP/1.1 ", status, "\r\n");
	put_fields(&t, f, NULL);
	put(&t, "\r\n", 2);
	*len = t.len;
	return t.buf;
}

char *h2_fields_trailer_text(const struct h2_fields *f, size_t *len)
{
	struct text t;

	if (!text_init(&t))
		return NULL;
	put_fields(&t, f, NULL);
	put(&t, "\r\n", 2);
	*len = t.len;
	return t.buf;
}

/* ---------- back to fields ---------- */

static bool connection_specific(const char *name, size_t n)
{
	static const char *const names[] = {"connection",	 "keep-alive", "proxy-connection",
					    "transfer-encoding", "upgrade",    "host"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n == strlen(names[i]) && !strncasecmp(name, names[i], n))
			return true;
	return false;
}

/* Adds a field whose name and value are copied into the store (lower-cased name). */
static void nv_add(struct h2_nv *nv, const char *name, size_t nlen, const char *value, size_t vlen)
{
	char *n = nv->store + nv->store_len, *v = n + nlen;

	for (size_t i = 0; i < nlen; i++)
		n[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	memcpy(v, value, vlen);
	nv->store_len += nlen + vlen;
	nv->v[nv->n++] = (nghttp2_nv){(uint8_t *)n, (uint8_t *)v, nlen, vlen,
				      nv->secret ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE};
}

/* "NAME: value" (OWS trimmed) of the line [p, eol); false when it is not a field line. */
static bool field_line(const char *p, const char *eol, size_t *nlen, const char **v, size_t *vlen)
{
	const char *colon = memchr(p, ':', (size_t)(eol - p)), *e = eol;

	if (!colon || colon == p)
		return false;
	*nlen = (size_t)(colon - p);
	*v = colon + 1;
	while (*v < e && (**v == ' ' || **v == '\t'))
		(*v)++;
	while (e > *v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*vlen = (size_t)(e - *v);
	return true;
}

/* The start line's fields; p is moved past it. */
static bool start_line(struct h2_nv *nv, const char **p, const char *end, enum h2_head_kind kind,
		       const char **authority, size_t *alen)
{
	const char *eol = memmem(*p, (size_t)(end - *p), "\r\n", 2), *sp1, *sp2;

	if (kind == H2_HEAD_TRAILERS)
		return true;
	if (!eol || !(sp1 = memchr(*p, ' ', (size_t)(eol - *p))))
		return false;
	if (kind == H2_HEAD_RESPONSE) {
		if (eol - sp1 < 4)
			return false;
		nv_add(nv, ":status", 7, sp1 + 1, 3);
	} else {
		if (!(sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1))))
			return false;
		nv_add(nv, ":method", 7, *p, (size_t)(sp1 - *p));
		nv_add(nv, ":scheme", 7, "https", 5);
		nv_add(nv, ":authority", 10, *authority, *alen);
		nv_add(nv, ":path", 5, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	}
	*p = eol + 2;
	return true;
}

/* The Host field's value in a request head (what :authority becomes). */
static bool find_host(const char *head, const char *end, const char **v, size_t *vlen)
{
	const char *p = memmem(head, (size_t)(end - head), "\r\n", 2), *eol;
	size_t nlen;

	for (p = p ? p + 2 : end;
	     p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p; p = eol + 2)
		if (field_line(p, eol, &nlen, v, vlen) && nlen == 4 && !strncasecmp(p, "host", 4))
			return true;
	return false;
}

int h2_nv_from_head(const char *head, size_t len, enum h2_head_kind kind, bool secret,
		    struct h2_nv *out)
{
	const char *p = head, *end = head + len, *eol, *authority = NULL, *v;
	size_t lines = 4, alen = 0, nlen, vlen;

	*out = (struct h2_nv){.secret = secret};
	for (size_t i = 0; i < len; i++)
		lines += head[i] == '\n';
	if (kind == H2_HEAD_REQUEST && !find_host(head, end, &authority, &alen))
		return -1;
	out->v = calloc(lines, sizeof(*out->v));
	out->store = malloc(len + 64); /* the pseudo-headers' names besides the head's bytes */
	if (!out->v || !out->store || !start_line(out, &p, end, kind, &authority, &alen)) {
		h2_nv_free(out);
		return -1;
	}
	for (; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p; p = eol + 2) {
		if (!field_line(p, eol, &nlen, &v, &vlen)) {
			h2_nv_free(out);
			return -1;
		}
		if (!connection_specific(p, nlen))
			nv_add(out, p, nlen, v, vlen);
	}
	return 0;
}

void h2_nv_free(struct h2_nv *nv)
{
	if (nv->store && nv->secret)
		explicit_bzero(nv->store, nv->store_len);
	free(nv->store);
	free(nv->v);
	*nv = (struct h2_nv){0};
}
