/* Credential brokering (issue 19): the command holds a per-run placeholder, the proxy puts the
 * real value in its place on requests to the hosts the credential is bound to, and refuses the
 * placeholder anywhere else. This file is the pure part: placeholders, the forms of them a
 * leak is looked for in (as written, percent-encoded, base64 in both alphabets at the three
 * alignments, hex), the request head rewritten, a response head redacted. The real values are
 * read by credential_source.c (outside the sandbox, after the clone) and kept in memory only
 * (mlocked where the kernel allows, wiped when freed). */
#ifndef AGENTBOX_CREDENTIAL_H
#define AGENTBOX_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "http_rules.h"
#include "policy.h"

#define CRED_MAX_VALUE 16384
/* placeholder as written, base64 x 6, hex */
#define CRED_NEEDLES 8

struct cred {
	const struct policy_credential *pc;
	struct http_rules
	    bind; /* where it may go: its rules, or "* HOST/(anything)" for each host */
	char *ph; /* the placeholder (not a secret: the command holds it) */
	size_t ph_len;
	char *value; /* the real value: NULL until read; mlocked, wiped on free */
	size_t value_len;
	char *needle[CRED_NEEDLES];
	size_t needle_len[CRED_NEEDLES];
	bool needle_fold[CRED_NEEDLES]; /* compared ignoring case (hex) */
};

struct creds {
	struct cred *v;
	size_t n;
	size_t window; /* bytes a stream scan keeps from one read to the next */
};

/* What a leak scan or a head rewrite found. */
#define CRED_NONE (-1)
#define CRED_OOM (-2)

/* The run's credentials from the profile, each with a fresh random placeholder (getrandom):
 * prefix, then base62 up to its length. *out is NULL when the profile has none. */
int creds_new(const struct policy *p, struct creds **out, struct ab_err *e);
void creds_free(struct creds *cs);
/* For tests: a fixed placeholder (and its needles) in place of the random one. */
int creds_set_placeholder(struct cred *c, const char *ph);
/* Takes a copy of the real value (locked in memory when possible). */
int creds_set_value(struct cred *c, const char *value, size_t n);

/* Whether credential c may be sent on this request (host as the rules compare it, the canonical
 * target): its hosts, narrowed by its rules. */
bool cred_bound(const struct cred *c, const char *method, const char *host,
		const struct http_target *t);

/* Index of a credential whose placeholder is in buf[0, n) in any form (fold: ignore case, as in
 * host names), CRED_NONE, or CRED_OOM. */
int creds_scan(const struct creds *cs, const char *buf, size_t n, bool fold);

/* A body read in pieces: a placeholder cut across two reads is still found. */
struct creds_stream {
	char *tail;
	size_t len;
};
int creds_scan_stream(const struct creds *cs, struct creds_stream *st, const char *buf, size_t n);
void creds_stream_free(struct creds_stream *st);

/* What creds_request did. */
struct cred_result {
	int leak;	    /* a credential found where it may not go, or CRED_NONE */
	const char *where;  /* ... where: "request-target", "header NAME" (static or in head) */
	char where_buf[96]; /* ... */
	uint32_t used;	    /* bit i: credential i was put in */
	uint32_t added;	    /* bit i: ... in a header the request lacked (add = yes) */
};

/* A request head as it goes up (request line, headers, empty line; CRLF), and for each
 * credential whether it is bound to this request (bound[i]). A placeholder in its credential's
 * place (the header, Authorization: Basic, the query parameter) of a bound credential becomes
 * the real value; anywhere else in the head it is a leak. 0 with *out (malloc'd, *out_n bytes)
 * the head to send, 1 for a leak (r->leak, r->where; *out NULL), -1 out of memory. */
int creds_request(const struct creds *cs, const bool *bound, const char *head, size_t n, char **out,
		  size_t *out_n, struct cred_result *r);

/* A response head with every real value replaced by its placeholder: malloc'd (*out_n bytes),
 * or NULL with *oom false when none is in it. */
char *creds_redact(const struct creds *cs, const char *head, size_t n, size_t *out_n, bool *oom);

#endif
