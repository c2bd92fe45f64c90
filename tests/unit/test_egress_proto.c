/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the egress proxy's protocol parsers: the first bytes of a connection (TLS
 * ClientHello, HTTP request; egress_sniff), the request heads sent up (http_closing_head,
 * http_kept_head), the proxy's request line and the framing checks every head passes. The rules
 * and their decisions are in test_egress.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "http_proxy.h"
#include "http_stream.h"
#include "sniff.h"

/* A TLS 1.2/1.3 ClientHello for host (no other extension than server_name unless pad). */
static size_t client_hello(unsigned char *b, const char *host, bool split)
{
	size_t hl = strlen(host), at = 0, ext = 2 + 2 + 2 + 1 + 2 + hl;
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + ext, rec = 4 + body;

	b[at++] = 0x16, b[at++] = 3, b[at++] = 1;
	b[at++] = (unsigned char)(rec >> 8), b[at++] = (unsigned char)rec;
	b[at++] = 1, b[at++] = 0;
	/* a split hello claims more than its record holds */
	b[at++] = (unsigned char)((body + (split ? 100 : 0)) >> 8);
	b[at++] = (unsigned char)(body + (split ? 100 : 0));
	b[at++] = 3, b[at++] = 3;
	memset(b + at, 0xab, 32), at += 32;
	b[at++] = 0;						  /* session id */
	b[at++] = 0, b[at++] = 2, b[at++] = 0x13, b[at++] = 0x01; /* one suite */
	b[at++] = 1, b[at++] = 0;				  /* null compression */
	b[at++] = (unsigned char)(ext >> 8), b[at++] = (unsigned char)ext;
	b[at++] = 0, b[at++] = 0; /* server_name */
	b[at++] = (unsigned char)((ext - 4) >> 8), b[at++] = (unsigned char)(ext - 4);
	b[at++] = (unsigned char)((hl + 3) >> 8), b[at++] = (unsigned char)(hl + 3);
	b[at++] = 0;
	b[at++] = (unsigned char)(hl >> 8), b[at++] = (unsigned char)hl;
	memcpy(b + at, host, hl), at += hl;
	return at;
}

