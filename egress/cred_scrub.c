/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The response side of credential brokering (include/credential.h): a real value is never
 * handed to the command. Each credential's value is looked for in the forms the request side
 * recognises a placeholder in (as written in any case, base64 in both alphabets at the three
 * alignments, hex in either case), each byte of it also percent-encoded once or twice, and
 * every match is overwritten. A body keeps its length (its framing was sent before its bytes
 * are read): the value becomes its placeholder when the two have the same length, else the
 * placeholder repeated or cut to the value's length, in the same encoding. A head may change
 * length, so there the value as written becomes the placeholder itself. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "cred_encode.h"
#include "credential.h"

enum match { M_NO, M_PARTIAL, M_FULL };

/* ---------- the forms, made once a value is known ---------- */

static bool b64_char(const char *alpha, char c)
{
	return c && memchr(alpha, c, 64);
}

static unsigned b64_bits(const char *alpha, char c)
{
	return (unsigned)((const char *)memchr(alpha, c, 64) - alpha);
}

/* What takes the value's place in a body: the placeholder, repeated or cut to n bytes. */
static void stand_in(const struct cred *c, struct cbuf *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cbuf_put(o, &c->ph[i % c->ph_len], 1);
}

/* Base64 at pad bytes into its group: the characters that hold the value's bits alone, and
 * the boundary characters' share of them (lead: the low bits of the one before, trail: the
 * high bits of the one after). */
static void b64_form(struct cred_form *f, const char *bytes, size_t n, size_t pad,
		     const char *alpha, struct cbuf *o)
{
	struct cbuf raw = {0}, enc = {0};
	size_t first = (pad * 8 + 5) / 6, last = ((pad + n) * 8) / 6;

	cbuf_put(&raw, "\0\0", pad);
	cbuf_put(&raw, bytes, n);
	if (!raw.oom)
		cenc_b64_encode(&enc, (unsigned char *)raw.s, raw.n, alpha);
	cbuf_free(&raw);
	if (enc.oom || raw.oom) {
		o->oom = true;
		cbuf_free(&enc);
		return;
	}
	cbuf_put(o, enc.s + first, last - first);
	f->lead = first ? enc.s[first - 1] : 0;
	f->lead_bits = first ? (unsigned char)(first * 6 - pad * 8) : 0;
	f->trail_bits = (unsigned char)((pad + n) * 8 - last * 6);
	f->trail = f->trail_bits ? enc.s[last] : 0;
	f->alpha = alpha;
	cbuf_free(&enc);
}

static void hex_form(const char *bytes, size_t n, struct cbuf *o)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		char q[2] = {digits[(unsigned char)bytes[i] >> 4], digits[bytes[i] & 15]};
		cbuf_put(o, q, 2);
	}
}

/* Form k of value v (find) or of its stand-in r (put) into o. */
static void form_text(struct cred_form *f, size_t k, const char *bytes, size_t n, struct cbuf *o)
{
	if (k == 0)
		cbuf_put(o, bytes, n);
	else if (k <= 6)
		b64_form(f, bytes, n, (k - 1) % 3, k <= 3 ? cenc_b64std : cenc_b64url, o);
	else
		hex_form(bytes, n, o);
}

void cred_forms_free(struct cred *c)
{
	if (c->forms_mem) {
		explicit_bzero(c->forms_mem, c->forms_size);
		munmap(c->forms_mem, c->forms_size);
	}
	c->forms_mem = NULL;
	c->forms_size = 0;
	memset(c->form, 0, sizeof(c->form));
}

