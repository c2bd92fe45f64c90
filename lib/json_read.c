/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The JSON reader (see include/json_read.h): recursive descent over a bounded text, the depth
 * bounded, so the stack is too. */
#include "json_read.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

struct reader {
	const char *s;
	size_t len, pos;
	struct ab_err *e;
};

static int bad(struct reader *r, const char *what)
{
	return ab_fail(r->e, 0, "invalid JSON at byte %zu: %s", r->pos, what);
}

static void skip_ws(struct reader *r)
{
	while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
				   r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
		r->pos++;
}

static bool lit(struct reader *r, const char *word)
{
	size_t n = strlen(word);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
		return false;
	r->pos += n;
	return true;
}

static int hex4(struct reader *r, uint32_t *v)
{
	*v = 0;
	if (r->len - r->pos < 4)
		return bad(r, "a \\u escape is cut short");
	for (int i = 0; i < 4; i++) {
		char c = r->s[r->pos++];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return bad(r, "a \\u escape has a non-hex digit");
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int escape(struct reader *r, char *o, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	uint32_t cp, lo;
	const char *p;

	if (r->pos >= r->len)
		return bad(r, "a string is cut short");
	if (r->s[r->pos] != 'u') {
		if (!r->s[r->pos] || !(p = strchr(from, r->s[r->pos])))
			return bad(r, "an unknown escape");
		o[(*n)++] = to[p - from];
		r->pos++;
		return 0;
	}
	r->pos++;
	if (hex4(r, &cp) < 0)
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return bad(r, "a lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (!lit(r, "\\u") || hex4(r, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return bad(r, "a high surrogate without its low half");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	*n += put_utf8(o + *n, cp);
	return 0;
}

/* At the opening quote. The decoded text is never longer than the escaped one. */
static int string(struct reader *r, char **out, size_t *len)
{
	size_t start = ++r->pos, n = 0, end = start;
	char *o;

	while (end < r->len && r->s[end] != '"')
		end += r->s[end] == '\\' ? 2 : 1;
	if (end >= r->len)
		return bad(r, "a string is not closed");
	if (!(o = malloc(end - start + 1)))
		return ab_fail(r->e, ENOMEM, "JSON");
	while (r->s[r->pos] != '"') {
		unsigned char c = (unsigned char)r->s[r->pos];
		if (c < 0x20) {
			free(o);
			return bad(r, "a control character in a string");
		}
		if (c >= 0x80) {
			uint32_t cp;
			size_t k =
			    utf8_decode((const unsigned char *)r->s + r->pos, r->len - r->pos, &cp);
			if (!k) {
				free(o);
				return bad(r, "a string is not valid UTF-8");
			}
			memcpy(o + n, r->s + r->pos, k);
			n += k;
			r->pos += k;
		} else if (c != '\\') {
			o[n++] = (char)c;
			r->pos++;
		} else if (r->pos++, escape(r, o, &n) < 0) {
			free(o);
			return -1;
		}
	}
	r->pos++;
	o[n] = '\0';
	*out = o;
	*len = n;
	return 0;
}

static size_t digits(struct reader *r)
{
	size_t n = 0;

	while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
		r->pos++, n++;
	return n;
}

static int number(struct reader *r, struct jnode *out)
{
	size_t start = r->pos;

	if (r->s[r->pos] == '-')
		r->pos++;
	if (r->pos < r->len && r->s[r->pos] == '0')
		r->pos++;
	else if (!digits(r))
		return bad(r, "a number without digits");
	if (r->pos < r->len && r->s[r->pos] == '.' && (r->pos++, !digits(r)))
		return bad(r, "a number without digits after its point");
	if (r->pos < r->len && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
		r->pos++;
		if (r->pos < r->len && (r->s[r->pos] == '+' || r->s[r->pos] == '-'))
			r->pos++;
		if (!digits(r))
			return bad(r, "a number without digits in its exponent");
	}
	out->type = JNODE_NUMBER;
	out->len = r->pos - start;
	if (!(out->str = strndup(r->s + start, out->len)))
		return ab_fail(r->e, ENOMEM, "JSON");
	return 0;
}

static int value(struct reader *r, struct jnode *out, int depth);

static int push(struct reader *r, struct jnode *parent, size_t *cap, struct jnode **slot)
{
	if (parent->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct jnode *k = realloc(parent->kids, ncap * sizeof(*k));
		if (!k)
			return ab_fail(r->e, ENOMEM, "JSON");
		parent->kids = k;
		*cap = ncap;
	}
	*slot = &parent->kids[parent->n];
	**slot = (struct jnode){0};
	parent->n++;
	return 0;
}

static bool duplicate(const struct jnode *obj, const struct jnode *m)
{
	for (size_t i = 0; i + 1 < obj->n; i++)
		if (obj->kids[i].key_len == m->key_len &&
		    !memcmp(obj->kids[i].key, m->key, m->key_len))
			return true;
	return false;
}

static int member(struct reader *r, struct jnode *obj, size_t *cap, int depth)
{
	struct jnode *m = NULL;

	skip_ws(r);
	if (r->pos >= r->len || r->s[r->pos] != '"')
		return bad(r, "an object member without a string name");
	if (obj->n >= JSON_READ_MAX_MEMBERS)
		return bad(r, "an object with too many members");
	if (push(r, obj, cap, &m) < 0 || string(r, &m->key, &m->key_len) < 0)
		return -1;
	if (duplicate(obj, m))
		return bad(r, "a duplicate object member name");
	skip_ws(r);
	if (r->pos >= r->len || r->s[r->pos] != ':')
		return bad(r, "a member name without ':'");
	r->pos++;
	return value(r, m, depth + 1);
}

/* An array or an object, at its opening bracket. */
static int container(struct reader *r, struct jnode *out, int depth)
{
	bool obj = r->s[r->pos] == '{';
	char close = obj ? '}' : ']';
	size_t cap = 0;

	out->type = obj ? JNODE_OBJECT : JNODE_ARRAY;
	if (depth >= JSON_READ_MAX_DEPTH)
		return bad(r, "nested too deeply");
	r->pos++;
	skip_ws(r);
	if (r->pos < r->len && r->s[r->pos] == close) {
		r->pos++;
		return 0;
	}
	for (;;) {
		struct jnode *item = NULL;
		if (obj ? member(r, out, &cap, depth) < 0
			: push(r, out, &cap, &item) < 0 || value(r, item, depth + 1) < 0)
			return -1;
		skip_ws(r);
		if (r->pos >= r->len)
			return bad(r, obj ? "an object is not closed" : "an array is not closed");
		if (r->s[r->pos++] == close)
			return 0;
		if (r->s[r->pos - 1] != ',')
			return r->pos--, bad(r, "expected ',' or a closing bracket");
	}
}

static int value(struct reader *r, struct jnode *out, int depth)
{
	char c;

	skip_ws(r);
	if (r->pos >= r->len)
		return bad(r, "a value is missing");
	c = r->s[r->pos];
	if (c == '{' || c == '[')
		return container(r, out, depth);
	if (c == '"')
		return out->type = JNODE_STRING, string(r, &out->str, &out->len);
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(r, out);
	if (lit(r, "true") || lit(r, "false")) {
		out->type = JNODE_BOOL;
		out->b = c == 't';
		return 0;
	}
	if (lit(r, "null"))
		return out->type = JNODE_NULL, 0;
	return bad(r, "an unexpected character");
}

int json_read(const char *text, size_t len, struct jnode *out, struct ab_err *e)
{
	struct reader r = {text, len, 0, e};

	*out = (struct jnode){0};
	if (value(&r, out, 0) < 0) {
		jnode_free(out);
		return -1;
	}
	skip_ws(&r);
	if (r.pos != len) {
		jnode_free(out);
		return bad(&r, "text after the value");
	}
	return 0;
}

void jnode_free(struct jnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		jnode_free(&n->kids[i]);
	free(n->kids);
	free(n->key);
	free(n->str);
	*n = (struct jnode){0};
}

const struct jnode *jnode_get(const struct jnode *n, const char *key)
{
	size_t len = strlen(key);

	if (!n || n->type != JNODE_OBJECT)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		if (n->kids[i].key_len == len && !memcmp(n->kids[i].key, key, len))
			return &n->kids[i];
	return NULL;
}

const char *jnode_str(const struct jnode *n, const char *key)
{
	const struct jnode *m = jnode_get(n, key);

	if (!m || m->type != JNODE_STRING || strlen(m->str) != m->len)
		return NULL;
	return m->str;
}

bool jnode_int(const struct jnode *n, int64_t min, int64_t max, int64_t *v)
{
	long long x;
	char *end;

	if (!n || n->type != JNODE_NUMBER || strpbrk(n->str, ".eE"))
		return false;
	errno = 0;
	x = strtoll(n->str, &end, 10);
	if (errno || *end || x < min || x > max)
		return false;
	*v = x;
	return true;
}

bool jnode_double(const struct jnode *n, double *v)
{
	if (!n || n->type != JNODE_NUMBER)
		return false;
	*v = strtod(n->str, NULL);
	return isfinite(*v);
}
