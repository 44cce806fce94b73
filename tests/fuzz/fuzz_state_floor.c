/*
 * fuzz_state_floor.c: libFuzzer target for the epoch floor file's parser
 * (dmlockd/state_file.c, state_floor_parse).  Whatever it accepts must be
 * digits and one final newline whose value prints back to the same number;
 * whatever it refuses must be refused with -EBADMSG.
 *
 * Run: ./tests/fuzz/fuzz_state_floor -max_total_time=60 tests/fuzz/corpus/state_floor
 * (configure --enable-fuzzing CC=clang); tests/fuzz/replay_state_floor
 * replays the corpus in make check.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dmlockd/state_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char again[32];
	uint64_t v = 0, w = 0;
	int r = state_floor_parse((const char *)data, size, &v);

	if (r != 0) {
		if (r != -EBADMSG)
			abort();
		return 0;
	}
	if (size < 2 || data[size - 1] != '\n')
		abort();
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] < '0' || data[i] > '9')
			abort();
	int n = snprintf(again, sizeof(again), "%" PRIu64 "\n", v);
	if (state_floor_parse(again, (size_t)n, &w) != 0 || w != v)
		abort();
	return 0;
}
