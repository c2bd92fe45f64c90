/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A strict JSON (RFC 8259) syntax checker for the unit tests: the whole text must be exactly one
 * value, strings may hold no raw control characters, and every escape must be valid. It also
 * reports whether the text is pure printable ASCII, which is what json.c promises. */
#ifndef AGENTBOX_TEST_JSON_CHECK_H
#define AGENTBOX_TEST_JSON_CHECK_H

#include <stdbool.h>
#include <string.h>

static inline bool jc_value(const char **s, int depth);

static inline void jc_ws(const char **s)
{
	while (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')
		(*s)++;
}

static inline bool jc_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline bool jc_string(const char **s)
{
	const char *p = *s;

	if (*p++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*p;
		if (c == '\0' || c < 0x20)
			return false;
		if (c == '"')
			break;
		if (c == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!jc_hex(p[i]))
						return false;
				p += 5;
				continue;
			}
			if (!*p || !strchr("\"\\/bfnrt", *p))
				return false;
		}
		p++;
	}
	*s = p + 1;
	return true;
}

static inline bool jc_digits(const char **s)
{
	const char *p = *s;
	while (**s >= '0' && **s <= '9')
		(*s)++;
	return *s > p;
}

static inline bool jc_number(const char **s)
{
	if (**s == '-')
		(*s)++;
	if (**s == '0')
		(*s)++;
	else if (!jc_digits(s))
		return false;
	if (**s == '.') {
		(*s)++;
		if (!jc_digits(s))
			return false;
	}
	if (**s == 'e' || **s == 'E') {
		(*s)++;
		if (**s == '+' || **s == '-')
			(*s)++;
		if (!jc_digits(s))
			return false;
	}
	return true;
}

static inline bool jc_literal(const char **s, const char *word)
{
	size_t n = strlen(word);
	if (strncmp(*s, word, n))
		return false;
	*s += n;
	return true;
}

static inline bool jc_container(const char **s, char close, bool object, int depth)
{
	(*s)++;
	jc_ws(s);
	if (**s == close) {
		(*s)++;
		return true;
	}
	for (;;) {
		jc_ws(s);
		if (object) {
			if (!jc_string(s))
				return false;
			jc_ws(s);
			if (**s != ':')
				return false;
			(*s)++;
		}
		if (!jc_value(s, depth + 1))
			return false;
		jc_ws(s);
		if (**s == ',') {
			(*s)++;
			continue;
		}
		if (**s != close)
			return false;
		(*s)++;
		return true;
	}
}

static inline bool jc_value(const char **s, int depth)
{
	if (depth > 64)
		return false;
	jc_ws(s);
	switch (**s) {
	case '{':
		return jc_container(s, '}', true, depth);
	case '[':
		return jc_container(s, ']', false, depth);
	case '"':
		return jc_string(s);
	case 't':
		return jc_literal(s, "true");
	case 'f':
		return jc_literal(s, "false");
	case 'n':
		return jc_literal(s, "null");
	default:
		return jc_number(s);
	}
}

/* True when text is exactly one valid JSON value (surrounding white space allowed). */
static inline bool json_valid(const char *text)
{
	const char *s = text;
	if (!text || !jc_value(&s, 0))
		return false;
	jc_ws(&s);
	return *s == '\0';
}

/* True when every byte is printable ASCII (0x20-0x7e). */
static inline bool json_printable_ascii(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return true;
}

#endif
