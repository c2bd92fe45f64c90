/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Credential brokering's pure part (include/credential.h): placeholders, the leak scan, the
 * request head rewritten and the response head redacted. No sockets, no policy files. */
#include "credential.h"

#include "cred_encode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* ---------- search ---------- */

static const char *find(const char *h, size_t n, const char *nd, size_t m, bool fold)
{
	if (!m || m > n)
		return NULL;
	if (!fold)
		return memmem(h, n, nd, m);
	for (size_t i = 0; i + m <= n; i++)
		if (!strncasecmp(h + i, nd, m) && !memchr(h + i, '\0', m))
			return h + i;
	return NULL;
}

static int scan_plain(const struct creds *cs, const char *buf, size_t n, bool fold)
{
	for (size_t i = 0; i < cs->n; i++)
		for (size_t k = 0; k < CRED_NEEDLES; k++)
			if (cs->v[i].needle[k] &&
			    find(buf, n, cs->v[i].needle[k], cs->v[i].needle_len[k],
				 fold || cs->v[i].needle_fold[k]))
				return (int)i;
	return CRED_NONE;
}

int creds_scan(const struct creds *cs, const char *buf, size_t n, bool fold)
{
	struct cbuf a = {0}, b = {0};
	int found = scan_plain(cs, buf, n, fold);

	/* percent-encoded, twice at most (an encoded %): each decoding is searched again */
	if (found == CRED_NONE && memchr(buf, '%', n) && cenc_pct_decode(&a, buf, n)) {
		found = a.oom ? CRED_OOM : scan_plain(cs, a.s, a.n, fold);
		if (found == CRED_NONE && memchr(a.s, '%', a.n) && cenc_pct_decode(&b, a.s, a.n))
			found = b.oom ? CRED_OOM : scan_plain(cs, b.s, b.n, fold);
	}
	cbuf_free(&a);
	cbuf_free(&b);
	return found;
}

int creds_scan_stream(const struct creds *cs, struct creds_stream *st, const char *buf, size_t n)
{
	struct cbuf j = {0};
	int found;

	cbuf_put(&j, st->tail, st->len);
	cbuf_put(&j, buf, n);
	if (j.oom)
		return cbuf_free(&j), CRED_OOM;
	found = creds_scan(cs, j.s, j.n, false);
	/* the last window bytes: enough for any form of a placeholder but its last byte */
	free(st->tail);
	st->len = j.n < cs->window ? j.n : cs->window;
	st->tail = malloc(st->len + 1);
	if (!st->tail)
		st->len = 0, found = found == CRED_NONE ? CRED_OOM : found;
	else
		memcpy(st->tail, j.s + j.n - st->len, st->len);
	cbuf_free(&j);
	return found;
}

void creds_stream_free(struct creds_stream *st)
{
	free(st->tail);
	*st = (struct creds_stream){0};
}

/* ---------- the credentials ---------- */

static void needle_set(struct cred *c, size_t k, struct cbuf *o, bool fold)
{
	c->needle[k] = o->s;
	c->needle_len[k] = o->n;
	c->needle_fold[k] = fold;
	*o = (struct cbuf){0};
}

/* The forms searched for: as written; base64 (both alphabets) of the placeholder after 0, 1 or
 * 2 other bytes, cut to the characters that depend on the placeholder's bytes alone; hex. */
static int make_needles(struct cred *c)
{
	size_t k = 0;
	struct cbuf o = {0};

	for (size_t i = 0; i < CRED_NEEDLES; i++)
		free(c->needle[i]), c->needle[i] = NULL;
	cbuf_put(&o, c->ph, c->ph_len);
	needle_set(c, k++, &o, false);
	for (int url = 0; url < 2; url++) {
		for (size_t pad = 0; pad < 3; pad++) {
			struct cbuf raw = {0}, enc = {0};
			size_t first, last;
			cbuf_put(&raw, "\0\0", pad);
			cbuf_put(&raw, c->ph, c->ph_len);
			if (raw.oom)
				return free(raw.s), -1;
			cenc_b64_encode(&enc, (unsigned char *)raw.s, raw.n,
					url ? cenc_b64url : cenc_b64std);
			free(raw.s);
			/* character i covers bits [6i, 6i+6): those wholly in the placeholder */
			first = (pad * 8 + 5) / 6;
			last = ((pad + c->ph_len) * 8) / 6; /* exclusive */
			if (enc.oom || last <= first)
				return free(enc.s), -1;
			cbuf_put(&o, enc.s + first, last - first);
			free(enc.s);
			needle_set(c, k++, &o, false);
		}
	}
	for (size_t i = 0; i < c->ph_len; i++) {
		char q[3];
		snprintf(q, sizeof(q), "%02x", (unsigned char)c->ph[i]);
		cbuf_put(&o, q, 2);
	}
	needle_set(c, k++, &o, true);
	for (size_t i = 0; i < k; i++)
		if (!c->needle[i])
			return -1;
	return 0;
}

