/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: an h2 request's fields (the input: NUL-separated name and value pairs, as
 * nghttp2 would hand them over: no CR, LF or NUL in a value, checked here as nghttp2 does) to
 * the HTTP/1.1 head the proxy's checks read, and back to fields. Checks beyond "no crash":
 *  - a head is made only of a request agentbox forwards (:scheme https, a :path, not CONNECT,
 *    an authority) and is read by http_stream.c as exactly one head, consuming all of it, or
 *    refused there (then the proxy answers 400: nothing goes up);
 *  - what goes up has the method, target and authority the checks read (:method, :path and
 *    :authority of the fields back equal the parsed head's), pseudo-headers once each, first;
 *  - no connection-specific field and no Host goes up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_fields.h"
#include "http_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_h2_fields: check failed: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* nghttp2's own checks of a field: a lower-case token name (or a pseudo-header), a value with
 * no CR, LF or NUL. */
static bool valid(const uint8_t *n, size_t nl, const uint8_t *v, size_t vl)
{
	if (!nl)
		return false;
	for (size_t i = n[0] == ':' ? 1 : 0; i < nl; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' ||
		      n[i] == '_'))
			return false;
	for (size_t i = 0; i < vl; i++)
		if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0')
			return false;
	return !(vl && (v[0] == ' ' || v[0] == '\t' || v[vl - 1] == ' ' || v[vl - 1] == '\t'));
}

static bool same(const nghttp2_nv *nv, const char *name, const char *p, size_t n)
{
	return nv->namelen == strlen(name) && !memcmp(nv->name, name, nv->namelen) &&
	       nv->valuelen == n && !memcmp(nv->value, p, n);
}

static void check_back(const char *head, size_t len, const struct http_event *ev)
{
	struct h2_nv nv;

	CHECK(h2_nv_from_head(head, len, H2_HEAD_REQUEST, false, &nv) == 0);
	CHECK(nv.n >= 4);
	CHECK(same(&nv.v[0], ":method", ev->method, ev->method_len));
	CHECK(same(&nv.v[1], ":scheme", "https", 5));
	CHECK(ev->host && same(&nv.v[2], ":authority", ev->host, ev->host_len));
	CHECK(same(&nv.v[3], ":path", ev->target, ev->target_len));
	for (size_t i = 4; i < nv.n; i++) {
		const char *n = (const char *)nv.v[i].name;
		size_t l = nv.v[i].namelen;
		CHECK(l && n[0] != ':');
		CHECK(!(l == 4 && !memcmp(n, "host", 4)));
		CHECK(!(l == 10 && !memcmp(n, "connection", 10)));
		CHECK(!(l == 17 && !memcmp(n, "transfer-encoding", 17)));
	}
	h2_nv_free(&nv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct h2_fields f = {0};
	struct http_stream *st = malloc(sizeof(*st));
	struct http_event ev;
	const uint8_t *p = data, *end = data + size;
	const char *why;
	size_t len;
	char *head;

	CHECK(st);
	while (p < end) {
		const uint8_t *n = p, *nz = memchr(p, 0, (size_t)(end - p)), *v, *vz;
		if (!nz)
			break;
		v = nz + 1;
		vz = memchr(v, 0, (size_t)(end - v));
		if (!vz)
			vz = end;
		if (valid(n, (size_t)(nz - n), v, (size_t)(vz - v)))
			h2_fields_add(&f, n, (size_t)(nz - n), v, (size_t)(vz - v));
		p = vz + 1;
	}
	head = f.too_big ? NULL : h2_fields_request_head(&f, &len, &why);
	if (head) {
		const char *scheme = h2_fields_get(&f, ":scheme"),
			   *path = h2_fields_get(&f, ":path");
		CHECK(scheme && !strcmp(scheme, "https") && path);
		http_stream_init(st);
		if (http_stream_feed(st, head, len, &ev) == len && ev.type == HTTP_STREAM_HEAD)
			check_back(head, len, &ev);
		else
			CHECK(ev.type == HTTP_STREAM_BAD || ev.type == HTTP_STREAM_MORE ||
			      len > HTTP_STREAM_MAX_HEAD);
		free(head);
	}
	h2_fields_clear(&f);
	free(st);
	return 0;
}
