/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: [http] rules (http_rules_add), request-target canonicalisation
 * (http_target_canon, http_target_format) and the decision (http_rules_decide).
 *
 * Input: rule lines ("+RULE" an allow rule, "-RULE" a deny rule, at most 8; other lines are
 * ignored), an empty line, then two bytes choosing the method and the host, then the
 * request-target (any bytes, NULs included). Checks beyond "no crash":
 *  - a canonical path starts with '/', has no empty, '.' or '..' segment and is UTF-8; a
 *    canonical query is visible ASCII with upper-case escapes of reserved bytes only;
 *  - canonicalisation is idempotent: the target as sent upstream (http_target_format)
 *    canonicalises to the same path and query, and formats to the same bytes;
 *  - the decision is consistent with http_rules_cover, names a rule unless it passes, and a
 *    denial by a deny rule names a deny rule (and only such a denial gives a reason);
 *  - deny rules read letters in any case: a request a deny rule matches is denied by the same
 *    rule with its path and query upper- or lower-cased;
 *  - a non-ASCII path is allowed only by an allow rule with non-ASCII bytes of its own, or when
 *    no deny rule is for the request's host and method;
 *  - every canonical path is expressible as a rule: "GET HOST/<path as sent>" matches it. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_http_rules: check failed: %s (%s:%d)\n", #cond,      \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static const char *const methods[] = {"GET", "POST", "DELETE", "get"};
static const char *const hosts[] = {"example.com", "a.example.com", "127.0.0.1", "[::1]"};

static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned need = *s < 0x80		   ? 0
				: *s >= 0xc2 && *s <= 0xdf ? 1
				: *s >= 0xe0 && *s <= 0xef ? 2
				: *s >= 0xf0 && *s <= 0xf4 ? 3
							   : 9;
		if (need == 9)
			return false;
		for (unsigned k = 1; k <= need; k++)
			if ((s[k] & 0xc0) != 0x80)
				return false;
		s += need + 1;
	}
	return true;
}

static bool is_hex_upper(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

static void check_canonical(const struct http_target *t)
{
	const char *p = t->path;

	CHECK(p[0] == '/');
	CHECK(!strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../"));
	size_t n = strlen(p);
	CHECK(!(n >= 2 && !strcmp(p + n - 2, "/.")) && !(n >= 3 && !strcmp(p + n - 3, "/..")));
	CHECK(!strchr(p, '\\'));
	CHECK(utf8_ok((const unsigned char *)p));
	/* the only escapes a canonical path keeps: an encoded '/' and a literal '%' */
	for (const char *q = strchr(p, '%'); q; q = strchr(q + 1, '%'))
		CHECK(!strncmp(q, "%2F", 3) || !strncmp(q, "%25", 3));
	CHECK((t->as_slashes != NULL) == (strstr(p, "%2F") != NULL));
	if (!t->query)
		return;
	for (const char *q = t->query; *q; q++) {
		CHECK(*q > 0x20 && *q < 0x7f && *q != '#');
		if (*q == '%') {
			CHECK(is_hex_upper(q[1]) && is_hex_upper(q[2]));
			int b = (q[1] <= '9' ? q[1] - '0' : q[1] - 'A' + 10) << 4 |
				(q[2] <= '9' ? q[2] - '0' : q[2] - 'A' + 10);
			CHECK(!((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
				(b >= '0' && b <= '9') || (b && strchr("-._~", b))));
		}
	}
}

/* What goes upstream canonicalises to itself. */
static char *check_idempotent(const struct http_target *t)
{
	struct http_target again;
	const char *why;
	char *out = http_target_format(t), *out2;

	CHECK(out != NULL);
	if (http_target_canon(out, strlen(out), &again, &why) != 0) {
		fprintf(stderr, "fuzz_http_rules: '%s' (as sent) refused: %s\n", out, why);
		abort();
	}
	CHECK(!strcmp(again.path, t->path));
	CHECK((again.query == NULL) == (t->query == NULL));
	CHECK(!t->query || !strcmp(again.query, t->query));
	out2 = http_target_format(&again);
	CHECK(out2 && !strcmp(out, out2));
	free(out2);
	http_target_free(&again);
	return out;
}

/* "GET HOST/<path as sent, '*' escaped>" is a rule, and it allows the request. */
static void check_expressible(const struct http_target *t, const char *sent, const char *host)
{
	size_t n = strcspn(sent, "?");
	char *rule = malloc(3 * n + 64), *o;
	struct http_rules rs = {0};
	struct ab_err e = {0};
	const char *deciding;

	CHECK(rule != NULL);
	o = rule + sprintf(rule, "GET %s", host);
	for (size_t i = 0; i < n; i++)
		o = sent[i] == '*' ? o + sprintf(o, "%%2A") : (*o = sent[i], o + 1);
	*o = '\0';
	if (strlen(rule) > 4000) {
		free(rule);
		return;
	}
	if (http_rules_add(&rs, false, rule, &e) != 0) {
		fprintf(stderr, "fuzz_http_rules: rule '%s' for canonical path '%s' refused: %s\n",
			rule, t->path, e.msg);
		abort();
	}
	CHECK(http_rules_decide(&rs, "GET", host, t, &deciding) == HTTP_ALLOW);
	CHECK(deciding == rs.v[0].text);
	http_rules_free(&rs);
	free(rule);
}

/* t with its ASCII letters upper-cased (up) or lower-cased: the same request to a deny rule. */
static void recased(const struct http_target *t, bool up, struct http_target *out)
{
	out->path = strdup(t->path);
	out->query = t->query ? strdup(t->query) : NULL;
	out->as_slashes = t->as_slashes ? strdup(t->as_slashes) : NULL;
	CHECK(out->path && (!t->query || out->query) && (!t->as_slashes || out->as_slashes));
	for (char *p = out->path; *p; p++)
		*p = up ? (char)toupper((unsigned char)*p) : (char)tolower((unsigned char)*p);
	for (char *p = out->as_slashes; p && *p; p++)
		*p = up ? (char)toupper((unsigned char)*p) : (char)tolower((unsigned char)*p);
	for (char *p = out->query; p && *p; p++)
		*p = up ? (char)toupper((unsigned char)*p) : (char)tolower((unsigned char)*p);
}

static void check_deny_folds(const struct http_rules *rs, const char *method, const char *host,
			     const struct http_target *t, const char *deciding)
{
	for (int up = 0; up < 2; up++) {
		struct http_target v;
		const char *rule, *why;

		recased(t, up, &v);
		CHECK(http_rules_decide_why(rs, method, host, &v, &rule, &why) == HTTP_DENY);
		CHECK(rule == deciding && (!why || strcmp(why, HTTP_RULES_WHY_NON_ASCII)));
		http_target_free(&v);
	}
}

static bool glob_non_ascii(const struct http_glob *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->el[i] >= 0x80 && g->el[i] < 256)
			return true;
	return false;
}

/* An allowed non-ASCII path: named by its rule, or no deny rule alone has a say on it. */
static void check_non_ascii_allow(const struct http_rules *rs, const char *method, const char *host,
				  const struct http_target *t, const char *deciding)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].text == deciding && glob_non_ascii(&rs->v[i].path))
			return;
	for (size_t i = 0; i < rs->n; i++) {
		struct http_rules one = {0};
		struct ab_err e = {0};
		const char *rule;

		if (!rs->v[i].deny)
			continue;
		CHECK(http_rules_add(&one, true, rs->v[i].text, &e) == 0);
		CHECK(http_rules_decide(&one, method, host, t, &rule) == HTTP_PASS);
		http_rules_free(&one);
	}
}