static void set_window(struct creds *cs)
{
	size_t w = 0;

	for (size_t i = 0; i < cs->n; i++)
		for (size_t k = 0; k < CRED_NEEDLES; k++)
			if (cs->v[i].needle_len[k] > w)
				w = cs->v[i].needle_len[k];
	/* percent-encoded twice: 9 bytes for each */
	cs->window = w * 9;
}

int creds_set_placeholder(struct cred *c, const char *ph)
{
	char *copy = strdup(ph);

	if (!copy)
		return -1;
	free(c->ph);
	c->ph = copy;
	c->ph_len = strlen(ph);
	return make_needles(c);
}

static int random_placeholder(struct cred *c, struct ab_err *e)
{
	const char *prefix = c->pc->prefix ? c->pc->prefix : "";
	size_t pre = strlen(prefix), len = c->pc->length;
	char *ph = malloc(len + 1);

	if (!ph)
		return ab_fail(e, ENOMEM, "placeholder");
	memcpy(ph, prefix, pre);
	for (size_t i = pre; i < len;) {
		unsigned char rnd[64];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			free(ph);
			return ab_fail(e, errno, "getrandom for a placeholder");
		}
		/* 248 = 4 x 62: below it, a byte modulo 62 is uniform */
		for (size_t k = 0; k < sizeof(rnd) && i < len; k++)
			if (rnd[k] < 248)
				ph[i++] = b62[rnd[k] % 62];
	}
	ph[len] = '\0';
	c->ph = ph;
	c->ph_len = len;
	return make_needles(c) < 0 ? ab_fail(e, ENOMEM, "placeholder") : 0;
}

int creds_new(const struct policy *p, struct creds **out, struct ab_err *e)
{
	struct creds *cs;

	*out = NULL;
	if (!p->n_creds)
		return 0;
	if (!(cs = calloc(1, sizeof(*cs))) || !(cs->v = calloc(p->n_creds, sizeof(*cs->v)))) {
		free(cs);
		return ab_fail(e, ENOMEM, "credentials");
	}
	for (size_t i = 0; i < p->n_creds; i++, cs->n++) {
		cs->v[i].pc = &p->creds[i];
		if (random_placeholder(&cs->v[i], e) < 0) {
			ab_context(e, "[credential %s]", p->creds[i].name);
			creds_free(cs);
			return -1;
		}
	}
	set_window(cs);
	*out = cs;
	return 0;
}

int creds_set_value(struct cred *c, const char *value, size_t n)
{
	/* a page of its own, locked: never swapped out (where RLIMIT_MEMLOCK allows) */
	size_t size = (n + 1 + 4095) & ~(size_t)4095;
	char *v = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (v == MAP_FAILED)
		return -1;
	(void)mlock(v, size);
	(void)madvise(v, size, MADV_DONTDUMP);
	memcpy(v, value, n);
	v[n] = '\0';
	c->value = v;
	c->value_len = n;
	return cred_forms_make(c);
}

void creds_free(struct creds *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++) {
		struct cred *c = &cs->v[i];
		if (c->value) {
			size_t size = (c->value_len + 1 + 4095) & ~(size_t)4095;
			explicit_bzero(c->value, size);
			munmap(c->value, size);
		}
		cred_forms_free(c);
		free(c->ph);
		for (size_t k = 0; k < CRED_NEEDLES; k++)
			free(c->needle[k]);
	}
	free(cs->v);
	free(cs);
}

bool cred_bound(const struct cred *c, const char *method, const char *host,
		const struct http_target *t)
{
	const char *rule;

	/* methods whose answer is the request itself: the origin would echo the real value */
	if (!strcmp(method, "TRACE") || !strcmp(method, "TRACK"))
		return false;
	return http_rules_decide(&c->pc->rules, method, host, t, &rule) == HTTP_ALLOW;
}

/* ---------- the request head ---------- */

/* piece with each placeholder of c replaced by with (into o) and removed (into rest); false
 * when it held none. */
static bool substitute(const struct cred *c, const char *piece, size_t n, const char *with,
		       size_t wn, struct cbuf *o, struct cbuf *rest)
{
	const char *p = piece ? piece : "", *end = p + n, *hit;
	bool any = false;

	while ((hit = find(p, (size_t)(end - p), c->ph, c->ph_len, false))) {
		cbuf_put(o, p, (size_t)(hit - p));
		cbuf_put(rest, p, (size_t)(hit - p));
		cbuf_put(o, with, wn);
		p = hit + c->ph_len;
		any = true;
	}
	cbuf_put(o, p, (size_t)(end - p));
	cbuf_put(rest, p, (size_t)(end - p));
	return any;
}

