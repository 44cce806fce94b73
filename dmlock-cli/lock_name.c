/*
 * lock_name.c: checking and deriving lock names (see lock_name.h for the
 * documented derivation; man/dmlock.1 repeats it for users).
 */
#include "config.h"

#include <string.h>

#include "lock_name.h"
#include "sha256.h"

bool lock_name_valid(const char *name)
{
	size_t len = strnlen(name, LOCK_NAME_MAX + 1);

	if (len == 0 || len > LOCK_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] > 0x7e)
			return false;
	return true;
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
