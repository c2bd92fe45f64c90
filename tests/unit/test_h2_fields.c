/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for h2_fields.c: an h2 request's fields written as the HTTP/1.1 head the checks
 * read (pseudo-headers to a request line and Host, cookies joined, the requests agentbox does
 * not forward refused), the decoded-size cap, and heads read back into fields (pseudo-headers
 * first, Host as :authority, connection-specific fields dropped, a secret's fields never
 * indexed); and h2_wire.c's allocator cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "h2_fields.h"
#include "h2_wire.h"

static void add(struct h2_fields *f, const char *name, const char *value)
{
	h2_fields_add(f, (const uint8_t *)name, strlen(name), (const uint8_t *)value,
		      strlen(value));
}

static struct h2_fields request(const char *method, const char *scheme, const char *authority)
{
	struct h2_fields f = {0};

	add(&f, ":method", method);
	if (scheme)
		add(&f, ":scheme", scheme);
	if (authority)
		add(&f, ":authority", authority);
	add(&f, ":path", "/v1/x?q=1");
	return f;
}

static void test_request_head(void **state)
{
	struct h2_fields f = request("POST", "https", "api.test");
	const char *why;
	size_t len;
	char *head;
	(void)state;

	add(&f, "content-type", "application/grpc");
	add(&f, "cookie", "a=1");
	add(&f, "te", "trailers");
	add(&f, "cookie", "b=2");
	head = h2_fields_request_head(&f, &len, &why);
	assert_non_null(head);
	assert_string_equal(head, "POST /v1/x?q=1 HTTP/1.1\r\nhost: api.test\r\n"
				  "content-type: application/grpc\r\nte: trailers\r\n"
				  "cookie: a=1; b=2\r\n\r\n");
	assert_int_equal(len, strlen(head));
	free(head);
	h2_fields_clear(&f);
}

static void expect_refused(struct h2_fields f, const char *want)
{
	const char *why = NULL;
	size_t len;

	assert_null(h2_fields_request_head(&f, &len, &why));
	assert_non_null(why);
	assert_non_null(strstr(why, want));
	h2_fields_clear(&f);
}

static void test_request_refused(void **state)
{
	struct h2_fields f;
	(void)state;

	expect_refused(request("GET", "http", "api.test"), "scheme https");
	expect_refused(request("GET", NULL, "api.test"), "scheme https");
	expect_refused(request("CONNECT", "https", "api.test"), "CONNECT");
	expect_refused(request("GET", "https", NULL), "no authority");
	f = request("GET", "https", "api.test");
	add(&f, "host", "other.test");
	expect_refused(f, ":authority and Host differ");
	/* control: Host alone stands for the authority, and the same Host as :authority passes */
	f = request("GET", "https", NULL);
	add(&f, "host", "api.test");
	{
		const char *why;
		size_t len;
		char *head = h2_fields_request_head(&f, &len, &why);
		assert_non_null(head);
		assert_non_null(strstr(head, "\r\nhost: api.test\r\n"));
		free(head);
	}
	h2_fields_clear(&f);
}

/* A block past H2_MAX_FIELDS (name + value + 32 each) is counted, not kept: an HPACK bomb
 * decodes to nothing the proxy holds. */
