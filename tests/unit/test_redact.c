/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Redaction: each built-in secret shape, URL parts, header values, profile patterns, and
 * secrets that overlap other rules' matches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"

static struct redactor *with(const char *pattern)
{
	struct strv extra = {0};
	struct redactor *r;
	struct ab_err e;

	if (pattern)
		assert_int_equal(strv_push(&extra, pattern), 0);
	assert_int_equal(redactor_new(&r, pattern ? &extra : NULL, &e), 0);
	strv_free(&extra);
	return r;
}

/* in must become want; the secret must be gone. */
static void expect(const char *pattern, const char *in, const char *want, const char *secret)
{
	struct redactor *r = with(pattern);
	bool oom;
	char *out = redact(r, in, strlen(in), &oom);

	assert_false(oom);
	assert_non_null(out);
	assert_string_equal(out, want);
	if (secret)
		assert_null(strstr(out, secret));
	free(out);
	redactor_free(r);
}

static void test_url_credentials_and_query(void **state)
{
	(void)state;
	expect(NULL, "https://alice:hunter2@example.com/x", "https://[REDACTED]@example.com/x",
	       "hunter2");
	expect(NULL, "http://h/p?token=abc&page=2", "http://h/p?token=[REDACTED]&page=[REDACTED]",
	       "abc");
}

static void test_headers(void **state)
{
	(void)state;
	expect(NULL, "Authorization: Bearer xyz", "Authorization: [REDACTED]", "xyz");
	expect(NULL, "cookie: session=1", "cookie: [REDACTED]", "session=1");
	expect(NULL, "Proxy-Authorization: Basic Zm9v", "Proxy-Authorization: [REDACTED]", "Zm9v");
}

static void test_token_shapes(void **state)
{
	(void)state;
	expect(NULL, "key AKIAABCDEFGHIJKLMNOP end", "key [REDACTED] end", "AKIAABCD");
	expect(NULL, "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]", "ghp_");
	expect(NULL, "github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED]", "github_pat_");
	expect(NULL, "glpat-abcdefghij0123456789", "[REDACTED]", "glpat-");
	expect(NULL, "xoxb-1234567890-abcdef", "[REDACTED]", "xoxb-");
	expect(NULL, "OPENAI=sk-proj-abcdefghijklmnopqrstuv", "OPENAI=[REDACTED]", "sk-proj");
	expect(NULL, "-----BEGIN RSA PRIVATE KEY-----", "[REDACTED]", "PRIVATE KEY");
	expect(NULL, "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "t=[REDACTED]",
	       "eyJzdWIi");
}

static void test_profile_pattern(void **state)
{
	(void)state;
	expect("corp-[0-9]{6}", "id corp-123456 here", "id [REDACTED] here", "123456");
}

/* A rule's replacement must not break up another rule's secret (found by fuzzing review). */
static void test_overlapping_secrets(void **state)
{
	(void)state;
	expect(NULL, "sk-AKIAABCDEFGHIJKLMNOPqrstuvwxyz0123456789", "[REDACTED]", "qrstuv");
	expect(NULL, "https://u:AKIAABCDEFGHIJKLMNOP@h/", "https://[REDACTED]@h/", "AKIA");
}

static void test_nothing_to_redact(void **state)
{
	struct redactor *r = with(NULL);
	bool oom;
	(void)state;

	assert_null(redact(r, "plain text /usr/bin", 19, &oom));
	assert_false(oom);
	assert_null(redact(r, "a\0AKIAABCDEFGHIJKLMNOP", 22, &oom)); /* NUL: never logged */
	assert_null(redact(r, "", 0, &oom));
	redactor_free(r);
}

static void test_bad_pattern(void **state)
{
	struct ab_err e;
	(void)state;

	assert_int_equal(redact_pattern_check("([a-z", &e), -1);
	assert_non_null(strstr(e.msg, "bad redact pattern"));
	assert_int_equal(redact_pattern_check("ok-[0-9]+", &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url_credentials_and_query),
	    cmocka_unit_test(test_headers),
	    cmocka_unit_test(test_token_shapes),
	    cmocka_unit_test(test_profile_pattern),
	    cmocka_unit_test(test_overlapping_secrets),
	    cmocka_unit_test(test_nothing_to_redact),
	    cmocka_unit_test(test_bad_pattern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
