/*
 * replay_wire.c: runs LLVMFuzzerTestOneInput from fuzz_wire.c over every
 * file of the seed corpus (tests/fuzz/corpus/wire), so make check proves
 * the corpus still goes through the decoder without a crash even without
 * clang/libFuzzer.  The corpus holds valid messages of every kind
 * (valid-*) and malformed ones (bad-*); the driver also checks that each
 * valid-* file decodes and each bad-* file is refused.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm_msg.h"
#include "dm_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_FILE_MAX (DM_WIRE_MSG_MAX + 1024)

int
main(int argc, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	char dir[4096], path[8192];
	static uint8_t data[REPLAY_FILE_MAX];
	static struct dm_msg msg;
	struct dirent *de;
	unsigned count = 0, wrong = 0;
	DIR *d;

	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	else
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/wire",
		    srcdir != NULL ? srcdir : ".");
	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "replay_wire: %s: %s\n", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	while ((de = readdir(d)) != NULL) {
		FILE *f;
		size_t n;
		int r;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		n = fread(data, 1, sizeof(data), f);
		fclose(f);
		LLVMFuzzerTestOneInput(data, n);
		r = dm_wire_decode(data, n, &msg);
		if ((strncmp(de->d_name, "valid-", 6) == 0 && r != 0) ||
		    (strncmp(de->d_name, "bad-", 4) == 0 && r == 0)) {
			fprintf(stderr, "replay_wire: %s: decode returned %d\n", de->d_name, r);
			wrong++;
		}
		count++;
	}
	closedir(d);
	printf("replay_wire: %u corpus inputs replayed, %u misjudged\n", count, wrong);
	return count > 0 && wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