/* The forms live in one locked page run of their own, like the value: they are the value. */
static int forms_place(struct cred *c, struct cbuf *find, struct cbuf *put)
{
	size_t total = 0, at = 0;

	for (size_t k = 0; k < CRED_FORMS; k++)
		total += find[k].n + put[k].n + 2;
	c->forms_size = (total + 4095) & ~(size_t)4095;
	c->forms_mem =
	    mmap(NULL, c->forms_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->forms_mem == MAP_FAILED) {
		c->forms_mem = NULL;
		return -1;
	}
	(void)mlock(c->forms_mem, c->forms_size);
	(void)madvise(c->forms_mem, c->forms_size, MADV_DONTDUMP);
	for (size_t k = 0; k < CRED_FORMS; k++) {
		struct cred_form *f = &c->form[k];
		f->find = memcpy(c->forms_mem + at, find[k].s, find[k].n + 1);
		at += find[k].n + 1;
		f->put = memcpy(c->forms_mem + at, put[k].s, put[k].n + 1);
		at += put[k].n + 1;
		f->len = find[k].n;
		f->fold = k == 0 || k == 7;
		f->wraps = k != 0;
	}
	return 0;
}

int cred_forms_make(struct cred *c)
{
	struct cbuf find[CRED_FORMS] = {0}, put[CRED_FORMS] = {0}, r = {0};
	bool oom = false;
	int rc = -1;

	cred_forms_free(c);
	memset(&c->filter, 0, sizeof(c->filter));
	stand_in(c, &r, c->value_len);
	for (size_t k = 0; k < CRED_FORMS && !r.oom; k++) {
		struct cred_form keep;
		form_text(&c->form[k], k, r.s, r.n, &put[k]);
		keep = c->form[k]; /* the stand-in's boundary characters */
		form_text(&c->form[k], k, c->value, c->value_len, &find[k]);
		c->form[k].lead = keep.lead;
		c->form[k].trail = keep.trail;
		oom |= find[k].oom || put[k].oom || !find[k].n || find[k].n != put[k].n;
	}
	if (!r.oom && !oom)
		rc = forms_place(c, find, put);
	for (size_t k = 0; k < CRED_FORMS; k++) {
		c->form[k].find = rc == 0 ? c->form[k].find : NULL;
		if (rc == 0)
			cred_filter_add(&c->filter, c->form[k].find, c->form[k].fold,
					c->form[k].wraps);
		cbuf_free(&find[k]);
		cbuf_free(&put[k]);
	}
	cbuf_free(&r);
	return rc;
}

/* ---------- matching ---------- */

static bool same(unsigned char a, char want, bool fold)
{
	unsigned char w = (unsigned char)want;

	if (fold && a >= 'A' && a <= 'Z')
		a = (unsigned char)(a + 32);
	if (fold && w >= 'A' && w <= 'Z')
		w = (unsigned char)(w + 32);
	return a == w;
}

static bool line_break(char c)
{
	return c == '\r' || c == '\n';
}

/* A line break (CRLF, or LF alone) inside a wrapped form: how many bytes. */
static size_t wrap_at(const struct cred_form *f, const char *b, size_t n, size_t j)
{
	if (!f->wraps || j >= n || !line_break(b[j]))
		return 0;
	return b[j] == '\r' && j + 1 < n && b[j + 1] == '\n' ? 2 : 1;
}

/* Where a match may be, after so many of the value's bytes: the ways of reading the bytes so
 * far that spell them (a '%' of the data may be the value's own, or start %XX or %25XX). */
#define MATCH_WAYS 32

struct ways {
	size_t at[MATCH_WAYS];
	size_t n;
	bool short_of_data; /* a way ran past the end of the data */
};

static void way_add(struct ways *w, size_t at)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->at[i] == at)
			return;
	if (w->n < MATCH_WAYS) /* a value with more '%' than this is not read every way */
		w->at[w->n++] = at;
}

static int hex2(const char *p)
{
	int hi = cenc_hexval(p[0]), lo = hi < 0 ? -1 : cenc_hexval(p[1]);

	return lo < 0 ? -1 : hi << 4 | lo;
}

/* Each reading of the data at j that spells want, into next: the byte itself; %XX; %25XX;
 * JSON's \/ for '/'. */
