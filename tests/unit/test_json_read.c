/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for json_read: the bounded JSON reader the MCP server parses its messages with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

static int parse(const char *text, struct jnode *n)
{
	struct ab_err e = {0};

	return json_read(text, strlen(text), n, &e);
}

static void refused(const char *text)
{
	struct jnode n;

	if (parse(text, &n) == 0) {
		jnode_free(&n);
		fail_msg("accepted: %s", text);
	}
}

static void test_message(void **state)
{
	const char *t =
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"run\",\"arguments\":{\"command\":[\"echo\",\"a b\"]}}}";
	const struct jnode *args, *cmd;
	struct jnode n;
	int64_t id;

	(void)state;
	assert_int_equal(parse(t, &n), 0);
	assert_int_equal(n.type, JNODE_OBJECT);
	assert_string_equal(jnode_str(&n, "jsonrpc"), "2.0");
	assert_true(jnode_int(jnode_get(&n, "id"), 0, 100, &id));
	assert_int_equal(id, 7);
	assert_false(jnode_int(jnode_get(&n, "id"), 0, 6, &id)); /* out of range */
	args = jnode_get(jnode_get(&n, "params"), "arguments");
	cmd = jnode_get(args, "command");
	assert_non_null(cmd);
	assert_int_equal(cmd->type, JNODE_ARRAY);
	assert_int_equal(cmd->n, 2);
	assert_string_equal(cmd->kids[1].str, "a b");
	assert_null(jnode_get(&n, "missing"));
	assert_null(jnode_str(&n, "id")); /* not a string */
	jnode_free(&n);
}

static void test_scalars(void **state)
{
	struct jnode n;
	double d;
	int64_t i;

	(void)state;
	assert_int_equal(parse(" [true, false, null, -0, 1.5e3, \"\"] ", &n), 0);
	assert_int_equal(n.n, 6);
	assert_true(n.kids[0].type == JNODE_BOOL && n.kids[0].b);
	assert_true(n.kids[1].type == JNODE_BOOL && !n.kids[1].b);
	assert_int_equal(n.kids[2].type, JNODE_NULL);
	assert_true(jnode_int(&n.kids[3], -1, 1, &i) && i == 0);
	assert_false(jnode_int(&n.kids[4], 0, 10000, &i)); /* an exponent is not an integer */
	assert_true(jnode_double(&n.kids[4], &d) && d == 1500.0);
	assert_int_equal(n.kids[5].len, 0);
	jnode_free(&n);
	assert_int_equal(parse("{}", &n), 0);
	assert_int_equal(n.n, 0);
	jnode_free(&n);
}

static void test_strings(void **state)
{
	struct jnode n;

	(void)state;
	assert_int_equal(parse("\"a\\n\\t\\\"\\\\\\/\\u00e9\\ud83d\\ude00\"", &n), 0);
	assert_string_equal(n.str, "a\n\t\"\\/\xc3\xa9\xf0\x9f\x98\x80");
	jnode_free(&n);
	/* a NUL inside: kept with its length, refused where a C string is wanted */
	assert_int_equal(parse("{\"k\":\"a\\u0000b\"}", &n), 0);
	assert_int_equal(jnode_get(&n, "k")->len, 3);
	assert_null(jnode_str(&n, "k"));
	jnode_free(&n);
}

static void test_refused(void **state)
{
	(void)state;
	refused("");
	refused("   ");
	refused("{");
	refused("[1,]");
	refused("{\"a\":1,}");
	refused("{\"a\" 1}");
	refused("{a:1}");
	refused("01");
	refused("1.");
	refused("-");
	refused("1e");
	refused("tru");
	refused("nul");
	refused("\"abc");
	refused("\"a\\x\"");
	refused("\"\\ud800\""); /* a lone high surrogate */
	refused("\"\\udc00\""); /* a lone low one */
	refused("\"\\u12g4\"");
	refused("\"tab\there\"");     /* a raw control character */
	refused("{} {}");	      /* text after the value */
	refused("{\"a\":1,\"a\":2}"); /* duplicate names */
	refused("// comment\n{}");
	refused("\"\\");
	refused("\"\xff\"");	     /* not UTF-8 */
	refused("\"\xc3\"");	     /* cut short */
	refused("\"\xc0\xaf\"");     /* overlong */
	refused("\"\xed\xa0\x80\""); /* a surrogate */
	refused("{\"\xb0r\":1}");
}

static void test_depth(void **state)
{
	char deep[2 * JSON_READ_MAX_DEPTH + 8];
	struct jnode n;
	size_t d;

	(void)state;
	for (d = 0; d < JSON_READ_MAX_DEPTH; d++)
		deep[d] = '[', deep[2 * JSON_READ_MAX_DEPTH - 1 - d] = ']';
	deep[2 * JSON_READ_MAX_DEPTH] = '\0';
	assert_int_equal(parse(deep, &n), 0);
	jnode_free(&n);
	/* one more level is refused, without recursing past the bound */
	memmove(deep + 1, deep, 2 * JSON_READ_MAX_DEPTH + 1);
	deep[0] = '[';
	strcat(deep, "]");
	refused(deep);
}

static void test_members_cap(void **state)
{
	size_t n = JSON_READ_MAX_MEMBERS + 1, off = 1;
	char *t = malloc(n * 16 + 4);
	struct jnode j;

	(void)state;
	assert_non_null(t);
	t[0] = '{';
	for (size_t i = 0; i < n; i++)
		off += (size_t)sprintf(t + off, "%s\"k%zu\":1", i ? "," : "", i);
	strcpy(t + off, "}");
	refused(t);
	/* at the cap it is fine */
	off = (size_t)(strrchr(t, ',') - t);
	strcpy(t + off, "}");
	assert_int_equal(parse(t, &j), 0);
	assert_int_equal(j.n, JSON_READ_MAX_MEMBERS);
	jnode_free(&j);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_message), cmocka_unit_test(test_scalars),
	    cmocka_unit_test(test_strings), cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_depth),   cmocka_unit_test(test_members_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
