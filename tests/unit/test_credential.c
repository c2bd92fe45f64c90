/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Credential brokering's pure part: the placeholder's shape, the substitution in each place,
 * the leak scan (as written, percent-encoded, base64 at every alignment in both alphabets,
 * hex in either case; across the reads of a stream), a response head redacted, and the
 * [credential NAME] section's checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "credential.h"
#include "http_rules.h"
#include "json.h"
#include "policy.h"
#include "cred_fixture.h"
#include "redact.h"

#define PH "sk-PLACEHOLDERabcdefghij0123456789"
#define PH2 "ghp_OTHERplaceholderXYZ0123456789ab"
#define REAL "real-secret-VALUE/+=&42"

/* A policy with two credentials: api (header Authorization: Bearer {}, bound to api.test) and
 * gh (query key, bound to GET gh.test/repos/ and below). */
static struct policy *pol(enum cred_place place0)
{
	struct policy_vars v = {"/home/u", "/", "u", "1000", "/tmp"};
	struct policy *p = policy_new(&v);

	assert_non_null(p);
	p->n_creds = 2;
	p->creds = calloc(2, sizeof(*p->creds));
	p->creds[0].name = strdup("api");
	cred_fixture(&p->creds[0], "env:X", "api.test", NULL);
	p->creds[0].place = place0;
	p->creds[0].header_name = strdup(place0 == CRED_PLACE_BASIC    ? "Authorization"
					 : place0 == CRED_PLACE_HEADER ? "Authorization"
								       : "x");
	p->creds[0].template = strdup(place0 == CRED_PLACE_BASIC    ? "user:{}"
				      : place0 == CRED_PLACE_HEADER ? "Bearer {}"
								    : "key");
	p->creds[0].prefix = strdup("sk-");
	p->creds[0].length = 43;
	p->creds[1].name = strdup("gh");
	cred_fixture(&p->creds[1], "env:Y", "gh.test", "GET gh.test/repos/**");
	p->creds[1].place = CRED_PLACE_QUERY;
	p->creds[1].template = strdup("key");
	p->creds[1].length = 40;
	return p;
}

static struct creds *mk(struct policy *p)
{
	struct creds *cs;
	struct ab_err e = {0};

	assert_int_equal(creds_new(p, &cs, &e), 0);
	assert_non_null(cs);
	return cs;
}

/* fixed placeholders and values */
static struct creds *fixed(struct policy *p)
{
	struct creds *cs = mk(p);

	assert_int_equal(creds_set_placeholder(&cs->v[0], PH), 0);
	assert_int_equal(creds_set_placeholder(&cs->v[1], PH2), 0);
	cs->window = 9 * 2 * strlen(PH2);
	assert_int_equal(creds_set_value(&cs->v[0], REAL, strlen(REAL)), 0);
	assert_int_equal(creds_set_value(&cs->v[1], "ghvalue", 7), 0);
	return cs;
}

static void test_placeholder_shape(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *a = mk(p), *b = mk(p);

	(void)state;
	assert_int_equal(a->v[0].ph_len, 43);
	assert_memory_equal(a->v[0].ph, "sk-", 3);
	for (size_t i = 3; i < a->v[0].ph_len; i++)
		assert_true((a->v[0].ph[i] >= '0' && a->v[0].ph[i] <= '9') ||
			    (a->v[0].ph[i] >= 'a' && a->v[0].ph[i] <= 'z') ||
			    (a->v[0].ph[i] >= 'A' && a->v[0].ph[i] <= 'Z'));
	assert_int_equal(a->v[1].ph_len, 40);
	/* random per run */
	assert_string_not_equal(a->v[0].ph, b->v[0].ph);
	assert_string_not_equal(a->v[1].ph, b->v[1].ph);
	creds_free(a);
	creds_free(b);
	policy_free(p);
}

static int scan(struct creds *cs, const char *s)
{
	return creds_scan(cs, s, strlen(s), false);
}