static void readings(const struct cred_form *f, const char *b, size_t n, size_t j, bool final,
		     char want, struct ways *next)
{
	int v;

	if (same((unsigned char)b[j], want, f->fold))
		way_add(next, j + 1);
	if (b[j] == '\\' && want == '/' && (j + 1 < n ? b[j + 1] == '/' : !final))
		j + 1 < n ? way_add(next, j + 2) : (void)(next->short_of_data = true);
	if (b[j] != '%')
		return;
	if (j + 3 > n) {
		next->short_of_data |= !final;
		return;
	}
	if ((v = hex2(b + j + 1)) < 0)
		return;
	if (same((unsigned char)v, want, f->fold))
		way_add(next, j + 3);
	if (v != '%')
		return;
	if (j + 5 > n)
		next->short_of_data |= !final;
	else if ((v = hex2(b + j + 3)) >= 0 && same((unsigned char)v, want, f->fold))
		way_add(next, j + 5);
}

/* Whether form f starts at b[i]: *span its bytes in the stream (the longest reading). */
static enum match match_form(const struct cred_form *f, const char *b, size_t n, size_t i,
			     bool final, size_t *span)
{
	struct ways cur = {.at = {i}, .n = 1}, next;
	bool short_of_data = false;

	for (size_t k = 0; k < f->len && cur.n; k++) {
		next = (struct ways){0};
		for (size_t w = 0; w < cur.n; w++) {
			size_t j = cur.at[w] + (k ? wrap_at(f, b, n, cur.at[w]) : 0);
			if (j >= n || (f->wraps && b[j] == '\r' && j + 1 == n))
				next.short_of_data |= !final;
			else
				readings(f, b, n, j, final, f->find[k], &next);
		}
		short_of_data |= next.short_of_data;
		cur = next;
	}
	if (!cur.n)
		return short_of_data ? M_PARTIAL : M_NO;
	*span = 0;
	for (size_t w = 0; w < cur.n; w++)
		if (cur.at[w] - i > *span)
			*span = cur.at[w] - i;
	/* a base64 form's last character shares bits with the next one, fixed below */
	if (f->trail_bits && !final && i + *span + wrap_at(f, b, n, i + *span) >= n)
		return M_PARTIAL;
	return short_of_data && !final ? M_PARTIAL : M_FULL;
}

/* ---------- scrubbing ---------- */

/* A form of a value found at b[at, at + span). */
struct hit {
	size_t at, span;
	const struct cred *c;
	const struct cred_form *f;
};

struct scrub {
	const struct creds *cs;
	const char *b;
	char *w; /* b itself, overwritten in place (a body); NULL: into out (a head) */
	size_t n;
	bool final; /* nothing follows: no match can be cut off */
	struct cbuf out;
	size_t copied;	     /* a head: b[0, copied) is in out */
	size_t hold;	     /* where the bytes kept for the next piece start (n: none) */
	const char *overlay; /* a body: the bytes held from the last piece, as its hits left them */
	size_t overlay_n;
	char *held_in; /* a body: b[hold, n) as it came, before any hit was overwritten */
	struct hit *hits;
	size_t n_hits, cap_hits;
	bool oom;
	uint32_t found;
};

/* The filter for every value at once: one credential's own, or theirs merged into buf. */
static const struct cred_filter *filter_for(const struct creds *cs, struct cred_filter *buf)
{
	if (cs->n == 1)
		return &cs->v[0].filter;
	memset(buf, 0, sizeof(*buf));
	for (size_t v = 0; v < cs->n; v++)
		cred_filter_merge(buf, &cs->v[v].filter);
	return buf;
}

static const char *alphabet_of(char c)
{
	return b64_char(cenc_b64std, c)	  ? cenc_b64std
	       : b64_char(cenc_b64url, c) ? cenc_b64url
					  : NULL;
}

/* A boundary character old (of either alphabet, kept) with the value's share of its bits (bits
 * of them, low for the one before, high for the one after) taken from the stand-in's with. */
static char boundary(const struct cred_form *f, char old, char with, unsigned bits, bool low)
{
	const char *alpha = alphabet_of(old);
	unsigned mask = low ? (1u << bits) - 1 : ((1u << bits) - 1) << (6 - bits);
	unsigned v = (b64_bits(alpha, old) & ~mask) | (b64_bits(f->alpha, with) & mask);

	return alpha[v & 63];
}

