/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for session_proto: session ids and the requests a session's client sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "session_proto.h"

static void test_ids(void **state)
{
	(void)state;
	assert_true(session_id_valid("0123456789abcdef0123456789abcdef"));
	assert_false(session_id_valid(NULL));
	assert_false(session_id_valid(""));
	assert_false(session_id_valid("0123456789abcdef0123456789abcde"));   /* 31 */
	assert_false(session_id_valid("0123456789abcdef0123456789abcdef0")); /* 33 */
	assert_false(session_id_valid("0123456789ABCDEF0123456789abcdef"));  /* upper case */
	assert_false(session_id_valid("../../../../../../../etc/passwd.."));
	assert_false(session_id_valid("0123456789abcdef0123456789abcde/"));
	assert_false(session_id_valid("0123456789abcdef0123456789abcde\n"));
}

static void encode(const struct session_request *q, char **buf, size_t *len)
{
	struct ab_err e = {0};

	assert_int_equal(session_request_encode(q, buf, len, &e), 0);
}

static void test_round_trip(void **state)
{
	struct session_request q = {.kind = SESSION_EXEC, .timeout_ms = 1500}, d;
	struct ab_err e = {0};
	char *buf;
	size_t len;

	(void)state;
	q.cwd = strdup("/work dir");
	strv_push(&q.argv, "sh");
	strv_push(&q.argv, "-c");
	strv_push(&q.argv, "");
	strv_push(&q.env, "A=1");
	strv_push(&q.env, "EMPTY=");
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.kind, SESSION_EXEC);
	assert_int_equal(d.timeout_ms, 1500);
	assert_string_equal(d.cwd, "/work dir");
	assert_int_equal(d.argv.n, 3);
	assert_string_equal(d.argv.v[2], "");
	assert_null(d.argv.v[3]); /* ready for exec */
	assert_int_equal(d.env.n, 2);
	assert_string_equal(d.env.v[1], "EMPTY=");
	session_request_free(&d);
	/* every truncation is refused, never read past */
	for (size_t n = 0; n < len; n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		assert_int_equal(session_request_decode(cut, n, &d, &e), -1);
		free(cut);
	}
	free(buf);
	session_request_free(&q);
}

static void test_malformed(void **state)
{
	struct session_request q = {.kind = SESSION_EXEC}, d;
	struct ab_err e = {0};
	char *buf, *longer;
	size_t len;

	(void)state;
	strv_push(&q.argv, "true");
	encode(&q, &buf, &len);
	/* trailing bytes */
	longer = malloc(len + 2);
	memcpy(longer, buf, len);
	memcpy(longer + len, "x", 2);
	assert_int_equal(session_request_decode(longer, len + 2, &d, &e), -1);
	free(longer);
	/* a wrong magic */
	buf[0] ^= 1;
	assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
	buf[0] ^= 1;
	/* a missing terminator */
	buf[len - 1] = 'x';
	assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
	free(buf);
	session_request_free(&q);

	/* an exec without a command; an env entry that is not NAME=VALUE; a stop with argv; a
	 * signal out of range */
	struct session_request bad[4] = {{.kind = SESSION_EXEC},
					 {.kind = SESSION_EXEC},
					 {.kind = SESSION_STOP},
					 {.kind = SESSION_SIGNAL, .signo = 99}};
	strv_push(&bad[1].argv, "true");
	strv_push(&bad[1].env, "=x");
	strv_push(&bad[2].argv, "true");
	for (int i = 0; i < 4; i++) {
		encode(&bad[i], &buf, &len);
		assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
		free(buf);
		session_request_free(&bad[i]);
	}
}

/* A port request carries its port in the header's value, and nothing else; ports outside 1 to
 * 65535 and strings with it are refused. */