static void b64(const char *in, size_t n, char *out, bool url)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)in[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)in[i + 2];
		out[o++] = a[v >> 18 & 63];
		out[o++] = a[v >> 12 & 63];
		out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[o] = '\0';
	for (size_t i = 0; url && i < o; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
}

static void test_scan_forms(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs = fixed(p);
	char buf[1024], enc[512];

	(void)state;
	assert_int_equal(scan(cs, "nothing here"), CRED_NONE);
	assert_int_equal(scan(cs, "x=" PH "&y"), 0);
	assert_int_equal(scan(cs, "x=" PH2), 1);
	/* percent-encoded: every character, and twice */
	strcpy(buf, "q=");
	for (const char *c = PH; *c; c++)
		sprintf(buf + strlen(buf), "%%%02X", (unsigned char)*c);
	assert_int_equal(scan(cs, buf), 0);
	strcpy(buf, "q=");
	for (const char *c = PH; *c; c++)
		sprintf(buf + strlen(buf), "%%25%02x", (unsigned char)*c);
	assert_int_equal(scan(cs, buf), 0);
	/* base64 after 0, 1, 2 other bytes, both alphabets, inside other text */
	for (int url = 0; url < 2; url++)
		for (int pad = 0; pad < 3; pad++) {
			char in[128];
			snprintf(in, sizeof(in), "%.*s%s tail", pad, "xy", PH);
			b64(in, strlen(in), enc, url);
			snprintf(buf, sizeof(buf), "data:%s;", enc);
			assert_int_equal(scan(cs, buf), 0);
		}
	/* hex, lower and upper */
	buf[0] = '\0';
	for (const char *c = PH; *c; c++)
		sprintf(buf + strlen(buf), "%02x", (unsigned char)*c);
	assert_int_equal(scan(cs, buf), 0);
	for (char *c = buf; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 32);
	assert_int_equal(scan(cs, buf), 0);
	/* a host name: compared ignoring case */
	snprintf(buf, sizeof(buf), "%s.example.test", PH);
	for (char *c = buf; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c + 32);
	assert_int_equal(creds_scan(cs, buf, strlen(buf), false), CRED_NONE);
	assert_int_equal(creds_scan(cs, buf, strlen(buf), true), 0);
	/* a part of it is not it */
	assert_int_equal(scan(cs, "sk-PLACEHOLDERabcdefghij012345678"), CRED_NONE);
	creds_free(cs);
	policy_free(p);
}

static void test_scan_stream(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs = fixed(p);
	char whole[2048], enc[512];
	size_t n;

	(void)state;
	/* each split point of a body holding the placeholder as written, then base64-encoded */
	for (int form = 0; form < 2; form++) {
		if (form == 0)
			snprintf(whole, sizeof(whole), "{\"a\":\"%s\"}", PH);
		else
			b64("zz" PH, strlen("zz" PH), enc, false),
			    snprintf(whole, sizeof(whole), "payload=%s", enc);
		n = strlen(whole);
		for (size_t cut = 0; cut <= n; cut++) {
			struct creds_stream st = {0};
			int a = creds_scan_stream(cs, &st, whole, cut);
			int b =
			    a == CRED_NONE ? creds_scan_stream(cs, &st, whole + cut, n - cut) : a;
			assert_int_equal(b, 0);
			creds_stream_free(&st);
		}
	}
	/* one byte at a time */
	{
		struct creds_stream st = {0};
		int got = CRED_NONE;
		snprintf(whole, sizeof(whole), "x=%s", PH);
		for (size_t i = 0; i < strlen(whole) && got == CRED_NONE; i++)
			got = creds_scan_stream(cs, &st, whole + i, 1);
		assert_int_equal(got, 0);
		creds_stream_free(&st);
	}
	creds_free(cs);
	policy_free(p);
}

static int request(struct creds *cs, bool b0, bool b1, const char *head, char **out,
		   struct cred_result *r)
{
	bool bound[2] = {b0, b1};
	size_t n;

	return creds_request(cs, bound, head, strlen(head), out, &n, r);
}

