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

/* The byte at b[i] as an origin may have written it: itself, %XX, or %25XX. */
static enum match unit(const char *b, size_t n, size_t i, bool final, unsigned char *c,
		       size_t *used)
{
	int hi, lo;

	*c = (unsigned char)b[i];
	*used = 1;
	if (b[i] != '%')
		return M_FULL;
	if (i + 3 > n)
		return final ? M_FULL : M_PARTIAL;
	if ((hi = cenc_hexval(b[i + 1])) < 0 || (lo = cenc_hexval(b[i + 2])) < 0)
		return M_FULL;
	*c = (unsigned char)(hi << 4 | lo);
	*used = 3;
	if (*c != '%')
		return M_FULL;
	if (i + 5 > n)
		return final ? M_FULL : M_PARTIAL;
	if ((hi = cenc_hexval(b[i + 3])) >= 0 && (lo = cenc_hexval(b[i + 4])) >= 0)
		*c = (unsigned char)(hi << 4 | lo), *used = 5;
	return M_FULL;
}

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

/* Whether form f starts at b[i]: *span its bytes in the stream. */
static enum match match_form(const struct cred_form *f, const char *b, size_t n, size_t i,
			     bool final, size_t *span)
{
	size_t j = i;

	for (size_t k = 0; k < f->len; k++) {
		unsigned char c;
		size_t used;
		if (k)
			j += wrap_at(f, b, n, j);
		if (j >= n || (f->wraps && b[j] == '\r' && j + 1 == n))
			return final ? M_NO : M_PARTIAL;
		if (unit(b, n, j, final, &c, &used) == M_PARTIAL)
			return M_PARTIAL;
		if (!same(c, f->find[k], f->fold)) {
			if (b[j] != '%' || !same('%', f->find[k], false))
				return M_NO;
			used = 1; /* a '%' of the value itself */
		}
		j += used;
	}
	/* a base64 form's last character shares bits with the next one, fixed below */
	if (f->trail_bits && !final && j + wrap_at(f, b, n, j) >= n)
		return M_PARTIAL;
	*span = j - i;
	return M_FULL;
}

/* ---------- scrubbing ---------- */

struct scrub {
	const struct creds *cs;
	const char *b;
	char *w; /* b itself, overwritten in place (a body); NULL: into out (a head) */
	size_t n;
	bool final; /* nothing follows: no match can be cut off */
	struct cbuf out;
	size_t copied; /* b[0, copied) is dealt with: replaced, or in out */
	size_t hold;   /* where the bytes kept for the next piece start (n: none) */
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

/* The value's share of a boundary character, given the stand-in's: bits is how many, low
 * (lead) or high (trail) ones. */
static char boundary(const struct cred_form *f, char old, char with, unsigned bits, bool low)
{
	unsigned mask = low ? (1u << bits) - 1 : ((1u << bits) - 1) << (6 - bits);
	unsigned v = (b64_bits(f->alpha, old) & ~mask) | (b64_bits(f->alpha, with) & mask);

	return f->alpha[v & 63];
}

/* A body: b[at, at + span), form f of a value, overwritten where it is (and the base64
 * characters either side that share its bits). */
static void replace_in_place(struct scrub *s, const struct cred_form *f, size_t at, size_t span)
{
	char *w = s->w;
	size_t lead = at, trail;

	/* the character before, over a line break */
	if (lead > s->copied && f->wraps && w[lead - 1] == '\n')
		lead--;
	if (lead > s->copied && f->wraps && w[lead - 1] == '\r')
		lead--;
	if (f->lead_bits && lead > s->copied && b64_char(f->alpha, w[lead - 1]))
		w[lead - 1] = boundary(f, w[lead - 1], f->lead, f->lead_bits, true);
	for (size_t i = 0, k = 0; i < span; i++)
		if (!f->wraps || !line_break(w[at + i]))
			w[at + i] = f->put[k++ % f->len];
	s->copied = at + span;
	trail = s->copied + wrap_at(f, w, s->n, s->copied);
	if (f->trail_bits && trail < s->n && b64_char(f->alpha, w[trail])) {
		w[trail] = boundary(f, w[trail], f->trail, f->trail_bits, false);
		s->copied = trail + 1;
	}
}

/* A head, copied into out: the value as written (or percent-encoded) becomes the placeholder;
 * its other forms as in a body. */
static void replace_copying(struct scrub *s, const struct cred *c, const struct cred_form *f,
			    size_t at, size_t span)
{
	bool lead = at > s->copied;
	size_t trail;

	cbuf_put(&s->out, s->b + s->copied, at - s->copied);
	if (f->lead_bits && lead && !s->out.oom && b64_char(f->alpha, s->b[at - 1]))
		s->out.s[s->out.n - 1] =
		    boundary(f, s->out.s[s->out.n - 1], f->lead, f->lead_bits, true);
	if (f == &c->form[0] && span == f->len)
		cbuf_put(&s->out, c->ph, c->ph_len);
	else if (f == &c->form[0])
		cenc_pct_encode(&s->out, c->ph, c->ph_len);
	else
		for (size_t i = 0, k = 0; i < span; i++)
			cbuf_put(&s->out,
				 f->wraps && line_break(s->b[at + i]) ? &s->b[at + i]
								      : &f->put[k++ % f->len],
				 1);
	s->copied = at + span;
	trail = s->copied + wrap_at(f, s->b, s->n, s->copied);
	if (f->trail_bits && trail < s->n && b64_char(f->alpha, s->b[trail])) {
		char t = boundary(f, s->b[trail], f->trail, f->trail_bits, false);
		cbuf_put(&s->out, s->b + s->copied, trail - s->copied);
		cbuf_put(&s->out, &t, 1);
		s->copied = trail + 1;
	}
}

/* The forms of every value at b[i]: M_FULL (replaced, s->copied moved on), M_PARTIAL (one may
 * run past the end), or M_NO. */
static enum match try_at(struct scrub *s, size_t i)
{
	enum match any = M_NO;

