/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for ca_refusals.c: the hosts whose clients refused the run's certificate, said one
 * line a host (with its connections and the fix), at most CA_REFUSALS_LINES and then how many
 * more, per exec in a session, each said once; bounded however many hosts come. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ca_refusals.h"
#include "strv.h"

static void collect(void *ctx, const char *line)
{
	assert_int_equal(strv_push(ctx, line), 0);
}

/* One line a host: an alert makes it a refusal, hang-ups alone a likely one. */
static void test_one_line_a_host(void **state)
{
	struct ca_refusals r = {0};
	struct strv lines = {0};
	(void)state;

	ca_refusals_note(&r, "origin.test", -2, true);
	ca_refusals_note(&r, "other.test", -2, true);
	ca_refusals_note(&r, "origin.test", -2, false);
	ca_refusals_note(&r, "origin.test", -2, true);
	ca_refusals_say(&r, -2, collect, &lines);
	assert_int_equal(lines.n, 2);
	assert_string_equal(
	    lines.v[0], "origin.test: a client refused the run's certificate on 3 connections "
			"(its TLS alert said so: it pins a key or trusts CAs of its own); fix: "
			"have it trust /run/agentbox/ca.crt, or allow origin.test without [http] "
			"rules or a credential for it, so that it is not intercepted");
	assert_string_equal(
	    lines.v[1], "other.test: a client likely refused the run's certificate on 1 "
			"connection (it hung up after the handshake, asking nothing: it pins a "
			"key or trusts CAs of its own); fix: have it trust /run/agentbox/ca.crt, "
			"or allow other.test without [http] rules or a credential for it, so that "
			"it is not intercepted");
	strv_free(&lines);
	/* said once */
	ca_refusals_say(&r, -2, collect, &lines);
	assert_int_equal(lines.n, 0);
	ca_refusals_free(&r);
}

static void test_bounded_lines(void **state)
{
	struct ca_refusals r = {0};
	struct strv lines = {0};
	char host[32];
	(void)state;

	for (int i = 0; i < CA_REFUSALS_LINES + 3; i++) {
		snprintf(host, sizeof(host), "h%d.test", i);
		ca_refusals_note(&r, host, -2, true);
	}
	ca_refusals_say(&r, -2, collect, &lines);
	assert_int_equal(lines.n, CA_REFUSALS_LINES + 1);
	assert_string_equal(
	    lines.v[CA_REFUSALS_LINES],
	    "and 3 more hosts whose clients refused the run's certificate (the audit "
	    "trail's net events name them)");
	strv_free(&lines);
	ca_refusals_free(&r);
}

/* A session: each exec's own hosts when it ends, the others' kept for theirs. */
static void test_per_exec(void **state)
{
	struct ca_refusals r = {0};
	struct strv lines = {0};
	(void)state;

	ca_refusals_note(&r, "a.test", 1, true);
	ca_refusals_note(&r, "b.test", 2, true);
	ca_refusals_note(&r, "a.test", 2, true);
	ca_refusals_say(&r, 2, collect, &lines);
	assert_int_equal(lines.n, 2);
	assert_non_null(strstr(lines.v[0], "b.test: "));
	assert_non_null(strstr(lines.v[1], "a.test: "));
	strv_free(&lines);
	ca_refusals_say(&r, 3, collect, &lines);
	assert_int_equal(lines.n, 0);
	ca_refusals_say(&r, 1, collect, &lines);
	assert_int_equal(lines.n, 1);
	assert_non_null(strstr(lines.v[0], "a.test: a client likely refused the run's certificate "
					   "on 1 connection "));
	strv_free(&lines);
	ca_refusals_free(&r);
}

/* Past CA_REFUSALS_MAX hosts none is kept: the last line says more came, not how many. */
static void test_capped(void **state)
{
	struct ca_refusals r = {0};
	struct strv lines = {0};
	char host[32];
	(void)state;

	for (int i = 0; i < CA_REFUSALS_MAX + 10; i++) {
		snprintf(host, sizeof(host), "h%d.test", i);
		ca_refusals_note(&r, host, -2, true);
	}
	assert_int_equal(r.n, CA_REFUSALS_MAX);
	ca_refusals_note(&r, "h0.test", -2, true); /* a host kept still counts */
	assert_int_equal(r.v[0].silent, 2);
	ca_refusals_say(&r, -2, collect, &lines);
	assert_int_equal(lines.n, CA_REFUSALS_LINES + 1);
	assert_string_equal(lines.v[CA_REFUSALS_LINES],
			    "and more hosts whose clients refused the run's certificate (the audit "
			    "trail's net events name them)");
	strv_free(&lines);
	ca_refusals_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_line_a_host),
	    cmocka_unit_test(test_bounded_lines),
	    cmocka_unit_test(test_per_exec),
	    cmocka_unit_test(test_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
