/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Per-request HTTP rules, `METHOD HOST/PATH-GLOB` (http_rules.c), and the one canonical form of
 * a request-target they are matched against. Pure: no sockets, no policy. The profile's [http]
 * rules and a credential's rules are these; the proxy checks each request with them
 * (egress/http_check.c; docs/http-rules.md). */
#ifndef AGENTBOX_HTTP_RULES_H
#define AGENTBOX_HTTP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_rule.h"
#include "error.h"
#include "http_glob.h"
#include "http_target.h"

struct http_rule {
	bool deny;
	char method[32];	 /* "*": any method */
	bool any_host;		 /* host `*` */
	struct egress_rule host; /* RULE_HOST, RULE_SUBDOMAINS, RULE_DOMAIN or RULE_ADDRESS */
	struct http_glob path;	 /* over the canonical (decoded) path, '/' separates */
	/* the path glob with each %2F read as '/' (repeated slashes merged), as an origin that
	 * decodes it reads the path; n == 0 when the rule writes no %2F */
	struct http_glob slashed;
	bool has_query;		/* the rule has '?': the query must match too */
	struct http_glob query; /* over the normalised query, '&' separates */
	char *text;		/* the rule as written (trimmed), for X-Agentbox-Denied and audit */
	bool implied; /* made by the policy (from a credential), not written in a profile */
	/* an implied allow rule that names a host only where no other allow rule does: a
	 * credential's "every request to HOST" */
	bool fallback;
	char *by; /* an implied rule's source ("[credential NAME]"), or NULL */
};

struct http_rules {
	struct http_rule *v;
	size_t n;
};

/* Parses one rule and appends it (allow, or deny when deny is true). On error rs is unchanged
 * and e says what is wrong and how to write it. */
int http_rules_add(struct http_rules *rs, bool deny, const char *text, struct ab_err *e);
void http_rules_free(struct http_rules *rs);
/* Takes rule i out of rs, keeping the order of the rest; its text is the caller's now (what a
 * connection's event may still point to). */
char *http_rules_take(struct http_rules *rs, size_t i);
/* Whether a rule with this text (and deny) is in rs already. */
bool http_rules_has(const struct http_rules *rs, bool deny, const char *text);
/* Appends a copy of r, implied by by (copied; NULL: as written); -1 when out of memory (rs
 * unchanged). */
int http_rules_copy(struct http_rules *rs, const struct http_rule *r, const char *by);
/* Moves every rule of from to the end of to (from is left empty); -1 when out of memory (both
 * unchanged). */
int http_rules_move(struct http_rules *to, struct http_rules *from);

enum http_verdict {
	HTTP_PASS,  /* no [http] rule concerns this request: the connection rules decide */
	HTTP_ALLOW, /* an allow rule matched (and no deny rule) */
	HTTP_DENY,  /* a deny rule matched, or the host has allow rules and none matched */
};

/* The text http_rules_decide gives as the deciding rule when a host's allow rules all missed. */
#define HTTP_RULES_NO_ALLOW "no [http] allow rule matches"
/* ... and when the host cannot be compared (e.g. invalid UTF-8): denied, never passed. */
#define HTTP_RULES_BAD_HOST "not a host name the [http] rules can compare"

/* Which allow rules name a host: those written (not implied) if any does, else a credential's
 * implied ones, else the fallbacks. Only those decide its requests. */
enum http_rule_tier { HTTP_TIER_WRITTEN, HTTP_TIER_IMPLIED, HTTP_TIER_FALLBACK };
enum http_rule_tier http_rule_tier(const struct http_rule *r);

/* Decides one request: deny rules first, then the allow rules of the first tier that names the
 * host; a host that some allow rule names but none of those matches is denied. An encoded '/'
 * (%2F) is data to some origins and a separator to others: a deny rule denies a request that
 * either reading matches, an allow rule allows only one both readings match (the rule's own %2F
 * read the same way as the request's). Allow rules read the request strictly: method compared
 * case-sensitively (RFC 9110), path and query byte for byte. Deny rules read it as broadly as an
 * origin may: method, path and query in any ASCII letter case; and a request a deny rule's host
 * and method cover whose path holds a non-ASCII byte is denied (by that rule) unless an allow
 * rule names it, every non-ASCII byte written in the rule rather than matched by a star. host is
 * compared as the connection rules compare it (lower case, punycode, no trailing dot; an IPv6
 * address in brackets or not). *rule is the deciding rule's text (HTTP_RULES_NO_ALLOW or
 * HTTP_RULES_BAD_HOST for the default denials, an implied rule's by when its tier decided,
 * NULL for HTTP_PASS); it lives as long as rs. */
enum http_verdict http_rules_decide(const struct http_rules *rs, const char *method,
				    const char *host, const struct http_target *t,
				    const char **rule);

/* The reasons http_rules_decide_why adds to a deny rule's denial. */
#define HTTP_RULES_WHY_CASE "it matches the path in another letter case, as an origin may read it"
#define HTTP_RULES_WHY_SLASH                                                                       \
	"it matches the path with each %2F read as '/', as an origin that decodes it reads it"
#define HTTP_RULES_WHY_NON_ASCII                                                                   \
	"the path has non-ASCII characters, which an origin may read as ASCII ones (fullwidth "    \
	"letters, dotless i), and no allow rule names it"
/* ... and to a request that no implied allow rule of a credential matched (*rule is its by) */
#define HTTP_RULES_WHY_CREDENTIAL                                                                  \
	"no [http] allow rule names the host, so the rules of the credential bound to it are its " \
	"request rules; to let other requests through, add an [http] allow rule for the host"

/* http_rules_decide, and *why: NULL, or why a deny rule denied a request its text does not
 * match byte for byte, or why a credential's rules denied it (a static string with the text of
 * HTTP_RULES_WHY_CASE, HTTP_RULES_WHY_SLASH, HTTP_RULES_WHY_NON_ASCII or
 * HTTP_RULES_WHY_CREDENTIAL: compare with strcmp). */
enum http_verdict http_rules_decide_why(const struct http_rules *rs, const char *method,
					const char *host, const struct http_target *t,
					const char **rule, const char **why);

/* Whether outer matches every request inner matches, as allow rules read requests (method,
 * host, path in both readings of %2F, query; a rule without a query takes any): what a rule a
 * harness adds at run time must be within (live_rules.h). Conservative: globs too long to
 * compare exactly are within only when identical (http_glob.h). */
bool http_rule_covers(const struct http_rule *outer, const struct http_rule *inner);

/* True when some rule's host pattern covers host: the connections to it must be intercepted
 * for the rules to be enforced. */
bool http_rules_cover(const struct http_rules *rs, const char *host);

/* The texts of the allow rules that decide host's requests (those of its tier), ", " between
 * them, into out (cut short to fit size); "" when none. */
void http_rules_deciding(const struct http_rules *rs, const char *host, char *out, size_t size);

#endif
