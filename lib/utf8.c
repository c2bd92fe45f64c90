/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The UTF-8 decoder (include/utf8.h). */
#include "utf8.h"

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len;

	if (n == 0 || s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	c = s[0];
	if (c < 0xe0)
		len = 2, min = 0x80, c &= 0x1f;
	else if (c < 0xf0)
		len = 3, min = 0x800, c &= 0x0f;
	else
		len = 4, min = 0x10000, c &= 0x07;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	for (size_t i = 0, len; i < n; i += len)
		if (!(len = u[i] < 0x80 ? 1 : utf8_decode(u + i, n - i, &cp)))
			return false;
	return true;
}
