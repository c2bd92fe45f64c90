/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for trust_anchors.c: the certificates a run adds to its trust files are taken from
 * a file's certificate blocks only (anything else in it stays out of the sandbox), each once
 * with its newline, within the size cap; and the files the command's trust variables name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trust_anchors.h"

#define CERT_A "-----BEGIN CERTIFICATE-----\nQUFB\n-----END CERTIFICATE-----"
#define CERT_B "-----BEGIN CERTIFICATE-----\nQkJC\n-----END CERTIFICATE-----"
#define KEY "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n"

static void test_certificates_only(void **state)
{
	struct trust_extra x = {0};
	struct ab_err e = {0};
	const char *pem = "junk before\n" CERT_A "\n" KEY "text between\n" CERT_B "trailing";
	(void)state;

	assert_int_equal(trust_extra_add(&x, pem, strlen(pem), &e), 0);
	assert_int_equal(x.len, strlen(CERT_A "\n" CERT_B "\n"));
	assert_memory_equal(x.pem, CERT_A "\n" CERT_B "\n", x.len);
	trust_extra_free(&x);

	/* nothing that is a certificate block: nothing added, no error */
	assert_int_equal(trust_extra_add(&x, KEY, strlen(KEY), &e), 0);
	assert_int_equal(x.len, 0);
	trust_extra_free(&x);
}

/* A BEGIN CERTIFICATE line whose block holds another armour line (a key pasted inside, or a
 * block never closed) brings nothing of what follows it but a well-formed block. */
static void test_malformed_block(void **state)
{
	struct trust_extra x = {0};
	struct ab_err e = {0};
	const char *pem = "-----BEGIN CERTIFICATE-----\n" KEY "-----END CERTIFICATE-----\n" CERT_B;
	(void)state;

	assert_int_equal(trust_extra_add(&x, pem, strlen(pem), &e), 0);
	assert_int_equal(x.len, strlen(CERT_B "\n"));
	assert_memory_equal(x.pem, CERT_B "\n", x.len);
	assert_null(memmem(x.pem, x.len, "PRIVATE", 7));
	trust_extra_free(&x);
}

static void test_size_cap(void **state)
{
	struct trust_extra x = {0};
	struct ab_err e = {0};
	size_t one = strlen(CERT_A "\n"), n = TRUST_EXTRA_MAX / one + 1;
	char *many = malloc(n * one + 1);
	(void)state;

	assert_non_null(many);
	for (size_t i = 0; i < n; i++)
		memcpy(many + i * one, CERT_A "\n", one);
	assert_int_equal(trust_extra_add(&x, many, n * one, &e), -1);
	assert_non_null(strstr(e.msg, "bytes of certificates"));
	assert_true(x.len <= TRUST_EXTRA_MAX);
	trust_extra_free(&x);
	free(many);
}

/* The variables' files: absolute paths, each once; relative or unset ones name nothing. */
static void test_user_files(void **state)
{
	struct env_result env = {0};
	struct strv files = {0};
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(strv_push(&env.vars, "SSL_CERT_FILE=/etc/mine.pem"), 0);
	assert_int_equal(strv_push(&env.vars, "REQUESTS_CA_BUNDLE=/etc/mine.pem"), 0);
	assert_int_equal(strv_push(&env.vars, "CURL_CA_BUNDLE=relative.pem"), 0);
	assert_int_equal(strv_push(&env.vars, "NODE_EXTRA_CA_CERTS=/opt/corp-ca.pem"), 0);
	assert_int_equal(strv_push(&env.vars, "SSL_CERT_FILEX=/not/a/trust/var"), 0);
	assert_int_equal(trust_user_anchor_files(&env, &files, &e), 0);
	assert_int_equal(files.n, 2);
	assert_string_equal(files.v[0], "/etc/mine.pem");
	assert_string_equal(files.v[1], "/opt/corp-ca.pem");
	strv_free(&files);
	env_result_free(&env);
}

/* Names in fixed-size arrays: one as long as its array would lose its NUL, silently. */
static void test_bundle_vars_end(void **state)
{
	size_t i;
	(void)state;

	for (i = 0; i < 100 && trust_bundle_vars[i][0]; i++)
		assert_non_null(memchr(trust_bundle_vars[i], '\0', TRUST_VAR_NAME_SIZE));
	assert_true(i > 0 && i < 100); /* "" ends the list */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bundle_vars_end), cmocka_unit_test(test_certificates_only),
	    cmocka_unit_test(test_malformed_block), cmocka_unit_test(test_size_cap),
	    cmocka_unit_test(test_user_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
