/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: credential brokering's substitution and leak scan (credential.h) on
 * arbitrary request heads and bodies.
 *
 * The first byte chooses which of two credentials are bound and how api is sent (header,
 * Basic, query); the rest is a request head, then scanned as a body cut at a point the second
 * byte chooses. Checks: a head that passes holds no placeholder as written, and is unchanged
 * when nothing is bound; a placeholder as written in the input is found by the scan, whole and
 * in two reads; a redacted response holds no real value. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credential.h"
#include "../unit/cred_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_credential: check failed: %s (%s:%d)\n", #cond,      \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define PH0 "sk-AAAA"
#define PH1 "gh_BBBB"
#define V0 "v0:secret"
#define V1 "v1"

static struct policy *make_policy(int place)
{
	struct policy_vars v = {"/h", "/", "u", "1", "/tmp"};
	struct policy *p = policy_new(&v);

	p->n_creds = 2;
	p->creds = calloc(2, sizeof(*p->creds));
	p->creds[0].name = strdup("api");
	cred_fixture(&p->creds[0], "env:X", "api.test", NULL);
	p->creds[0].place = place == 0	 ? CRED_PLACE_HEADER
			    : place == 1 ? CRED_PLACE_BASIC
					 : CRED_PLACE_QUERY;
	p->creds[0].header_name = strdup(place == 2 ? "x" : "Authorization");
	p->creds[0].template = strdup(place == 0 ? "Bearer {}" : place == 1 ? "u:{}" : "key");
	p->creds[0].add = place != 2;
	p->creds[0].length = 30;
	p->creds[1].name = strdup("gh");
	cred_fixture(&p->creds[1], "env:Y", "gh.test", NULL);
	p->creds[1].place = CRED_PLACE_HEADER;
	p->creds[1].header_name = strdup("X-Token");
	p->creds[1].template = strdup("{}");
	p->creds[1].length = 30;
	return p;
}

static struct creds *cs_for[3];
static struct policy *p_for[3];

static struct creds *get(int place)
{
	struct ab_err e = {0};

	if (cs_for[place])
		return cs_for[place];
	p_for[place] = make_policy(place);
	CHECK(creds_new(p_for[place], &cs_for[place], &e) == 0);
	CHECK(creds_set_placeholder(&cs_for[place]->v[0], PH0) == 0);
	CHECK(creds_set_placeholder(&cs_for[place]->v[1], PH1) == 0);
	cs_for[place]->window = 9 * 2 * 8;
	CHECK(creds_set_value(&cs_for[place]->v[0], V0, strlen(V0)) == 0);
	CHECK(creds_set_value(&cs_for[place]->v[1], V1, strlen(V1)) == 0);
	return cs_for[place];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct creds *cs;
	bool bound[2];
	struct cred_result r;
	struct creds_stream st = {0};
	const char *in;
	char *out = NULL;
	size_t n, out_n = 0, cut;
	bool oom, raw;
	int rc, whole, a;
	uint32_t found;

	if (size < 2)
		return 0;
	cs = get(data[0] % 3);
	bound[0] = data[0] & 4;
	bound[1] = data[0] & 8;
	cut = data[1];
	in = (const char *)data + 2;
	n = size - 2;
	rc = creds_request(cs, bound, in, n, &out, &out_n, &r);
	CHECK(rc >= -1 && rc <= 1);
	if (rc == 0) {
		CHECK(out != NULL);
		CHECK(!memmem(out, out_n, PH0, strlen(PH0)) &&
		      !memmem(out, out_n, PH1, strlen(PH1)));
		if (!bound[0] && !bound[1])
			CHECK(out_n == n && !memcmp(out, in, n));
	} else {
		CHECK(out == NULL);
		CHECK(rc < 0 || (r.leak >= 0 && r.leak < 2 && r.where));
	}
	free(out);
	raw = memmem(in, n, PH0, strlen(PH0)) || memmem(in, n, PH1, strlen(PH1));
	whole = creds_scan(cs, in, n, false);
	if (raw)
		CHECK(whole >= 0);
	if (cut > n)
		cut = n;
	a = creds_scan_stream(cs, &st, in, cut);
	if (a == CRED_NONE)
		a = creds_scan_stream(cs, &st, in + cut, n - cut);
	creds_stream_free(&st);
	if (raw)
		CHECK(a >= 0);
	out = creds_redact(cs, in, n, &out_n, &found, &oom);
	if (out) {
		CHECK(!memmem(out, out_n, V0, strlen(V0)));
		free(out);
	}
	return 0;
}
