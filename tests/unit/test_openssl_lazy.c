/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for egress/openssl_lazy.c, linked as the agentbox binary links it (the same
 * --wrap options, OpenSSL static): OpenSSL's error strings are not loaded when a thread first
 * queues an error, and are when agentbox first renders a reason (tls_error_reason). Nothing is
 * deferred in a test program (defer_relocs fills the table of the agentbox binary only), so
 * the relocation entry point only has to exist and be callable. The order of the cases
 * matters: the strings, once loaded, stay for the process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "openssl_lazy.h"
#include "tls_ca.h"

static void test_relocate_linked(void **state)
{
	(void)state;
	assert_non_null(openssl_lazy_relocate);
	tls_ca_relocate();
	tls_ca_relocate(); /* once only, however often asked */
}

static void test_strings_when_rendered(void **state)
{
	struct ab_err e = {0};
	unsigned long err;
	char buf[256];

	(void)state;
	assert_int_equal(tls_ca_openssl_init(&e), 0);
	ERR_raise(ERR_LIB_X509, X509_R_CERT_ALREADY_IN_HASH_TABLE);
	err = ERR_peek_last_error();
	assert_int_equal(ERR_GET_REASON(err), X509_R_CERT_ALREADY_IN_HASH_TABLE);
	/* the thread's error queue exists, and its request for the strings was dropped */
	assert_null(ERR_reason_error_string(err));
	assert_string_equal(tls_error_reason(buf, sizeof(buf), "none"),
			    "error:05800065:x509 certificate routines::cert already in hash table");
	assert_int_equal(ERR_peek_error(), 0);
	/* and libssl's, asked for at the same time */
	ERR_raise(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED);
	assert_non_null(ERR_reason_error_string(ERR_peek_last_error()));
	assert_non_null(strstr(tls_error_reason(buf, sizeof(buf), "none"),
			       "SSL routines::certificate verify failed"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relocate_linked),
	    cmocka_unit_test(test_strings_when_rendered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