static void leak_at(struct cred_result *r, int who, const char *what, const char *name, size_t n)
{
	r->leak = who;
	snprintf(r->where_buf, sizeof(r->where_buf), "%s%s%.*s", what, name ? " " : "",
		 (int)(n < 64 ? n : 64), name ? name : "");
	r->where = r->where_buf;
}

/* The request line: a bound query credential's parameter gets its value. */
static int request_line(const struct creds *cs, const bool *bound, const char *line, size_t n,
			struct cbuf *o, struct cred_result *r)
{
	struct cbuf rest = {0}, cur = {0}, next = {0};
	int found;

	cbuf_put(&cur, line, n);
	for (size_t i = 0; i < cs->n; i++) {
		const struct cred *c = &cs->v[i];
		const char *q, *p, *end;
		size_t pn = strlen(c->pc->template);
		struct cbuf enc = {0};
		if (!bound[i] || c->pc->place != CRED_PLACE_QUERY || !c->value || cur.oom)
			continue;
		/* ?a=b&NAME=PLACEHOLDER&c: only that parameter's value */
		end = cur.s + cur.n;
		q = memchr(cur.s, '?', cur.n);
		if (!q)
			continue;
		cenc_pct_encode(&enc, c->value, c->value_len);
		cbuf_put(&next, cur.s, (size_t)(q + 1 - cur.s));
		for (p = q + 1; p < end;) {
			const char *amp = memchr(p, '&', (size_t)(end - p));
			const char *sp = memchr(p, ' ', (size_t)(end - p));
			const char *stop = amp && (!sp || amp < sp) ? amp : sp ? sp : end;
			if ((size_t)(stop - p) > pn && !memcmp(p, c->pc->template, pn) &&
			    p[pn] == '=' && !enc.oom) {
				struct cbuf dropped = {0};
				cbuf_put(&next, p, pn + 1);
				if (substitute(c, p + pn + 1, (size_t)(stop - p - pn - 1), enc.s,
					       enc.n, &next, &dropped))
					r->used |= 1u << i;
				cbuf_free(&dropped);
			} else {
				cbuf_put(&next, p, (size_t)(stop - p));
			}
			if (stop == sp || stop == end) {
				cbuf_put(&next, stop, (size_t)(end - stop));
				break;
			}
			cbuf_put(&next, "&", 1);
			p = stop + 1;
		}
		cbuf_free(&enc);
		cbuf_free(&cur);
		cur = next;
		next = (struct cbuf){0};
	}
	/* what is left once each real value is taken out must hold no placeholder */
	cbuf_put(&rest, cur.s, cur.n);
	for (size_t i = 0; i < cs->n && !rest.oom; i++) {
		struct cbuf pe = {0}, tmp = {0};
		if (!(r->used >> i & 1))
			continue;
		cenc_pct_encode(&pe, cs->v[i].value, cs->v[i].value_len);
		for (const char *h; !pe.oom && (h = memmem(rest.s, rest.n, pe.s, pe.n));) {
			cbuf_free(&tmp);
			cbuf_put(&tmp, rest.s, (size_t)(h - rest.s));
			cbuf_put(&tmp, h + pe.n, rest.n - (size_t)(h - rest.s) - pe.n);
			cbuf_free(&rest);
			rest = tmp;
			tmp = (struct cbuf){0};
		}
		cbuf_free(&pe);
	}
	found = cur.oom || rest.oom || next.oom ? CRED_OOM : creds_scan(cs, rest.s, rest.n, false);
	if (found >= 0)
		leak_at(r, found, "the request-target", NULL, 0);
	else
		cbuf_put(o, cur.s, cur.n);
	cbuf_free(&rest);
	cbuf_free(&cur);
	cbuf_free(&next);
	return found == CRED_OOM ? -1 : found >= 0;
}

/* One header line (no CRLF): a bound credential's header (or Basic) gets its value. */
static int header_line(const struct creds *cs, const bool *bound, const char *line, size_t n,
		       struct cbuf *o, struct cred_result *r, uint32_t *seen)
{
	const char *colon = memchr(line, ':', n), *v;
	size_t nl = colon ? (size_t)(colon - line) : n, vn;
	struct cbuf rest = {0}, val = {0};
	int found;