static void test_cap(void **state)
{
	struct h2_fields f = {0};
	char value[4001];
	(void)state;

	memset(value, 'v', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	for (int i = 0; i < 4; i++)
		add(&f, "x-bomb", value); /* 4 x 4038 = 16152: within */
	assert_false(f.too_big);
	assert_int_equal(f.n, 4);
	for (int i = 0; i < 4000; i++)
		add(&f, "x-bomb", value);
	assert_true(f.too_big);
	assert_int_equal(f.n, 4);
	assert_true(f.len <= H2_MAX_FIELDS);
	h2_fields_clear(&f);
}

static void expect_nv(const struct h2_nv *nv, size_t i, const char *name, const char *value)
{
	assert_true(i < nv->n);
	assert_int_equal(nv->v[i].namelen, strlen(name));
	assert_memory_equal(nv->v[i].name, name, strlen(name));
	assert_int_equal(nv->v[i].valuelen, strlen(value));
	assert_memory_equal(nv->v[i].value, value, strlen(value));
}

static void test_back_to_fields(void **state)
{
	const char *req =
	    "GET /a%2Fb HTTP/1.1\r\nHost: api.test:8443\r\nAuthorization: Bearer k\r\n"
	    "Connection: close\r\nAccept-Encoding: identity\r\n\r\n";
	const char *resp = "HTTP/1.1 404\r\nContent-Type: text/plain\r\nKeep-Alive: x\r\n\r\n";
	struct h2_nv nv;
	(void)state;

	assert_int_equal(h2_nv_from_head(req, strlen(req), H2_HEAD_REQUEST, true, &nv), 0);
	assert_int_equal(nv.n, 6);
	expect_nv(&nv, 0, ":method", "GET");
	expect_nv(&nv, 1, ":scheme", "https");
	expect_nv(&nv, 2, ":authority", "api.test:8443");
	expect_nv(&nv, 3, ":path", "/a%2Fb");
	expect_nv(&nv, 4, "authorization", "Bearer k");
	expect_nv(&nv, 5, "accept-encoding", "identity");
	for (size_t i = 0; i < nv.n; i++) /* a real value never enters the HPACK table */
		assert_int_equal(nv.v[i].flags, NGHTTP2_NV_FLAG_NO_INDEX);
	h2_nv_free(&nv);
	assert_int_equal(h2_nv_from_head(resp, strlen(resp), H2_HEAD_RESPONSE, false, &nv), 0);
	assert_int_equal(nv.n, 2);
	expect_nv(&nv, 0, ":status", "404");
	expect_nv(&nv, 1, "content-type", "text/plain");
	assert_int_equal(nv.v[0].flags, NGHTTP2_NV_FLAG_NONE);
	h2_nv_free(&nv);
	assert_int_equal(
	    h2_nv_from_head("grpc-status: 0\r\n\r\n", 18, H2_HEAD_TRAILERS, false, &nv), 0);
	assert_int_equal(nv.n, 1);
	expect_nv(&nv, 0, "grpc-status", "0");
	h2_nv_free(&nv);
	/* a request head without Host has no authority to give */
	assert_int_equal(h2_nv_from_head("GET / HTTP/1.1\r\n\r\n", 18, H2_HEAD_REQUEST, false, &nv),
			 -1);
}

static void test_response_and_trailers(void **state)
{
	struct h2_fields f = {0};
	const char *why;
	size_t len;
	char *text;
	(void)state;

	add(&f, ":status", "200");
	add(&f, "x-a", "1");
	text = h2_fields_response_head(&f, &len, &why);
	assert_string_equal(text, "HTTP/1.1 200\r\nx-a: 1\r\n\r\n");
	free(text);
	h2_fields_clear(&f);
	add(&f, ":status", "20");
	assert_null(h2_fields_response_head(&f, &len, &why));
	assert_non_null(why);
	h2_fields_clear(&f);
	add(&f, "grpc-status", "7");
	text = h2_fields_trailer_text(&f, &len);
	assert_string_equal(text, "grpc-status: 7\r\n\r\n");
	free(text);
	h2_fields_clear(&f);
}

/* A session's allocator refuses past H2_SESSION_MEMORY: a peer cannot make nghttp2 hold more. */
static void test_session_memory(void **state)
{
	struct h2_mem m = {0};
	nghttp2_session_callbacks *cb;
	nghttp2_session *s;
	void *big;
	(void)state;

	assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
	assert_int_equal(h2_session_new(&s, true, cb, NULL, &m), 0);
	assert_true(m.used > 0);
	big = m.mem.malloc(H2_SESSION_MEMORY, m.mem.mem_user_data);
	assert_null(big);
	assert_true(m.over);
	big = m.mem.malloc(1024, m.mem.mem_user_data); /* control: a small one still comes */
	assert_non_null(big);
	m.mem.free(big, m.mem.mem_user_data);
	nghttp2_session_del(s);
	nghttp2_session_callbacks_del(cb);
	assert_int_equal(m.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_request_head),
	    cmocka_unit_test(test_request_refused),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_back_to_fields),
	    cmocka_unit_test(test_response_and_trailers),
	    cmocka_unit_test(test_session_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