/* The base64 character next to a form at b[at] (before it: dir -1) over a line break, or -1. */
static long next_to(const struct cred_form *f, const char *b, size_t n, size_t at, int dir)
{
	long j = (long)at;

	if (dir > 0) {
		j += (long)wrap_at(f, b, n, at);
		return j < (long)n && alphabet_of(b[j]) ? j : -1;
	}
	if (j > 0 && f->wraps && b[j - 1] == '\n')
		j--;
	if (j > 0 && f->wraps && b[j - 1] == '\r')
		j--;
	return j > 0 && alphabet_of(b[j - 1]) ? j - 1 : -1;
}

/* A body: the hit overwritten where it is, and the base64 characters either side that share
 * its bits. */
static void replace_in_place(struct scrub *s, const struct hit *h)
{
	const struct cred_form *f = h->f;
	char *w = s->w;
	long lead = f->lead_bits ? next_to(f, w, s->n, h->at, -1) : -1;
	long trail = f->trail_bits ? next_to(f, w, s->n, h->at + h->span, 1) : -1;

	for (size_t i = 0, k = 0; i < h->span; i++)
		if (!f->wraps || !line_break(w[h->at + i]))
			w[h->at + i] = f->put[k++ % f->len];
	if (lead >= 0)
		w[lead] = boundary(f, w[lead], f->lead, f->lead_bits, true);
	if (trail >= 0)
		w[trail] = boundary(f, w[trail], f->trail, f->trail_bits, false);
}

/* A head, copied into out: the value as written (or percent-encoded) becomes the placeholder;
 * its other forms as in a body. A hit that overlaps the one before overwrites what is left. */
static void replace_copying(struct scrub *s, const struct hit *h)
{
	const struct cred_form *f = h->f;
	size_t from = h->at > s->copied ? h->at : s->copied, end = h->at + h->span;
	long lead = f->lead_bits && h->at > s->copied ? next_to(f, s->b, s->n, h->at, -1) : -1;
	long trail = f->trail_bits ? next_to(f, s->b, s->n, end, 1) : -1;

	if (end <= s->copied)
		return;
	if (lead >= 0 && (size_t)lead < s->copied) /* out holds another hit's bytes there */
		lead = -1;
	cbuf_put(&s->out, s->b + s->copied, from - s->copied);
	if (lead >= 0 && !s->out.oom) /* out's last byte is b[lead] or after it */
		s->out.s[s->out.n - (h->at - (size_t)lead)] =
		    boundary(f, s->b[lead], f->lead, f->lead_bits, true);
	if (f == &h->c->form[0] && from == h->at && h->span == f->len)
		cbuf_put(&s->out, h->c->ph, h->c->ph_len);
	else if (f == &h->c->form[0] && from == h->at)
		cenc_pct_encode(&s->out, h->c->ph, h->c->ph_len);
	else
		for (size_t i = from; i < end; i++)
			cbuf_put(&s->out,
				 f->wraps && line_break(s->b[i]) ? &s->b[i]
								 : &f->put[(i - h->at) % f->len],
				 1);
	s->copied = end;
	if (trail >= 0) {
		char t = boundary(f, s->b[trail], f->trail, f->trail_bits, false);
		cbuf_put(&s->out, s->b + end, (size_t)trail - end);
		cbuf_put(&s->out, &t, 1);
		s->copied = (size_t)trail + 1;
	}
}

/* The longest form of any value at b[i] into *h: M_FULL, M_PARTIAL (one may still grow past
 * the data's end, and more data comes: a longer value must not lose to a shorter), M_NO. */
static enum match longest_at(struct scrub *s, size_t i, struct hit *h)
{
	bool partial = false, full = false;

