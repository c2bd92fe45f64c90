/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
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

/* A fraction after the whole part: ".5" in "1.5G". Up to 9 digits, as num / *den. */
static int parse_fraction(const char *s, uint64_t *num, uint64_t *den, const char **rest)
{
	*num = 0;
	*den = 1;
	if (*s != '.') {
		*rest = s;
		return 0;
	}
	if (!isdigit((unsigned char)*++s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (*den == 1000000000)
			return -1;
		*num = *num * 10 + (uint64_t)(*s - '0');
		*den *= 10;
	}
	*rest = s;
	return 0;
}

/* n and num/den of mul, rounded down to a whole unit of the result. */
static int scaled(const char *s, uint64_t n, uint64_t num, uint64_t den, uint64_t mul,
		  uint64_t *out, const char *what, struct ab_err *e)
{
	uint64_t part;

	if (mul && n > UINT64_MAX / mul)
		return ab_fail(e, 0, "%s '%s' is too large", what, s);
	/* floor(mul * num / den) without the product: mul = q * den + r, and r * num < 10^18 */
	part = mul / den * num + mul % den * num / den;
	if (n * mul > UINT64_MAX - part)
		return ab_fail(e, 0, "%s '%s' is too large", what, s);
	*out = n * mul + part;
	if (!*out && num)
		return ab_fail(e, 0, "%s '%s' rounds down to nothing", what, s);
	return 0;
}

int parse_size(const char *s, uint64_t *out, struct ab_err *e)
{
	static const char *const units = "KMGT";
	const char *rest;
	uint64_t n, num, den, mul = 1;
	int r = parse_number(s, &n, &rest);

	if (r == -2)
		return ab_fail(e, 0, "size '%s' is too large", s);
	if (r < 0 || parse_fraction(rest, &num, &den, &rest) < 0)
		return ab_fail(e, 0, "'%s' is not a size", s),
		       ab_hint(e, "write e.g. 512M, 1.5G, 2G or 4096");
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
	if (num && mul == 1)
		return ab_fail(e, 0, "'%s' is a fraction of a byte", s),
		       ab_hint(e, "give whole bytes, or a unit: 1.5K, 1.5M, 1.5G");
	return scaled(s, n, num, den, mul, out, "size", e);
}

int parse_duration_ms(const char *s, uint64_t *out, struct ab_err *e)
{
	const char *rest;
	uint64_t n, num, den, mul;
	int r = parse_number(s, &n, &rest);

	if (r == -2)
		return ab_fail(e, 0, "duration '%s' is too large", s);
	if (r < 0 || parse_fraction(rest, &num, &den, &rest) < 0)
		return ab_fail(e, 0, "'%s' is not a duration", s),
		       ab_hint(e, "write e.g. 500ms, 30s, 1.5m, 5m or 2h");
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
	if (num && mul == 1)
		return ab_fail(e, 0, "'%s' is a fraction of a millisecond", s),
		       ab_hint(e, "give whole milliseconds, or a larger unit: 1.5s");
	return scaled(s, n, num, den, mul, out, "duration", e);
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
