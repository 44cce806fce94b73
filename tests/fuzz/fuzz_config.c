/*
 * fuzz_config.c: libFuzzer target for the configuration file loader
 * (dmlockd/config_file.c, config_fields.c and config_values.c over inih).  The input is a
 * config file's content, handed to config_load() through a memfd: it must
 * be accepted, or refused with a negative errno and a "FILE:LINE: message"
 * naming the file; never a crash, a leak or an unterminated message.  The
 * input up to its first NUL also goes to the duration, address and peer
 * parsers, whose accepted results must be well formed.
 *
 * Run: ./tests/fuzz/fuzz_config -max_total_time=60 tests/fuzz/corpus/config
 * (configure --enable-fuzzing CC=clang); tests/fuzz/replay_config replays
 * the corpus in make check.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmlockd/config_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_load(const uint8_t *data, size_t size)
{
	char path[64], err[1024];
	struct dmd_config *c = NULL;
	int fd = memfd_create("dmlockd.conf", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(err, 'x', sizeof(err));
	int r = config_load(path, NULL, &c, err, sizeof(err));
	close(fd);
	if (r == 0) {
		if (c == NULL)
			abort();
		config_free(c);
		return;
	}
	/* Refused: a negative errno, the config untouched, a message that is
	 * terminated and names the file. */
	if (r >= 0 || c != NULL || memchr(err, '\0', sizeof(err)) == NULL ||
	    strncmp(err, path, strlen(path)) != 0)
		abort();
}

static void
fuzz_values(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), host[256], *name = NULL, *address = NULL;
	dm_msec_t ms;
	uint16_t port;

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	(void)config_parse_duration(s, &ms);
	memset(host, 'x', sizeof(host));
	if (config_parse_address(s, host, sizeof(host), &port) == 0 &&
	    memchr(host, '\0', sizeof(host)) == NULL)
		abort();
	if (config_parse_peer(s, &name, &address) == 0) {
		if (name == NULL || address == NULL)
			abort();
		free(name);
		free(address);
	}
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load(data, size);
	fuzz_values(data, size);
	return 0;
}
