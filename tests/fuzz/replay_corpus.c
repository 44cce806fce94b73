/*
 * replay_corpus.c: runs a fuzz target's LLVMFuzzerTestOneInput over every
 * file of its seed corpus (tests/fuzz/corpus/REPLAY_CORPUS, the name given
 * at build time), so make check proves the corpus still decodes without a
 * crash even without clang/libFuzzer.  Linked with fuzz_frame.c and with
 * fuzz_local_proto.c.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef REPLAY_CORPUS
#error "build with -DREPLAY_CORPUS='\"name\"' (a directory under tests/fuzz/corpus)"
#endif
#define REPLAY_FILE_MAX (1024 * 1024)

int
main(int argc, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	char dir[4096], path[8192];
	static uint8_t data[REPLAY_FILE_MAX];
	struct dirent *de;
	unsigned count = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[1] : "");
	if (argc <= 1)
		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/" REPLAY_CORPUS, srcdir != NULL ? srcdir : ".");
	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "replay_" REPLAY_CORPUS ": %s: %s\n", dir, strerror(errno));
		return EXIT_FAILURE;
	}
	while ((de = readdir(d)) != NULL) {
		FILE *f;
		size_t n;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		n = fread(data, 1, sizeof(data), f);
		fclose(f);
		LLVMFuzzerTestOneInput(data, n);
		count++;
	}
	closedir(d);
	printf("replay_" REPLAY_CORPUS ": %u corpus inputs replayed without a crash\n", count);
	return count > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
