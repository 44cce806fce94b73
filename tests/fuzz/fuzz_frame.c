/*
 * fuzz_frame.c: libFuzzer target for the peer-transport frame decoder.
 * Decodes frames back to back from the input as the link reader does, and
 * checks that every decoded frame re-encodes to the same bytes.
 *
 * Run: ./tests/fuzz/fuzz_frame -max_total_time=600 tests/fuzz/corpus/frame
 * (build with configure --enable-fuzzing CC=clang).  The same function is
 * linked into tests/fuzz/replay_frame, which replays the corpus in make check.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[FRAME_MAX];
	size_t max_body = size > 0 ? (size_t)data[0] * 256 : 0;	/* vary the limit */
	struct frame f;
	size_t off = 0;

	while (off < size) {
		ssize_t n = frame_decode(data + off, size - off, max_body, &f);
		size_t len = 0;
		if (n <= 0)
			break;
		if ((size_t)n > size - off)
			abort();
		if (frame_encode(&f, out, sizeof(out), &len) != 0 || len != (size_t)n ||
		    memcmp(out, data + off, len) != 0)
			abort();
		off += (size_t)n;
	}
	return 0;
}