	for (size_t v = 0; v < s->cs->n; v++) {
		const struct cred *c = &s->cs->v[v];
		for (size_t k = 0; k < CRED_FORMS && c->form[k].find; k++) {
			size_t span = 0;
			enum match m = match_form(&c->form[k], s->b, s->n, i, s->final, &span);
			if (m == M_FULL) {
				if (s->w)
					replace_in_place(s, &c->form[k], i, span);
				else
					replace_copying(s, c, &c->form[k], i, span);
				s->found |= 1u << v;
				return M_FULL;
			}
			if (m == M_PARTIAL)
				any = M_PARTIAL;
		}
	}
	return any;
}

/* Holds back from i, and the character before it when a base64 form could start at i (its
 * first character shares bits with that one). */
static void hold_from(struct scrub *s, size_t i)
{
	if (i > s->copied &&
	    (b64_char(cenc_b64std, s->b[i - 1]) || b64_char(cenc_b64url, s->b[i - 1])))
		i--;
	s->hold = i;
}

static void scrub_run(struct scrub *s)
{
	struct cred_filter *merged = s->cs->n > 1 ? malloc(sizeof(*merged)) : NULL;
	const struct cred_filter *f;
	size_t i = 0;

	s->hold = s->n;
	if (s->cs->n > 1 && !merged) {
		s->out.oom = true;
		return;
	}
	f = filter_for(s->cs, merged);
	while ((i = cred_filter_next(f, (const unsigned char *)s->b, i, s->n)) < s->n) {
		enum match m = try_at(s, i);
		if (m == M_FULL) {
			i = s->copied;
			continue;
		}
		if (m == M_PARTIAL && !s->final) {
			hold_from(s, i);
			break;
		}
		i++;
	}
	free(merged);
	/* a form may start right after the last byte: the boundary character stays here */
	if (!s->final && s->hold == s->n)
		hold_from(s, s->n);
	if (!s->w && s->hold > s->copied)
		cbuf_put(&s->out, s->b + s->copied, s->hold - s->copied);
}

int creds_scrub_stream(const struct creds *cs, struct creds_scrub *st, char *buf, size_t n,
		       bool final, char **out, size_t *out_n)
{
	struct scrub s = {.cs = cs, .final = final, .n = st->len + n};
	char *run = buf, *keep = NULL;

	*out = NULL;
	*out_n = 0;
	free(st->run);
	st->run = NULL;
	if (!s.n)
		return 0;
	if (st->len) { /* the bytes held back, then these: a run of their own */
		if (!(run = st->run = malloc(s.n)))
			return -1;
		memcpy(run, st->held, st->len);
		if (n)
			memcpy(run + st->len, buf, n);
	}
	s.b = s.w = run;
	scrub_run(&s);
	if (s.out.oom || (s.hold < s.n && !(keep = malloc(s.n - s.hold))))
		return -1;
	if (keep)
		memcpy(keep, s.b + s.hold, s.n - s.hold);
	if (st->held)
		explicit_bzero(st->held, st->len);
	free(st->held);
	st->held = keep;
	st->len = s.n - s.hold;
	st->found |= s.found;
	*out = s.w;
	*out_n = s.hold;
	return 0;
}

void creds_scrub_free(struct creds_scrub *st)
{
	if (st->held)
		explicit_bzero(st->held, st->len);
	free(st->held);
	free(st->run);
	st->held = st->run = NULL;
	st->len = 0;
}

char *creds_redact(const struct creds *cs, const char *head, size_t n, size_t *out_n,
		   uint32_t *found, bool *oom)
{
	struct scrub s = {.cs = cs, .b = head, .n = n, .final = true};

	*oom = false;
	*found = 0;
	scrub_run(&s);
	if (s.out.oom || !s.found) {
		*oom = s.out.oom;
		cbuf_free(&s.out);
		return NULL;
	}
	*found = s.found;
	*out_n = s.out.n;
	return s.out.s;
}