static void test_sniff(void **state)
{
	unsigned char b[512];
	struct sniff s;
	size_t n = client_hello(b, "api.example.com", false);
	const char *get = "GET /x HTTP/1.1\r\nAccept: */*\r\nHOST:  www.example.com:8080 \r\n\r\n";

	(void)state;
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_TLS);
	assert_string_equal(s.name, "api.example.com");
	assert_false(s.odd);
	/* every shorter prefix asks for more */
	for (size_t k = 1; k < n; k++)
		assert_int_equal(egress_sniff(b, k, &s), PARSE_MORE);
	/* a hello that does not fit its record cannot be checked: unreadable */
	n = client_hello(b, "api.example.com", true);
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_true(s.odd);
	assert_string_equal(s.name, "");
	/* a control byte in the name is unreadable, not a name */
	n = client_hello(b, "a\nb.example", false);
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_true(s.odd);

	assert_int_equal(egress_sniff((const unsigned char *)get, strlen(get), &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_HTTP);
	assert_string_equal(s.method, "GET");
	assert_string_equal(s.name, "www.example.com");
	assert_int_equal(egress_sniff((const unsigned char *)get, 20, &s), PARSE_MORE);
	/* a protocol that is neither: decided at its first line (or a NUL), no name */
	assert_int_equal(egress_sniff((const unsigned char *)"SSH-2.0-x\r\n", 11, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	assert_int_equal(egress_sniff((const unsigned char *)"SSH-2.0-x", 9, &s), PARSE_MORE);
	assert_int_equal(egress_sniff((const unsigned char *)"\x00\x01", 2, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	/* request lines a lenient server would serve, which the strict parse does not read:
	 * refused, however they arrive */
	static const char *const lenient[] = {"GET\t/a HTTP/1.1\r\nHost: e.test\r\n\r\n",
					      "\x0cGET /a HTTP/1.1\r\nHost: e.test\r\n\r\n",
					      "get /a http/1.1\r\nHost: e.test\r\n\r\n",
					      "\x1cGET /a HTTP/1.0\n\n", NULL};
	/* text that is no request line is other at once; ended without its line end, other too,
	 * unless it names HTTP/ */
	assert_int_equal(egress_sniff((const unsigned char *)"{\"a\":1}", 7, &s), PARSE_DONE);
	assert_false(s.odd);
	assert_int_equal(egress_sniff((const unsigned char *)"e-capture-echo", 14, &s), PARSE_MORE);
	assert_int_equal(egress_sniff_final((const unsigned char *)"e-capture-echo", 14, &s),
			 PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	assert_int_equal(egress_sniff_final((const unsigned char *)"get /a http/1.1", 15, &s),
			 PARSE_DONE);
	assert_true(s.odd);
	assert_int_equal(egress_sniff_final((const unsigned char *)"GET /a HTTP/1.1\r\nHo", 20, &s),
			 PARSE_DONE);
	assert_true(s.odd);
	/* Go serves any token as a method, however long */
	static const char longm[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ /a HTTP/1.1\r\nHost: e.test\r\n\r\n";
	assert_int_equal(egress_sniff((const unsigned char *)longm, strlen(longm), &s), PARSE_DONE);
	assert_true(s.odd);
	for (size_t i = 0; lenient[i]; i++) {
		size_t len = strlen(lenient[i]), eol = strcspn(lenient[i], "\n");
		for (size_t k = 1; k <= eol; k++)
			assert_int_equal(egress_sniff((const unsigned char *)lenient[i], k, &s),
					 PARSE_MORE);
		assert_int_equal(egress_sniff((const unsigned char *)lenient[i], len, &s),
				 PARSE_DONE);
		assert_true(s.odd);
	}
}

/* A captured request goes up as it came, but closing: one request per connection. */
static void test_closing_head(void **state)
{
	const char *head = "GET /a?b HTTP/1.1\r\nHost: x.example\r\nConnection: keep-alive\r\n"
			   "Keep-Alive: 5\r\nProxy-Authorization: y\r\nAccept: */*\r\n\r\n";
	size_t n;
	char *out = http_closing_head(head, strlen(head), NULL, &n);

	(void)state;
	assert_non_null(out);
	assert_int_equal(n, strlen("GET /a?b HTTP/1.1\r\nHost: x.example\r\nAccept: */*\r\n"
				   "Connection: close\r\n\r\n"));
	assert_memory_equal(out,
			    "GET /a?b HTTP/1.1\r\nHost: x.example\r\nAccept: */*\r\n"
			    "Connection: close\r\n\r\n",
			    n);
	free(out);
}

/* An intercepted request goes up on a connection kept open: the target the rules matched, the
 * hop-by-hop headers dropped, every other header kept in its place, and no Connection: close
 * (the next request on the connection is read and checked too). */
static void test_kept_head(void **state)
{
	static const char head[] =
	    "GET /a/./b/../c%41?q=%2f HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive, "
	    "Upgrade\r\nUser-Agent: t/1\r\nKeep-Alive: timeout=5\r\nproxy-authorization: Basic "
	    "eA==\r\nPROXY-CONNECTION: keep-alive\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQA"
	    "\r\nAccept: */*\r\nUpgrade-Insecure-Requests: 1\r\nConnection-Id: 7\r\nX-Proxy-A: b"
	    "\r\nContent-Length: 2\r\n\r\n";
	static const char want[] =
	    "GET /a/cA?q=%2F HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: t/1\r\n"
	    "Accept: */*\r\nUpgrade-Insecure-Requests: 1\r\nConnection-Id: 7\r\nX-Proxy-A: b\r\n"
	    "Content-Length: 2\r\n\r\n";
	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	size_t n;
	char *out = http_kept_head(head, sizeof(head) - 1, "/a/cA?q=%2F", &n);

	(void)state;
	assert_non_null(out);
	assert_non_null(s);
	if (n != sizeof(want) - 1 || memcmp(out, want, n)) {
		print_error("got:\n%.*s\nwant:\n%s", (int)n, out, want);
		fail();
	}
	/* the server reads it as one request with the same framing */
	http_stream_init(s);
	assert_int_equal(http_stream_feed(s, out, n, &ev), n);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(ev.framing, HTTP_FRAMING_LENGTH);
	assert_int_equal(ev.length, 2);
	assert_int_equal(ev.target_len, 11);
	assert_memory_equal(ev.target, "/a/cA?q=%2F", 11);
	free(out);

	/* no target given: the request line as it came; HTTP/1.0 and a head of no headers */
	out = http_kept_head(head, sizeof(head) - 1, NULL, &n);
	assert_non_null(out);
	assert_true(n > 35);
	assert_memory_equal(out, "GET /a/./b/../c%41?q=%2f HTTP/1.1\r\nHost: api.example.com\r\n",
			    35 + 23);
	free(out);
	out = http_kept_head("HEAD /x HTTP/1.0\r\n\r\n", 20, "/y", &n);
	assert_non_null(out);
	assert_int_equal(n, 20);
	assert_memory_equal(out, "HEAD /y HTTP/1.0\r\n\r\n", 20);
	free(out);
	/* a head of hop-by-hop headers only, and a longer target than the one replaced */
	out = http_kept_head("POST / HTTP/1.1\r\nConnection: close\r\nUpgrade: websocket\r\n\r\n",
			     58, "/a%20long/er/path%3B", &n);
	assert_non_null(out);
	assert_int_equal(n, strlen("POST /a%20long/er/path%3B HTTP/1.1\r\n\r\n"));
	assert_memory_equal(out, "POST /a%20long/er/path%3B HTTP/1.1\r\n\r\n", n);
	free(out);
	free(s);
}

/* A request head in a buffer of exactly its size (ASan sees a read past it). */
static enum parse_result parse_exact(const char *text, size_t len, struct http_request *req)
{
	char *buf = malloc(len);
	enum parse_result r;

	assert_non_null(buf);
	memcpy(buf, text, len);
	r = http_parse_request(buf, len, req);
	free(buf);
	return r;
}

static void test_http_request_line(void **state)
{
	static const char crash[] = "GN A/z\x11\x11 G *\r\n\r\n"; /* fuzz_proxy, shortened */
	struct http_request req;

	(void)state;
	assert_int_equal(parse_exact("GET http://example.org/x HTTP/1.1\r\n\r\n", 37, &req),
			 PARSE_DONE);
	assert_string_equal(req.host, "example.org");
	assert_int_equal(req.port, 80);
	assert_int_equal(parse_exact("CONNECT example.org:443 HTTP/1.0\r\n\r\n", 36, &req),
			 PARSE_DONE);
	assert_true(req.is_connect);
	assert_int_equal(req.port, 443);
	/* a version shorter than HTTP/1.x at the very end of the buffer (found by fuzz_proxy) */
	assert_int_equal(parse_exact(crash, sizeof(crash) - 1, &req), PARSE_BAD);
	assert_int_equal(parse_exact("GET http://a/ H\r\n\r\n", 19, &req), PARSE_BAD);
	assert_int_equal(parse_exact("GET http://a/ HTTP/2.0\r\n\r\n", 26, &req), PARSE_BAD);
}

/* One request, read the same way by every server on the way: heads whose body length or
 * header lines could be read two ways are refused, by the proxy's parser and the sniffer. */
static void test_http_framing(void **state)
{
	static const char *const refused[] = {
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: 1\r\n folded: yes\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: 1\nHost: b\r\n\r\n",
	};
	static const char *const fine[] = {
	    "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    "POST http://a/ HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: a b\r\n\r\n",
	};
	struct http_request req;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(parse_exact(refused[i], strlen(refused[i]), &req), PARSE_BAD);
		assert_non_null(http_framing_refusal(refused[i], strlen(refused[i])));
	}
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		assert_int_equal(parse_exact(fine[i], strlen(fine[i]), &req), PARSE_DONE);
		assert_null(http_framing_refusal(fine[i], strlen(fine[i])));
	}
}
int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_framing),      cmocka_unit_test(test_sniff),
	    cmocka_unit_test(test_closing_head),      cmocka_unit_test(test_kept_head),
	    cmocka_unit_test(test_http_request_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