static void test_port(void **state)
{
	struct session_request q = {.kind = SESSION_PORT, .port = 8000}, d;
	struct ab_err e = {0};
	char *buf;
	size_t len;

	(void)state;
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.kind, SESSION_PORT);
	assert_int_equal(d.port, 8000);
	assert_int_equal(d.signo, 0);
	free(buf);
	session_request_free(&d);
	q = (struct session_request){.kind = SESSION_PORT_CLOSE, .port = 65535};
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.kind, SESSION_PORT_CLOSE);
	assert_int_equal(d.port, 65535);
	free(buf);
	session_request_free(&d);

	struct session_request bad[4] = {{.kind = SESSION_PORT, .port = 0},
					 {.kind = SESSION_PORT, .port = 65536},
					 {.kind = SESSION_PORT_CLOSE, .port = 0x80000001u},
					 {.kind = SESSION_PORT, .port = 80}};
	strv_push(&bad[3].argv, "x");
	for (int i = 0; i < 4; i++) {
		encode(&bad[i], &buf, &len);
		assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
		free(buf);
		session_request_free(&bad[i]);
	}
	/* a kind past the last is unknown */
	q = (struct session_request){.kind = SESSION_ANSWER + 1};
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
	free(buf);
}

/* A change of the rules carries its op in the header's value and its rule as the one string;
 * an answer its question and one of the three words; the subscription nothing. Anything else
 * is refused. */
static void test_policy_and_answer(void **state)
{
	struct session_request q = {.kind = SESSION_POLICY, .op = 3}, d;
	struct ab_err e = {0};
	char *buf;
	size_t len;

	(void)state;
	strv_push(&q.argv, "GET api.example/v1/**");
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.kind, SESSION_POLICY);
	assert_int_equal(d.op, 3);
	assert_string_equal(d.argv.v[0], "GET api.example/v1/**");
	free(buf);
	session_request_free(&d);
	session_request_free(&q);
	q = (struct session_request){.kind = SESSION_ANSWER, .question = 7};
	strv_push(&q.argv, "run");
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.question, 7);
	assert_string_equal(d.argv.v[0], "run");
	free(buf);
	session_request_free(&d);
	session_request_free(&q);
	q = (struct session_request){.kind = SESSION_ASK};
	encode(&q, &buf, &len);
	assert_int_equal(session_request_decode(buf, len, &d, &e), 0);
	assert_int_equal(d.kind, SESSION_ASK);
	free(buf);

	/* an unknown op, op 0, no rule, two rules, an empty rule; an answer of another word, to
	 * question 0, with no word; a subscription with a string */
	struct session_request bad[9] = {{.kind = SESSION_POLICY, .op = 5},
					 {.kind = SESSION_POLICY, .op = 0},
					 {.kind = SESSION_POLICY, .op = 1},
					 {.kind = SESSION_POLICY, .op = 2},
					 {.kind = SESSION_POLICY, .op = 1},
					 {.kind = SESSION_ANSWER, .question = 1},
					 {.kind = SESSION_ANSWER, .question = 0},
					 {.kind = SESSION_ANSWER, .question = 1},
					 {.kind = SESSION_ASK}};
	strv_push(&bad[0].argv, "a.example");
	strv_push(&bad[1].argv, "a.example");
	strv_push(&bad[3].argv, "a.example");
	strv_push(&bad[3].argv, "b.example");
	strv_push(&bad[4].argv, "");
	strv_push(&bad[5].argv, "yes");
	strv_push(&bad[6].argv, "once");
	strv_push(&bad[8].argv, "once");
	for (int i = 0; i < 9; i++) {
		encode(&bad[i], &buf, &len);
		assert_int_equal(session_request_decode(buf, len, &d, &e), -1);
		free(buf);
		session_request_free(&bad[i]);
	}
}

static void test_size_limit(void **state)
{
	struct session_request q = {.kind = SESSION_EXEC};
	struct ab_err e = {0};
	char *big = malloc(SESSION_MAX_REQUEST), *buf = NULL;
	size_t len;

	(void)state;
	memset(big, 'a', SESSION_MAX_REQUEST - 1);
	big[SESSION_MAX_REQUEST - 1] = '\0';
	strv_push(&q.argv, big);
	assert_int_equal(session_request_encode(&q, &buf, &len, &e), -1);
	assert_null(buf);
	free(big);
	session_request_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_port),
	    cmocka_unit_test(test_policy_and_answer),
	    cmocka_unit_test(test_size_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
