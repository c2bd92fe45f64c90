/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's side of the [http] rules (http_rules.c decides): each plain-HTTP or intercepted
 * HTTPS request is checked on its method, host and canonical target before it goes up, and goes
 * up with that canonical target, so the origin reads the path the rules saw. A connection the
 * proxy cannot read (TLS it does not intercept, another protocol) to a host the rules cover is
 * refused: it would carry requests no rule sees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_rules.h"
#include "proxy_conn.h"

/* The request-target of the head's request line, origin-form: an absolute-form target (the HTTP
 * proxy's) loses its scheme and authority. */
static bool request_target(const char *head, size_t head_len, const char **t, size_t *n)
{
	const char *eol = memchr(head, '\r', head_len), *sp1, *sp2;

	if (!eol || !(sp1 = memchr(head, ' ', (size_t)(eol - head))) ||
	    !(sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1))))
		return false;
	*t = sp1 + 1;
	*n = (size_t)(sp2 - *t);
	if (*n >= 7 && !strncasecmp(*t, "http://", 7)) {
		const char *path = memchr(*t + 7, '/', *n - 7);
		if (!path) {
			*t = "/";
			*n = 1;
			return true;
		}
		*n -= (size_t)(path - *t);
		*t = path;
	}
	return true;
}

/* The request is refused, whatever the connection's protocol: inside a tunnel the client speaks
 * HTTP too. */
void http_check_refuse(struct conn *c, int status, const char *denied, const char *why)
{
	char body[1024];

	snprintf(body, sizeof(body), "agentbox denied %s %s: %.700s\n", c->method, c->name, why);
	conn_http_refusal(c, status, denied, body);
	if (c->tls)
		exchange_refused(c, why);
	else
		conn_audit(c, "deny", why);
}

/* Why a request was denied: the rule and what it adds, or a credential's rules, named. */
static void deny_text(const struct conn *c, const char *rule, const char *detail, char *text,
		      size_t size)
{
	char rules[512];

	if (detail && !strcmp(detail, HTTP_RULES_WHY_CREDENTIAL)) {
		http_rules_deciding(&c->px->rules->http, c->name, rules, sizeof(rules));
		snprintf(text, size, "denied by the rules of %s (%s): %s", rule, rules, detail);
		return;
	}
	snprintf(text, size, "denied by [http] rule '%s'%s%s", rule, detail ? ": " : "",
		 detail ? detail : "");
}

bool http_check_request(struct conn *c, const char *head, size_t head_len)
{
	const struct http_rules *rs = &c->px->rules->http;
	struct http_target t;
	const char *target = NULL, *why = NULL, *rule, *detail;
	size_t n;
	char text[1024];
	enum http_verdict v;

	if (!rs->n || !http_rules_cover(rs, c->name))
		return true; /* no rule concerns this host: sent as the client wrote it */
	if (!request_target(head, head_len, &target, &n) ||
	    http_target_canon(target, n, &t, &why) < 0) {
		snprintf(text, sizeof(text), "request-target refused: %s",
			 target ? why : "no request-target");
		http_check_refuse(c, 400, NULL, text);
		return false;
	}
	v = http_rules_decide_why(rs, c->method, c->name, &t, &rule, &detail);
	c->http_rule = rule;
	free(c->target);
	c->target =
	    http_target_format(&t); /* what the rules read: a refusal's event names it too */
	http_target_free(&t);
	if (!c->target) {
		conn_close(c, "out of memory");
		return false;
	}
	if (v == HTTP_DENY) {
		deny_text(c, rule, detail, text, sizeof(text));
		http_check_refuse(c, 403, rule, text);
		return false;
	}
	return true;
}

bool http_check_opaque(struct conn *c, const char *what)
{
	char why[512];

	if (!http_rules_cover(&c->px->rules->http, c->name))
		return true;
	snprintf(why, sizeof(why),
		 "[http] rules cover %s, and a %s connection would carry requests no rule sees "
		 "(the proxy reads plain HTTP, and HTTPS to a host name: use one of those, or drop "
		 "the [http] rules)",
		 c->name, what);
	conn_audit(c, "deny", why);
	conn_close(c, why);
	return false;
}
