/*
 * json_check.c: a strict RFC 8259 JSON checker for tests (the oracle of
 * fuzz_status.c): one value, ASCII only, no leading zeros, valid escapes,
 * nesting at most 64 deep.  Not a parser: it only says yes or no.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "json_check.h"

static bool json_value(const char **p, int depth);

static void
skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static bool
json_string_ok(const char **p)
{
	const char *s = *p;

	if (*s++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*s++;

		if (c == '"')
			break;
		if (c < 0x20 || c >= 0x80)	/* control byte, or not ASCII */
			return false;
		if (c != '\\')
			continue;
		c = (unsigned char)*s++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, s++)
				if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
				    (*s >= 'A' && *s <= 'F')))
					return false;
		} else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
			return false;
		}
	}
	*p = s;
	return true;
}

static bool
json_number_ok(const char **p)
{
	const char *s = *p;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	*p = s;
	return true;
}

static bool
json_container(const char **p, int depth, char close)
{
	(*p)++;
	skip_ws(p);
	if (**p == close) {
		(*p)++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			if (!json_string_ok(p))
				return false;
			skip_ws(p);
			if (*(*p)++ != ':')
				return false;
		}
		if (!json_value(p, depth + 1))
			return false;
		skip_ws(p);
		if (**p == close) {
			(*p)++;
			return true;
		}
		if (*(*p)++ != ',')
			return false;
		skip_ws(p);
	}
}

static bool
json_value(const char **p, int depth)
{
	if (depth > 64)
		return false;
	skip_ws(p);
	switch (**p) {
	case '{':
		return json_container(p, depth, '}');
	case '[':
		return json_container(p, depth, ']');
	case '"':
		return json_string_ok(p);
	case 't':
		return strncmp(*p, "true", 4) == 0 ? (*p += 4, true) : false;
	case 'f':
		return strncmp(*p, "false", 5) == 0 ? (*p += 5, true) : false;
	case 'n':
		return strncmp(*p, "null", 4) == 0 ? (*p += 4, true) : false;
	default:
		return json_number_ok(p);
	}
}

bool
json_check_line(const char *text, size_t len)
{
	const char *p = text;

	return strlen(text) == len && json_value(&p, 0) && strcmp(p, "\n") == 0;
}
