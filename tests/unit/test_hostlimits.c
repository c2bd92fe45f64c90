/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the per-host egress limits: each limit counted for its host only, the token
 * bucket refilling with time, byte budgets, and the bounded table (idle entries given to new
 * hosts, a new host refused when every entry holds state). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hostlimits.h"

static struct hostlimits table(uint64_t conns, uint64_t rate, uint64_t out, uint64_t in, size_t cap)
{
	struct hostlimits t;
	const struct hostlimits_conf c = {conns, rate, out, in};

	assert_true(hostlimits_enabled(&c));
	assert_int_equal(hostlimits_init(&t, &c, cap), 0);
	return t;
}

/* check + take: what the proxy does for an admitted connection. */
static struct host_entry *admit(struct hostlimits *t, const char *name, uint64_t now)
{
	struct host_entry *h;

	assert_int_equal(hostlimits_check(t, name, now, &h), HOST_OK);
	assert_non_null(h);
	assert_string_equal(h->name, name);
	hostlimits_take(t, h);
	return h;
}

static void test_disabled(void **state)
{
	const struct hostlimits_conf none = {0};

	(void)state;
	assert_false(hostlimits_enabled(&none));
}

static void test_connections_per_host(void **state)
{
	struct hostlimits t = table(2, 0, 0, 0, 16);
	struct host_entry *a1, *a2, *h;

	(void)state;
	a1 = admit(&t, "a.example", 0);
	a2 = admit(&t, "a.example", 0);
	assert_ptr_equal(a1, a2);
	assert_int_equal(hostlimits_check(&t, "a.example", 0, &h), HOST_CONNECTIONS);
	/* another host has its own count */
	admit(&t, "b.example", 0);
	admit(&t, "b.example", 0);
	/* one closes: room for one more */
	hostlimits_release(a1);
	admit(&t, "a.example", 0);
	assert_int_equal(hostlimits_check(&t, "a.example", 0, &h), HOST_CONNECTIONS);
	assert_string_equal(host_verdict_key(HOST_CONNECTIONS), "max-connections-per-host");
	hostlimits_free(&t);
}

static void test_rate_per_host(void **state)
{
	struct hostlimits t = table(0, 2, 0, 0, 16);
	struct host_entry *h;

	(void)state;
	admit(&t, "a.example", 1000);
	admit(&t, "a.example", 1000);
	assert_int_equal(hostlimits_check(&t, "a.example", 1000, &h), HOST_RATE);
	/* the refusal took no token, and another host has its own bucket */
	admit(&t, "b.example", 1000);
	/* 2 per second: one token back after 500 ms, not before */
	assert_int_equal(hostlimits_check(&t, "a.example", 1400, &h), HOST_RATE);
	admit(&t, "a.example", 1500);
	assert_int_equal(hostlimits_check(&t, "a.example", 1500, &h), HOST_RATE);
	/* the bucket holds at most `rate` tokens, however long it was left */
	admit(&t, "a.example", 100000);
	admit(&t, "a.example", 100000);
	assert_int_equal(hostlimits_check(&t, "a.example", 100000, &h), HOST_RATE);
	hostlimits_free(&t);
}

static void test_bytes_per_host(void **state)
{
	struct hostlimits t = table(0, 0, 100, 1000, 16);
	struct host_entry *a, *b, *h;

	(void)state;
	a = admit(&t, "a.example", 0);
	b = admit(&t, "b.example", 0);
	assert_true(hostlimits_count(&t, a, true, 60));
	assert_true(hostlimits_count(&t, a, true, 40)); /* exactly the budget */
	assert_false(hostlimits_count(&t, a, true, 1));
	assert_true(hostlimits_count(&t, b, true, 100)); /* b's budget is its own */
	assert_true(hostlimits_count(&t, a, false, 1000));
	assert_false(hostlimits_count(&t, a, false, 1));
	/* a spent budget refuses new connections to that host at once */
	hostlimits_release(a);
	assert_int_equal(hostlimits_check(&t, "a.example", 0, &h), HOST_BYTES_OUT);
	assert_int_equal(hostlimits_check(&t, "b.example", 0, &h), HOST_BYTES_OUT);
	assert_int_equal(hostlimits_check(&t, "c.example", 0, &h), HOST_OK);
	hostlimits_free(&t);
}

static void test_table_full_fails_closed(void **state)
{
	struct hostlimits t = table(4, 0, 0, 0, 3);
	struct host_entry *a, *h;
	char name[32];

	(void)state;
	a = admit(&t, "a.example", 0);
	admit(&t, "b.example", 0);
	admit(&t, "c.example", 0);
	/* every entry holds an open connection: a fourth host is refused, known ones are not */
	assert_int_equal(hostlimits_check(&t, "d.example", 0, &h), HOST_TABLE_FULL);
	assert_null(h);
	admit(&t, "a.example", 0);
	/* a's connections close: its entry is idle and goes to the new host */
	hostlimits_release(a);
	hostlimits_release(a);
	admit(&t, "d.example", 0);
	assert_int_equal(t.n, 3);
	/* a is new again (its count started over), and the table is full once more */
	assert_int_equal(hostlimits_check(&t, "a.example", 0, &h), HOST_TABLE_FULL);
	/* the other entries are still found through their buckets */
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%c.example", "bcd"[i]);
		assert_int_equal(hostlimits_check(&t, name, 0, &h), HOST_OK);
		assert_string_equal(h->name, name);
		assert_int_equal(h->open, 1);
	}
	hostlimits_free(&t);
}

/* An entry that remembers bytes or a partly empty bucket is not idle: taking it back would reset
 * that host's budget. */
static void test_state_is_kept(void **state)
{
	struct hostlimits t = table(0, 1, 10, 0, 1);
	struct host_entry *a, *h;

	(void)state;
	a = admit(&t, "a.example", 0);
	hostlimits_release(a);
	/* the bucket is empty for a second */
	assert_int_equal(hostlimits_check(&t, "b.example", 500, &h), HOST_TABLE_FULL);
	/* full again: idle, taken back */
	admit(&t, "b.example", 1000);
	assert_true(hostlimits_count(&t, t.entries, true, 1));
	hostlimits_release(&t.entries[0]);
	/* b has sent a byte: kept for the run */
	assert_int_equal(hostlimits_check(&t, "c.example", 999999, &h), HOST_TABLE_FULL);
	hostlimits_free(&t);
}

/* Many hosts in a table of the real size: every one found again, the next refused. */
static void test_many_hosts(void **state)
{
	struct hostlimits t = table(1, 0, 0, 0, HOSTLIMITS_MAX_HOSTS);
	struct host_entry *h;
	char name[64];

	(void)state;
	for (int i = 0; i < HOSTLIMITS_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "h%d.example", i);
		admit(&t, name, 0);
	}
	for (int i = 0; i < HOSTLIMITS_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "h%d.example", i);
		assert_int_equal(hostlimits_check(&t, name, 0, &h), HOST_CONNECTIONS);
	}
	assert_int_equal(hostlimits_check(&t, "one-more.example", 0, &h), HOST_TABLE_FULL);
	hostlimits_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_disabled),
	    cmocka_unit_test(test_connections_per_host),
	    cmocka_unit_test(test_rate_per_host),
	    cmocka_unit_test(test_bytes_per_host),
	    cmocka_unit_test(test_table_full_fails_closed),
	    cmocka_unit_test(test_state_is_kept),
	    cmocka_unit_test(test_many_hosts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