static void test_substitute_header(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs = fixed(p);
	struct cred_result r;
	char *out;

	(void)state;
	assert_int_equal(
	    request(cs, true, false,
		    "POST /v1/chat HTTP/1.1\r\nHost: api.test\r\nauthorization: Bearer " PH
		    "\r\nContent-Length: 2\r\n\r\n",
		    &out, &r),
	    0);
	assert_string_equal(
	    out, "POST /v1/chat HTTP/1.1\r\nHost: api.test\r\nauthorization: Bearer " REAL
		 "\r\nContent-Length: 2\r\n\r\n");
	assert_int_equal(r.used, 1);
	assert_int_equal(r.added, 0);
	free(out);
	/* not bound (another host): the same header is a leak */
	assert_int_equal(request(cs, false, false,
				 "GET / HTTP/1.1\r\nAuthorization: Bearer " PH "\r\n\r\n", &out,
				 &r),
			 1);
	assert_null(out);
	assert_int_equal(r.leak, 0);
	assert_string_equal(r.where, "header Authorization");
	/* bound, but in another header */
	assert_int_equal(
	    request(cs, true, false, "GET / HTTP/1.1\r\nX-Other: " PH "\r\n\r\n", &out, &r), 1);
	assert_string_equal(r.where, "header X-Other");
	/* bound, but in the request-target */
	assert_int_equal(request(cs, true, false, "GET /?k=" PH " HTTP/1.1\r\n\r\n", &out, &r), 1);
	assert_string_equal(r.where, "the request-target");
	/* the bound header carrying another credential's placeholder too */
	assert_int_equal(request(cs, true, false,
				 "GET / HTTP/1.1\r\nAuthorization: Bearer " PH " " PH2 "\r\n\r\n",
				 &out, &r),
			 1);
	assert_int_equal(r.leak, 1);
	/* no placeholder, not bound: as it was */
	assert_int_equal(request(cs, false, false,
				 "GET / HTTP/1.1\r\nAuthorization: Bearer mine\r\n\r\n", &out, &r),
			 0);
	assert_string_equal(out, "GET / HTTP/1.1\r\nAuthorization: Bearer mine\r\n\r\n");
	assert_int_equal(r.used, 0);
	free(out);
	creds_free(cs);
	policy_free(p);
}

static void test_add_header(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs;
	struct cred_result r;
	char *out;

	(void)state;
	p->creds[0].add = true;
	cs = fixed(p);
	assert_int_equal(
	    request(cs, true, false, "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n", &out, &r), 0);
	assert_string_equal(out, "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " REAL
				 "\r\n\r\n");
	assert_int_equal(r.added, 1);
	free(out);
	/* not bound: nothing added */
	assert_int_equal(request(cs, false, false, "GET / HTTP/1.1\r\n\r\n", &out, &r), 0);
	assert_string_equal(out, "GET / HTTP/1.1\r\n\r\n");
	free(out);
	creds_free(cs);
	policy_free(p);
}

static void test_substitute_basic(void **state)
{
	struct policy *p = pol(CRED_PLACE_BASIC);
	struct creds *cs = fixed(p);
	struct cred_result r;
	char head[512], want[512], enc[256], *out;

	(void)state;
	b64("x-access-token:" PH, strlen("x-access-token:" PH), enc, false);
	snprintf(head, sizeof(head),
		 "GET /r.git/info/refs HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", enc);
	assert_int_equal(request(cs, true, false, head, &out, &r), 0);
	b64("x-access-token:" REAL, strlen("x-access-token:" REAL), enc, false);
	snprintf(want, sizeof(want),
		 "GET /r.git/info/refs HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", enc);
	assert_string_equal(out, want);
	free(out);
	/* the same Basic header to an unbound host is a leak (base64 form found) */
	assert_int_equal(request(cs, false, false, head, &out, &r), 1);
	creds_free(cs);
	policy_free(p);
}