	for (size_t v = 0; v < s->cs->n; v++) {
		const struct cred *c = &s->cs->v[v];
		for (size_t k = 0; k < CRED_FORMS && c->form[k].find; k++) {
			size_t span = 0;
			enum match m = match_form(&c->form[k], s->b, s->n, i, s->final, &span);
			partial |= m == M_PARTIAL;
			if (m == M_FULL && (!full || span > h->span))
				*h = (struct hit){i, span, c, &c->form[k]};
			full |= m == M_FULL;
		}
	}
	return partial && !s->final ? M_PARTIAL : full ? M_FULL : M_NO;
}

static bool hit_add(struct scrub *s, const struct hit *h)
{
	if (s->n_hits == s->cap_hits) {
		size_t cap = s->cap_hits ? s->cap_hits * 2 : 8;
		struct hit *v = realloc(s->hits, cap * sizeof(*v));
		if (!v)
			return false;
		s->hits = v;
		s->cap_hits = cap;
	}
	s->hits[s->n_hits++] = *h;
	s->found |= 1u << (h->c - s->cs->v);
	return true;
}

/* Holds back from i, and the base64 character before it (over a line break) that a form
 * starting at i shares bits with. */
static void hold_from(struct scrub *s, size_t i)
{
	static const struct cred_form any = {.wraps = true};
	long lead = next_to(&any, s->b, s->n, i, -1);

	s->hold = lead >= 0 ? (size_t)lead : i;
}

/* The most bytes a form can take in a stream from the character before it on: each of its
 * characters read as %25XX (5 bytes) after a line break (2), and the base64 character before
 * it over a line break (3). It depends on the values' lengths alone. */
static size_t hold_bound(const struct creds *cs)
{
	size_t longest = 0;

	for (size_t v = 0; v < cs->n; v++)
		for (size_t k = 0; k < CRED_FORMS && cs->v[v].form[k].find; k++)
			if (cs->v[v].form[k].len > longest)
				longest = cs->v[v].form[k].len;
	return 7 * longest + 3;
}

/* A line break at b[p] that a wrapped form (base64, hex) may run over: a character of theirs
 * just before it (CRLF or LF). No other form holds a line break: a value has none. */
static bool crossable(const char *b, size_t p)
{
	if (p && b[p - 1] == '\r')
		p--;
	return p && alphabet_of(b[p - 1]);
}

/* The end of a piece that more follows: what is held back for the next piece is decided by the
 * bytes alone, never by whether they begin a value. Held back so, bytes that are a value's
 * beginning came back later, or in a frame or record of their own, than bytes that are not:
 * an origin that echoes the command's guesses let it learn the value a character at a time.
 * So the held bytes are the last hold_bound's worth, but never from before a line break no
 * form can run over: a stream of lines (events, JSON lines) is held up by nothing. Every form
 * cut at the end starts within those bytes (scrub_run's partial match is the check). */
static void hold_end(struct scrub *s)
{
	size_t bound = hold_bound(s->cs), stop = s->n > bound ? s->n - bound : 0, j = s->n;

	while (j > stop && !(s->b[j - 1] == '\n' && !crossable(s->b, j - 1)))
		j--;
	if (j < s->hold)
		s->hold = j;
}

/* A body: every hit found overwritten, in the order of their starts, those that reach into the
 * bytes held back for the next piece too, and those bytes kept twice: as they came, to be read
 * again with the next piece (a form may start inside a hit: a value's last '%' beginning an
 * escape of its base64; read altered, it would be lost), and as the hits before them left them,
 * written over them once they are read (before the hits found then, which start later). The
 * bytes held back stay those a match could still grow over: a few times a value's length. */
static void overwrite_body(struct scrub *s)
{
	size_t held = s->n - s->hold;

	if (s->oom)
		return;
	if (held && !(s->held_in = malloc(held))) {
		s->oom = true;
		return;
	}
	if (held)
		memcpy(s->held_in, s->b + s->hold, held);
	if (s->overlay_n) /* the hits of earlier pieces, over the bytes held from them */
		memcpy(s->w, s->overlay, s->overlay_n);
	for (size_t k = 0; k < s->n_hits; k++)
		replace_in_place(s, &s->hits[k]);
}

/* Finds every hit on the bytes as they came (a hit inside another is found too), then
 * overwrites them. */
