/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Credential brokering: the command holds a per-run placeholder, the proxy puts the real value
 * in its place on requests to the hosts the credential is bound to, refuses the placeholder
 * anywhere else, and scrubs the real value out of those hosts' responses. This file is the pure
 * part: placeholders, the forms of them a leak is looked for in (as written, percent-encoded,
 * base64 in both alphabets at the three alignments, hex), the request head rewritten
 * (credential.c); the real value's forms overwritten in response heads and bodies
 * (cred_scrub.c). The real values are
 * read by credential_source.c (outside the sandbox, after the clone) and kept in memory only
 * (mlocked where the kernel allows, wiped when freed). */
#ifndef AGENTBOX_CREDENTIAL_H
#define AGENTBOX_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cred_filter.h"
#include "error.h"
#include "http_rules.h"
#include "policy.h"

#define CRED_MAX_VALUE 16384
/* placeholder as written, base64 x 6, hex */
#define CRED_NEEDLES 8
/* a real value as written, base64 x 6 (standard, then URL-safe; 0, 1, 2 bytes before it), hex */
#define CRED_FORMS 8

/* One form a real value is looked for in, and what overwrites it (cred_scrub.c). */
struct cred_form {
	const char *find; /* the value in this form; NULL until the value is known */
	const char *put;  /* the placeholder, repeated or cut to the value's length, in this form */
	size_t len;	  /* of both */
	bool fold;	  /* compared ignoring ASCII case */
	bool wraps;	  /* may be cut by line breaks (base64 and hex are wrapped at 64 or 76) */
	/* base64: the alphabet, and the stand-in's share of the characters before and after
	 * (lead_bits low bits of the one before, trail_bits high bits of the one after) */
	const char *alpha;
	char lead, trail;
	unsigned char lead_bits, trail_bits;
};

struct cred {
	const struct policy_credential *pc; /* pc->rules: where it may go (policy_rules.c) */
	char *ph; /* the placeholder (not a secret: the command holds it) */
	size_t ph_len;
	char *value; /* the real value: NULL until read; mlocked, wiped on free */
	size_t value_len;
	char *needle[CRED_NEEDLES];
	size_t needle_len[CRED_NEEDLES];
	bool needle_fold[CRED_NEEDLES];	   /* compared ignoring case (hex) */
	struct cred_form form[CRED_FORMS]; /* the real value's forms, once it is read */
	struct cred_filter filter;	   /* where the forms may start */
	char *forms_mem;		   /* ... kept here: mlocked, wiped on free */
	size_t forms_size;
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

/* ---------- responses (cred_scrub.c) ---------- */

/* The forms of c's real value (called by creds_set_value); -1 when out of memory. */
int cred_forms_make(struct cred *c);
void cred_forms_free(struct cred *c);

/* A head (a response's, an interim one's, a trailer section) with every form of every real
 * value overwritten, the value as written by its placeholder: malloc'd (*out_n bytes, *found
 * bit i for credential i), or NULL with *oom false when none is in it. */
char *creds_redact(const struct creds *cs, const char *head, size_t n, size_t *out_n,
		   uint32_t *found, bool *oom);

/* A body read in pieces, scrubbed of every form of every real value without changing its
 * length. Bytes that may start a form cut off by the piece's end are held back for the next
 * piece; final: the body has ended, nothing is held. */
struct creds_scrub {
	char *held;	/* bytes held back, as they came: read again with the next piece */
	char *held_out; /* the same, as the hits before them left them: what is sent of them */
	size_t len;
	char *run;	 /* those and the next piece, when some were held: kept for the next */
	size_t run_len;	 /* bytes of it in use */
	size_t run_sent; /* of those, sent (scrubbed whole): the rest is wiped before its reuse */
	size_t run_cap;
	uint32_t found; /* bit i: credential i's value was found so far */
};
/* Scrubs buf in place (no copy unless bytes were held back): 0 with *out, *out_n the bytes to
 * send now (in buf, or in st until the next call); -1 out of memory. */
int creds_scrub_stream(const struct creds *cs, struct creds_scrub *st, char *buf, size_t n,
		       bool final, char **out, size_t *out_n);
void creds_scrub_free(struct creds_scrub *st);

#endif