static void test_substitute_query(void **state)
{
	struct policy *p = pol(CRED_PLACE_QUERY);
	struct creds *cs = fixed(p);
	struct cred_result r;
	char *out;

	(void)state;
	assert_int_equal(
	    request(cs, false, true, "GET /repos/a?x=1&key=" PH2 "&y=2 HTTP/1.1\r\n\r\n", &out, &r),
	    0);
	assert_string_equal(out, "GET /repos/a?x=1&key=ghvalue&y=2 HTTP/1.1\r\n\r\n");
	assert_int_equal(r.used, 2);
	free(out);
	/* api's query parameter: the real value percent-encoded */
	assert_int_equal(request(cs, true, false, "GET /?key=" PH " HTTP/1.1\r\n\r\n", &out, &r),
			 0);
	assert_string_equal(out, "GET /?key=real-secret-VALUE%2F%2B%3D%2642 HTTP/1.1\r\n\r\n");
	free(out);
	/* another parameter, or a header: leaks */
	assert_int_equal(
	    request(cs, false, true, "GET /repos/a?other=" PH2 " HTTP/1.1\r\n\r\n", &out, &r), 1);
	assert_int_equal(request(cs, false, true,
				 "GET /repos/a?key=" PH2 " HTTP/1.1\r\nX-K: " PH2 "\r\n\r\n", &out,
				 &r),
			 1);
	assert_string_equal(r.where, "header X-K");
	creds_free(cs);
	policy_free(p);
}

static void test_bound_rules(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs = fixed(p);
	struct http_target t;
	const char *why;

	(void)state;
	assert_int_equal(http_target_canon("/repos/x", 8, &t, &why), 0);
	assert_true(cred_bound(&cs->v[0], "POST", "api.test", &t));
	assert_false(cred_bound(&cs->v[0], "POST", "evil.test", &t));
	assert_true(cred_bound(&cs->v[1], "GET", "gh.test", &t));
	assert_false(cred_bound(&cs->v[1], "POST", "gh.test", &t));
	http_target_free(&t);
	assert_int_equal(http_target_canon("/user", 5, &t, &why), 0);
	assert_false(cred_bound(&cs->v[1], "GET", "gh.test", &t));
	http_target_free(&t);
	creds_free(cs);
	policy_free(p);
}

static void test_redact_response(void **state)
{
	struct policy *p = pol(CRED_PLACE_HEADER);
	struct creds *cs = fixed(p);
	const char *h = "HTTP/1.1 200 OK\r\nX-Token: " REAL "\r\nX-B: ghvalue\r\n\r\n";
	size_t n;
	uint32_t found;
	bool oom;
	char *out = creds_redact(cs, h, strlen(h), &n, &found, &oom);

	(void)state;
	assert_non_null(out);
	assert_int_equal(found, 3);
	assert_string_equal(out, "HTTP/1.1 200 OK\r\nX-Token: " PH "\r\nX-B: " PH2 "\r\n\r\n");
	free(out);
	assert_null(creds_redact(cs, "HTTP/1.1 200 OK\r\n\r\n", 19, &n, &found, &oom));
	assert_false(oom);
	creds_free(cs);
	policy_free(p);
}

/* The audit trail's redactor redacts a value it was given. */
static void test_audit_literal(void **state)
{
	struct redactor *r;
	struct ab_err e;
	bool oom;
	char *out;

	(void)state;
	assert_int_equal(redactor_new(&r, NULL, &e), 0);
	assert_int_equal(redactor_add_literal(r, "zzSECRETzz", 10), 0);
	out = redact(r, "path=/a?x=1 zzSECRETzz end", 26, &oom);
	assert_non_null(out);
	assert_null(strstr(out, "zzSECRETzz"));
	free(out);
	redactor_free(r);
}

/* ---------- the profile section ---------- */

static const char *profile_text;

static int one_read(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	(void)ctx;
	(void)path;
	(void)e;
	*data = strdup(profile_text);
	*len = strlen(profile_text);
	return *data ? 0 : -1;
}

static char *one_canonical(void *ctx, const char *path)
{
	(void)ctx;
	return strdup(path);
}