static bool path_non_ascii(const char *p)
{
	for (; *p; p++)
		if ((unsigned char)*p >= 0x80)
			return true;
	return false;
}

static void parse_rules(const char *text, size_t n, struct http_rules *rs)
{
	char line[4200];

	for (size_t i = 0; i < n && rs->n < 8;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - text - i) : n - i;
		struct ab_err e = {0};

		if (len > 1 && len < sizeof(line) && (text[i] == '+' || text[i] == '-') &&
		    !memchr(text + i, '\0', len)) {
			size_t before = rs->n;
			memcpy(line, text + i + 1, len - 1);
			line[len - 1] = '\0';
			if (http_rules_add(rs, text[i] == '-', line, &e) != 0) {
				CHECK(rs->n == before && e.msg[0]);
			} else {
				CHECK(rs->n == before + 1 && rs->v[before].text);
				CHECK(rs->v[before].path.n > 0 && rs->v[before].path.el[0] == '/');
			}
		}
		i += len + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *sep = NULL;
	struct http_rules rs = {0};
	struct http_target t;
	const char *why, *method, *host, *deciding;
	enum http_verdict v;

	for (size_t i = 0; i + 1 < size; i++)
		if (text[i] == '\n' && text[i + 1] == '\n') {
			sep = text + i;
			break;
		}
	if (!sep || (size_t)(sep - text) + 4 > size)
		return 0;
	parse_rules(text, (size_t)(sep - text), &rs);
	method = methods[(unsigned char)sep[2] % 4];
	host = hosts[(unsigned char)sep[3] % 4];
	const char *target = sep + 4;
	size_t tlen = size - (size_t)(target - text);

	if (http_target_canon(target, tlen, &t, &why) != 0) {
		CHECK(why && why[0] && !t.path && !t.query);
		http_rules_free(&rs);
		return 0;
	}
	check_canonical(&t);
	char *sent = check_idempotent(&t);

	v = http_rules_decide_why(&rs, method, host, &t, &deciding, &why);
	CHECK(v == HTTP_PASS || v == HTTP_ALLOW || v == HTTP_DENY);
	CHECK((v == HTTP_PASS) == (deciding == NULL));
	CHECK(v == HTTP_PASS || http_rules_cover(&rs, host));
	bool by_deny = v == HTTP_DENY && strcmp(deciding, HTTP_RULES_NO_ALLOW) &&
		       strcmp(deciding, HTTP_RULES_BAD_HOST);
	if (v == HTTP_ALLOW || by_deny) {
		bool found = false;
		for (size_t i = 0; i < rs.n; i++)
			found |= deciding == rs.v[i].text && rs.v[i].deny == (v == HTTP_DENY);
		CHECK(found);
	}
	bool non_ascii_denial = why && !strcmp(why, HTTP_RULES_WHY_NON_ASCII);
	bool slash_denial = why && !strcmp(why, HTTP_RULES_WHY_SLASH);
	CHECK(!why ||
	      (by_deny && (non_ascii_denial || slash_denial || !strcmp(why, HTTP_RULES_WHY_CASE))));
	/* read with %2F as '/': the request's, or the deciding rule's own */
	if (slash_denial) {
		bool slashed_rule = false;
		for (size_t i = 0; i < rs.n; i++)
			slashed_rule |= rs.v[i].text == deciding && rs.v[i].slashed.n > 0;
		CHECK(t.as_slashes || slashed_rule);
	}
	if (by_deny && !non_ascii_denial)
		check_deny_folds(&rs, method, host, &t, deciding);
	if (v == HTTP_ALLOW && path_non_ascii(t.path))
		check_non_ascii_allow(&rs, method, host, &t, deciding);
	check_expressible(&t, sent, host);
	free(sent);
	http_target_free(&t);
	http_rules_free(&rs);
	return 0;
}
