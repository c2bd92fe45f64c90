/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the audit trail's redactor (built-in patterns only) on arbitrary bytes.
 *
 * Checks the contract in redact.h: NULL for empty or NUL-embedded input and when nothing
 * matched; otherwise a NUL-free, NUL-terminated string that differs from the input and
 * contains the [REDACTED] marker. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_redact: check failed: %s (%s:%d)\n", #cond,          \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Built once: compiling the patterns dominates otherwise. Still reachable at exit, so
 * LeakSanitizer does not report it. */
static struct redactor *the_redactor;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	bool oom = true;
	char *out;

	if (!the_redactor) {
		struct ab_err e = {0};
		if (redactor_new(&the_redactor, NULL, &e) < 0) {
			fprintf(stderr, "fuzz_redact: redactor_new: %s\n", e.msg);
			abort();
		}
	}
	out = redact(the_redactor, s, size, &oom);
	CHECK(!oom);
	if (!out)
		return 0;
	/* something matched: only possible for non-empty input without a NUL */
	CHECK(size > 0 && !memchr(s, '\0', size));
	{
		size_t n = strlen(out);
		CHECK(n > 0);
		CHECK(strstr(out, REDACTED) != NULL);
		CHECK(n != size || memcmp(out, s, size) != 0);
	}
	free(out);
	return 0;
}