static int load(const char *text, struct policy **out, struct ab_err *e)
{
	struct policy_vars v = {"/home/u", "/", "u", "1000", "/tmp"};
	struct policy_io io = {one_read, one_canonical, NULL};
	int rc;

	profile_text = text;
	*out = policy_new(&v);
	memset(e, 0, sizeof(*e));
	rc = policy_load(*out, "/p.ini", &io, e);
	return rc < 0 ? rc : policy_finish(*out, e);
}

#define PROXY "[network]\nmode = proxy\n"

static void expect_error(const char *text, const char *what)
{
	struct policy *p;
	struct ab_err e;

	assert_int_equal(load(text, &p, &e), -1);
	if (!strstr(e.msg, what)) {
		print_error("error \"%s\" lacks \"%s\"\n", e.msg, what);
		fail();
	}
	policy_free(p);
}

static void test_profile(void **state)
{
	struct policy *p;
	struct ab_err e;

	(void)state;
	assert_int_equal(load(PROXY
			      "[credential gh]\nsource = file:/home/u/.tok\nhosts = "
			      "api.github.com, *.github.com\nrules = GET api.github.com/repos/**"
			      "\nbasic = x-access-token:{}\nenv = GH_TOKEN\nprefix = ghp_\n"
			      "on-leak = stop\n",
			      &p, &e),
			 0);
	assert_int_equal(p->n_creds, 1);
	assert_string_equal(p->creds[0].name, "gh");
	assert_int_equal(p->creds[0].place, CRED_PLACE_BASIC);
	assert_string_equal(p->creds[0].header_name, "Authorization");
	assert_int_equal(p->creds[0].length, 44);
	assert_true(p->creds[0].stop);
	assert_int_equal(p->creds[0].hosts.text.n, 2);
	/* the source file is hidden in the view */
	assert_true(p->n_fs > 0);
	assert_int_equal(p->fs[p->n_fs - 1].kind, FS_HIDE);
	assert_string_equal(p->fs[p->n_fs - 1].path, "/home/u/.tok");
	policy_free(p);

	/* a token file alone reaches the command; its text is decoded, and ends a line */
	assert_int_equal(load(PROXY "[credential npm]\nsource = env:A\nhosts = x.test\nheader = "
				    "Authorization: Bearer {}\nfile = //x.test/:_authToken={}\\n"
				    "a\\tb\\\\c\nfile-env = NPM_CONFIG_USERCONFIG\n",
			      &p, &e),
			 0);
	assert_string_equal(p->creds[0].file, "//x.test/:_authToken={}\na\tb\\c\n");
	assert_string_equal(p->creds[0].file_env, "NPM_CONFIG_USERCONFIG");
	policy_free(p);

	expect_error(PROXY "[credential a]\nhosts = x.test\nheader = A: {}\nenv = A\n",
		     "no source");
	expect_error(PROXY "[credential a]\nsource = env:A\nheader = A: {}\nenv = A\n",
		     "names no hosts");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nenv = A\n",
		     "how it is sent");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n",
		     "reaches the command in no way");
	expect_error(PROXY
		     "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: B\nenv = A\n",
		     "{} once");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n"
			   "query = k\nenv = A\n",
		     "one way");
	expect_error(PROXY "[credential a]\nsource = shell:x\n", "unknown source");
	expect_error(PROXY "[credential a]\nsource = file:rel/x\n", "absolute");
	expect_error(PROXY "[credential a]\nhosts = x.test:443\n",
		     "not a host name alone: it has a port");
	expect_error(PROXY "[credential a]\nhosts = https://api.x.test\n", "is a URL");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\nenv = "
			   "A\nrules = GET y.test/**\n",
		     "not in hosts");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\nenv = "
			   "A\nprefix = sk-\nlength = 10\n",
		     "random characters");
	expect_error("[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\nenv = A\n",
		     "mode = proxy");
	expect_error(PROXY "[credential a b]\nsource = env:A\n", "unknown section");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n"
			   "file = token=x\n",
		     "{} where the placeholder goes");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n"
			   "file = a={}\\q\n",
		     "unknown escape");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n"
			   "env = A\nfile-env = B\n",
		     "file-env but no file");
	expect_error(PROXY "[credential a]\nsource = env:A\nhosts = x.test\nheader = A: {}\n"
			   "env = A\nfile = t={}\nfile-env = A\n",
		     "one variable");
	expect_error(PROXY "[credential a]\nsecret = x\n", "unknown key");
}