static void scrub_run(struct scrub *s)
{
	struct cred_filter *merged = s->cs->n > 1 ? malloc(sizeof(*merged)) : NULL;
	const struct cred_filter *f;
	size_t i = 0;

	s->hold = s->n;
	if (s->cs->n > 1 && !merged) {
		s->oom = true;
		return;
	}
	f = filter_for(s->cs, merged);
	while ((i = cred_filter_next(f, (const unsigned char *)s->b, i, s->n)) < s->n) {
		struct hit h;
		enum match m = longest_at(s, i, &h);
		if (m == M_PARTIAL) {
			hold_from(s, i);
			break;
		}
		if (m == M_FULL && !hit_add(s, &h)) {
			s->oom = true;
			break;
		}
		i++;
	}
	free(merged);
	if (!s->final)
		hold_end(s);
	if (s->w)
		overwrite_body(s);
	else
		for (size_t k = 0; k < s->n_hits && !s->oom; k++)
			replace_copying(s, &s->hits[k]);
	if (!s->w && s->hold > s->copied)
		cbuf_put(&s->out, s->b + s->copied, s->hold - s->copied);
	free(s->hits);
	s->oom |= s->out.oom;
}

/* Frees what may hold a value's bytes, wiped first. */
static void wipe_free(char *p, size_t n)
{
	if (p)
		explicit_bzero(p, n);
	free(p);
}

int creds_scrub_stream(const struct creds *cs, struct creds_scrub *st, char *buf, size_t n,
		       bool final, char **out, size_t *out_n)
{
	struct scrub s = {.cs = cs, .final = final, .n = st->len + n};
	char *run = buf, *keep_out = NULL;

	*out = NULL;
	*out_n = 0;
	/* the last run's bytes past those sent held bytes before their scrub */
	if (st->run_len > st->run_sent)
		explicit_bzero(st->run + st->run_sent, st->run_len - st->run_sent);
	st->run_len = st->run_sent = 0;
	if (!s.n)
		return 0;
	if (st->len) { /* the bytes held back, then these: a run of their own */
		if (s.n > st->run_cap) {
			wipe_free(st->run, st->run_cap);
			st->run_cap = 0;
			if (!(st->run = malloc(s.n)))
				return -1;
			st->run_cap = s.n;
		}
		run = st->run;
		st->run_len = s.n;
		memcpy(run, st->held, st->len);
		if (n)
			memcpy(run + st->len, buf, n);
		s.overlay = st->held_out;
		s.overlay_n = st->len;
	}
	s.b = s.w = run;
	scrub_run(&s);
	if (!s.oom && s.hold < s.n && !(keep_out = malloc(s.n - s.hold)))
		s.oom = true;
	if (s.oom) {
		wipe_free(s.held_in, s.n - s.hold);
		return -1;
	}
	if (keep_out)
		memcpy(keep_out, s.w + s.hold, s.n - s.hold);
	wipe_free(st->held, st->len);
	wipe_free(st->held_out, st->len);
	st->held = s.held_in;
	st->held_out = keep_out;
	st->len = s.n - s.hold;
	st->found |= s.found;
	*out = s.w;
	*out_n = s.hold;
	if (run == st->run)
		st->run_sent = s.hold;
	return 0;
}

void creds_scrub_free(struct creds_scrub *st)
{
	wipe_free(st->held, st->len);
	wipe_free(st->held_out, st->len);
	wipe_free(st->run, st->run_cap);
	st->held = st->held_out = st->run = NULL;
	st->len = st->run_len = st->run_sent = st->run_cap = 0;
}

char *creds_redact(const struct creds *cs, const char *head, size_t n, size_t *out_n,
		   uint32_t *found, bool *oom)
{
	struct scrub s = {.cs = cs, .b = head, .n = n, .final = true};

	*oom = false;
	*found = 0;
	scrub_run(&s);
	if (s.oom || !s.found) {
		*oom = s.oom;
		cbuf_free(&s.out);
		return NULL;
	}
	*found = s.found;
	*out_n = s.out.n;
	return s.out.s;
}
