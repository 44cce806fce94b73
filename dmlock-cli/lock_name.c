/*
 * lock_name.c: checking and deriving lock names (see lock_name.h for the
 * documented derivation; man/dmlock.1 repeats it for users).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lock_name.h"
#include "sha256.h"

static bool printable(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e;
}

int lock_name_check(const char *name, char why[LOCK_NAME_WHY_SIZE])
{
	size_t len = strlen(name);

	if (len == 0) {
		snprintf(why, LOCK_NAME_WHY_SIZE, "it is empty");
		return -EINVAL;
	}
	for (size_t i = 0; i < len && i < LOCK_NAME_MAX; i++) {
		unsigned char c = (unsigned char)name[i];

		if (printable(c))
			continue;
		if (c == ' ')
			snprintf(why, LOCK_NAME_WHY_SIZE, "byte %zu is a space", i + 1);
		else
			snprintf(why, LOCK_NAME_WHY_SIZE, "byte %zu is 0x%02x", i + 1, c);
		return -EINVAL;
	}
	if (len > LOCK_NAME_MAX) {
		snprintf(why, LOCK_NAME_WHY_SIZE, "it is %zu bytes long", len);
		return -EINVAL;
	}
	return 0;
}

void lock_name_quote(const char *name, char ret[LOCK_NAME_QUOTED_SIZE])
{
	static const char hex_digits[] = "0123456789abcdef";
	char *out = ret;
	size_t i;

	for (i = 0; name[i] != '\0' && i < LOCK_NAME_QUOTED_SHOWN; i++) {
		unsigned char c = (unsigned char)name[i];

		if (printable(c) || c == ' ') {
			*out++ = (char)c;
		} else {
			*out++ = '\\';
			*out++ = 'x';
			*out++ = hex_digits[c >> 4];
			*out++ = hex_digits[c & 0x0f];
		}
	}
	if (name[i] != '\0')
		out = stpcpy(out, "...");
	*out = '\0';
}

void lock_name_from_argv(int argc, char *const argv[], char ret[LOCK_NAME_DERIVED_SIZE])
{
	static const char hex_digits[] = "0123456789abcdef";
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];
	char *out = ret;

	sha256_init(&ctx);
	for (int i = 0; i < argc; i++)
		sha256_update(&ctx, argv[i], strlen(argv[i]) + 1); /* with its NUL */
	sha256_final(&ctx, digest);

	memcpy(out, LOCK_NAME_DERIVED_PREFIX, strlen(LOCK_NAME_DERIVED_PREFIX));
	out += strlen(LOCK_NAME_DERIVED_PREFIX);
	for (unsigned i = 0; i < LOCK_NAME_DERIVED_HEX_DIGITS / 2; i++) {
		*out++ = hex_digits[digest[i] >> 4];
		*out++ = hex_digits[digest[i] & 0x0f];
	}
	*out = '\0';
}