/* the [http] verdict of the finished policy on a request */
static enum http_verdict verdict(const struct policy *p, const char *method, const char *host,
				 const char *target, const char **rule, const char **why)
{
	struct http_target t;
	const char *bad;
	enum http_verdict v;

	assert_int_equal(http_target_canon(target, strlen(target), &t, &bad), 0);
	v = http_rules_decide_why(&p->net.http, method, host, &t, rule, why);
	http_target_free(&t);
	return v;
}

#define GH_CRED                                                                                    \
	"[credential gh]\nsource = env:A\nhosts = api.gh.test, *.gh.test\nheader = A: {}\n"        \
	"env = A\nrules = GET api.gh.test/**\nrules = POST api.gh.test/repos/acme/**\n"

/* A credential's rules are the requests' rules of the hosts they name while no [http] allow
 * rule names them (fail closed: a DELETE does not reach the host the key is for); its other
 * hosts get every request; an [http] allow rule for the host takes the decision back. */
static void test_rules_decide_requests(void **state)
{
	struct policy *p;
	struct ab_err e;
	const char *rule, *why;
	struct json j;
	(void)state;

	assert_int_equal(load(PROXY GH_CRED, &p, &e), 0);
	assert_int_equal(verdict(p, "GET", "api.gh.test", "/user", &rule, &why), HTTP_ALLOW);
	assert_int_equal(verdict(p, "POST", "api.gh.test", "/repos/acme/x", &rule, &why),
			 HTTP_ALLOW);
	assert_int_equal(verdict(p, "DELETE", "api.gh.test", "/repos/acme/x", &rule, &why),
			 HTTP_DENY);
	assert_string_equal(rule, "[credential gh]");
	assert_string_equal(why, HTTP_RULES_WHY_CREDENTIAL);
	assert_int_equal(verdict(p, "DELETE", "www.gh.test", "/x", &rule, &why), HTTP_ALLOW);
	assert_true(http_rules_cover(&p->net.http, "www.gh.test")); /* still intercepted */
	/* the credential's own binding is unchanged: its rules */
	assert_int_equal(p->creds[0].rules.n, 2);
	json_init(&j);
	policy_explain(p, &j);
	assert_non_null(strstr(json_text(&j), "\"credential_rules\":[{\"rule\":\"GET "
					      "api.gh.test/**\",\"by\":\"[credential gh]\"},"));
	json_free(&j);
	policy_free(p);

	assert_int_equal(load(PROXY "[http]\nallow = * api.gh.test/**\n" GH_CRED, &p, &e), 0);
	assert_int_equal(verdict(p, "DELETE", "api.gh.test", "/repos/acme/x", &rule, &why),
			 HTTP_ALLOW);
	assert_string_equal(rule, "* api.gh.test/**");
	policy_free(p);

	/* without rules, every request to its hosts, as before */
	assert_int_equal(load(PROXY "[credential c]\nsource = env:A\nhosts = c.test\nheader = A: "
				    "{}\nenv = A\n",
			      &p, &e),
			 0);
	assert_int_equal(verdict(p, "DELETE", "c.test", "/x", &rule, &why), HTTP_ALLOW);
	json_init(&j);
	policy_explain(p, &j);
	assert_null(strstr(json_text(&j), "credential_rules"));
	json_free(&j);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_placeholder_shape), cmocka_unit_test(test_scan_forms),
	    cmocka_unit_test(test_scan_stream),	      cmocka_unit_test(test_substitute_header),
	    cmocka_unit_test(test_add_header),	      cmocka_unit_test(test_substitute_basic),
	    cmocka_unit_test(test_substitute_query),  cmocka_unit_test(test_bound_rules),
	    cmocka_unit_test(test_redact_response),   cmocka_unit_test(test_audit_literal),
	    cmocka_unit_test(test_profile),	      cmocka_unit_test(test_rules_decide_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