	if (!colon)
		goto plain;
	v = colon + 1;
	while (v < line + n && (*v == ' ' || *v == '\t'))
		v++;
	vn = (size_t)(line + n - v);
	for (size_t i = 0; i < cs->n; i++) {
		const struct cred *c = &cs->v[i];
		const char *hn = c->pc->header_name;
		if (!bound[i] || !c->value || c->pc->place == CRED_PLACE_QUERY || !hn ||
		    strlen(hn) != nl || strncasecmp(hn, line, nl))
			continue;
		*seen |= 1u << i;
		if (c->pc->place == CRED_PLACE_HEADER) {
			if (!substitute(c, v, vn, c->value, c->value_len, &val, &rest))
				goto reset;
		} else {
			struct cbuf dec = {0}, sub = {0};
			bool ok = vn > 6 && !strncasecmp(v, "Basic ", 6) &&
				  cenc_b64_decode(&dec, v + 6, vn - 6) && !dec.oom &&
				  substitute(c, dec.s, dec.n, c->value, c->value_len, &sub, &rest);
			if (ok) {
				cbuf_put(&val, "Basic ", 6);
				cenc_b64_encode(&val, (unsigned char *)sub.s, sub.n, cenc_b64std);
			}
			cbuf_free(&dec);
			cbuf_free(&sub);
			if (!ok)
				goto reset;
		}
		r->used |= 1u << i;
		found = rest.oom || val.oom ? CRED_OOM : creds_scan(cs, rest.s, rest.n, false);
		if (found == CRED_NONE) {
			cbuf_put(o, line, (size_t)(v - line));
			cbuf_put(o, val.s, val.n);
		}
		goto done;
	reset:
		cbuf_free(&val);
		cbuf_free(&rest);
	}
plain:
	found = creds_scan(cs, line, n, false);
	if (found == CRED_NONE)
		cbuf_put(o, line, n);
done:
	if (found >= 0)
		leak_at(r, found, "header", line, nl);
	cbuf_free(&rest);
	cbuf_free(&val);
	return found == CRED_OOM ? -1 : found >= 0;
}

/* add = yes: a bound credential's header the request lacked. */
static void add_headers(const struct creds *cs, const bool *bound, uint32_t seen, struct cbuf *o,
			struct cred_result *r)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cred *c = &cs->v[i];
		const char *hole = strstr(c->pc->template, "{}");
		if (!bound[i] || !c->pc->add || !c->value || (seen >> i & 1) || !hole)
			continue;
		cbuf_put_str(o, c->pc->header_name);
		cbuf_put(o, ": ", 2);
		if (c->pc->place == CRED_PLACE_BASIC) {
			struct cbuf plain = {0};
			cbuf_put(&plain, c->pc->template, (size_t)(hole - c->pc->template));
			cbuf_put(&plain, c->value, c->value_len);
			cbuf_put(o, "Basic ", 6);
			if (plain.oom)
				o->oom = true;
			else
				cenc_b64_encode(o, (unsigned char *)plain.s, plain.n, cenc_b64std);
			cbuf_free(&plain);
		} else {
			cbuf_put(o, c->pc->template, (size_t)(hole - c->pc->template));
			cbuf_put(o, c->value, c->value_len);
			cbuf_put_str(o, hole + 2);
		}
		cbuf_put(o, "\r\n", 2);
		r->used |= 1u << i;
		r->added |= 1u << i;
	}
}

int creds_request(const struct creds *cs, const bool *bound, const char *head, size_t n, char **out,
		  size_t *out_n, struct cred_result *r)
{
	struct cbuf o = {0};
	const char *p = head, *end = head + n, *eol;
	uint32_t seen = 0;
	int rc;

	*out = NULL;
	*r = (struct cred_result){.leak = CRED_NONE};
	if (!(eol = memmem(p, n, "\r\n", 2)))
		return -1;
	if ((rc = request_line(cs, bound, p, (size_t)(eol - p), &o, r)) != 0)
		goto fail;
	cbuf_put(&o, "\r\n", 2);
	for (p = eol + 2; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p;
	     p = eol + 2) {
		if ((rc = header_line(cs, bound, p, (size_t)(eol - p), &o, r, &seen)) != 0)
			goto fail;
		cbuf_put(&o, "\r\n", 2);
	}
	add_headers(cs, bound, seen, &o, r);
	/* the empty line, and whatever a malformed head has after its last CRLF: scanned too */
	if ((rc = creds_scan(cs, p, (size_t)(end - p), false)) != CRED_NONE) {
		if (rc >= 0)
			leak_at(r, rc, "the request head", NULL, 0);
		rc = rc >= 0 ? 1 : -1;
		goto fail;
	}
	cbuf_put(&o, p, (size_t)(end - p));
	if (o.oom) {
		rc = -1;
		goto fail;
	}
	*out = o.s;
	*out_n = o.n;
	return 0;
fail:
	cbuf_free(&o);
	r->used = r->added = 0;
	return rc;
}
