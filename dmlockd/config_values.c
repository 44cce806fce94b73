/*
 * config_values.c: parsers for the value syntaxes of dmlockd.conf:
 * durations ("500ms", "5s"), addresses ("host:port", "[::1]:port") and peer
 * specs ("name@host:port").  Pure string functions; no I/O, no logging.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/config_file.h"

#define DURATION_MAX_MS (7ULL * 24 * 3600 * 1000)	/* a week is plenty */

int
config_parse_duration(const char *s, dm_msec_t *ret)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	uint64_t value = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		value = value * 10 + (uint64_t)(*p - '0');
		if (value > DURATION_MAX_MS)
			return -EINVAL;
		p++;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) == 0) {
			if (value > DURATION_MAX_MS / units[i].ms)
				return -EINVAL;
			*ret = value * units[i].ms;
			return 0;
		}
	}
	return -EINVAL;
}

static int
hostname_valid(const char *h, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_'))
			return 0;
	}
	return 1;
}

static int
ipv6_literal_valid(const char *h, size_t n)
{
	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (!((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') ||
		    c == ':' || c == '.'))
			return 0;
	}
	return 1;
}

int
config_parse_address(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *h = s;
	size_t hn;
	unsigned long p;
	char *end;

	if (strlen(s) > DM_ADDRESS_MAX)
		return -EINVAL;
	if (*s == '[') {
		const char *close = strchr(s, ']');
		if (close == NULL || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hn = (size_t)(close - h);
		colon = close + 1;
		if (!ipv6_literal_valid(h, hn))
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL)
			return -EINVAL;	/* bare IPv6 needs brackets */
		hn = (size_t)(colon - s);
		if (!hostname_valid(s, hn))
			return -EINVAL;
	}
	if (colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || p == 0 || p > 65535)
		return -EINVAL;
	if (host != NULL) {
		if (hn >= hostlen)
			return -EINVAL;
		memcpy(host, h, hn);
		host[hn] = '\0';
	}
	if (port != NULL)
		*port = (uint16_t)p;
	return 0;
}

int
config_parse_peer(const char *s, char **ret_name, char **ret_address)
{
	const char *at = strchr(s, '@');
	char *name, *address;

	if (at == NULL || !dm_node_name_valid(s, (size_t)(at - s)))
		return -EINVAL;
	if (config_parse_address(at + 1, NULL, 0, NULL) < 0)
		return -EINVAL;
	name = strndup(s, (size_t)(at - s));
	address = strdup(at + 1);
	if (name == NULL || address == NULL) {
		free(name);
		free(address);
		return -ENOMEM;
	}
	*ret_name = name;
	*ret_address = address;
	return 0;
}
