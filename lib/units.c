/* Sizes, durations and counts as profiles and options write them. */
#include "units.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

static int parse_number(const char *s, uint64_t *v, const char **rest)
{
	uint64_t n = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (n > (UINT64_MAX - d) / 10)
			return -2;
		n = n * 10 + d;
	}
	*v = n;
	*rest = s;
	return 0;
}

static int scaled(const char *s, uint64_t n, uint64_t mul, uint64_t *out, const char *what,
		  struct ab_err *e)
{
	if (mul && n > UINT64_MAX / mul)
		return ab_fail(e, 0, "%s '%s' is too large", what, s);
	*out = n * mul;
	return 0;
}

int parse_size(const char *s, uint64_t *out, struct ab_err *e)
{
	static const char *const units = "KMGT";
	const char *rest;
	uint64_t n, mul = 1;
	int r = parse_number(s, &n, &rest);

	if (r == -2)
		return ab_fail(e, 0, "size '%s' is too large", s);
	if (r < 0)
		return ab_fail(e, 0, "'%s' is not a size", s),
		       ab_hint(e, "write e.g. 512M, 2G or 4096");
	if (*rest) {
		const char *u = strchr(units, toupper((unsigned char)*rest));
		if (!u || !*rest)
			return ab_fail(e, 0, "'%s' has an unknown size unit", s),
			       ab_hint(e, "use K, M, G or T (powers of 1024)");
		for (const char *p = units; p <= u; p++)
			mul *= 1024;
		rest++;
		if (*rest && strcmp(rest, "B") && strcmp(rest, "iB") && strcmp(rest, "b"))
			return ab_fail(e, 0, "'%s' has an unknown size unit", s),
			       ab_hint(e, "use K, M, G or T (powers of 1024)");
	}
	return scaled(s, n, mul, out, "size", e);
}

int parse_duration_ms(const char *s, uint64_t *out, struct ab_err *e)
{
	const char *rest;
	uint64_t n, mul;
	int r = parse_number(s, &n, &rest);

	if (r == -2)
		return ab_fail(e, 0, "duration '%s' is too large", s);
	if (r < 0)
		return ab_fail(e, 0, "'%s' is not a duration", s),
		       ab_hint(e, "write e.g. 500ms, 30s, 5m or 2h");
	if (!*rest || !strcmp(rest, "s"))
		mul = 1000;
	else if (!strcmp(rest, "ms"))
		mul = 1;
	else if (!strcmp(rest, "m"))
		mul = 60 * 1000;
	else if (!strcmp(rest, "h"))
		mul = 3600 * 1000;
	else
		return ab_fail(e, 0, "'%s' has an unknown duration unit", s),
		       ab_hint(e, "use ms, s, m or h");
	return scaled(s, n, mul, out, "duration", e);
}

int parse_count(const char *s, uint64_t *out, struct ab_err *e)
{
	const char *rest;
	int r = parse_number(s, out, &rest);

	if (r == -2 || (r == 0 && *out > INT32_MAX))
		return ab_fail(e, 0, "'%s' is too large", s);
	if (r < 0 || *rest)
		return ab_fail(e, 0, "'%s' is not a whole number", s);
	return 0;
}
