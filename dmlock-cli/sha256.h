/*
 * sha256.h: a small self-contained SHA-256 (FIPS 180-4), used only to derive
 * lock names from command lines.  No OpenSSL in the CLI: start-up stays cheap.
 */
#ifndef DMLOCK_CLI_SHA256_H
#define DMLOCK_CLI_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

struct sha256_ctx {
	uint32_t	state[8];
	uint64_t	total_bytes;
	uint8_t		block[64];
	size_t		block_len;
};

void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE]);

#endif /* DMLOCK_CLI_SHA256_H */
