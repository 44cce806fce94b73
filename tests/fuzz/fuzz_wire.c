/*
 * fuzz_wire.c: libFuzzer target for the peer-message decoder
 * (dm_wire_decode).  Whatever decodes must re-encode to the same bytes and
 * decode again; nothing may crash or read past the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dm_msg.h"
#include "dm_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dm_msg msg, again;
	static uint8_t out[DM_WIRE_MSG_MAX];
	size_t len;

	if (dm_wire_decode(data, size, &msg) != 0)
		return 0;
	if (dm_wire_encode(&msg, out, sizeof(out), &len) != 0 || len != size ||
	    memcmp(out, data, size) != 0)
		abort();
	if (dm_wire_decode(out, len, &again) != 0 || again.kind != msg.kind ||
	    again.seq != msg.seq || again.lock_len != msg.lock_len)
		abort();
	return 0;
}
