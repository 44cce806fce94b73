/*
 * state_file.h: the daemon's durable state, one small file in the state
 * directory (StateDirectory=dmlock, /var/lib/dmlock): the epoch floor the
 * engine asks to keep (DM_FX_PERSIST), read back at the next start
 * (dm_engine_config.epoch_floor), so fencing tokens never go backwards
 * across a restart, even of the whole cluster.  The directory is locked
 * (flock) for the daemon's lifetime: two daemons sharing one floor could
 * each start below the other's tokens.
 */
#ifndef DMD_STATE_FILE_H
#define DMD_STATE_FILE_H

#include <stddef.h>
#include <stdint.h>

#define STATE_FLOOR_FILE	"epoch-floor"

struct state_dir {
	int		 fd;		/* the directory, locked; -1: not open */
	const char	*path;		/* borrowed, for messages */
};

/* Create path (mode 0750) if missing, lock it, and read the stored floor
 * into *floor (0 if none was stored).  Errors are logged with the path:
 * -errno, -EBUSY if another process holds the directory, -EBADMSG for a
 * file that is not a floor (never guessed: a wrong floor could repeat
 * tokens). */
int	state_dir_open(const char *path, struct state_dir *ret, uint64_t *floor);
/* Store floor atomically and durably (temporary file, fsync, rename,
 * fsync of the directory).  Logged; -errno. */
int	state_dir_store_floor(const struct state_dir *sd, uint64_t floor);
void	state_dir_close(struct state_dir *sd);
/* The file's contents: decimal digits and a newline, nothing else, below
 * 2^64.  0 or -EBADMSG (fuzzed: tests/fuzz/fuzz_state_floor.c). */
int	state_floor_parse(const char *text, size_t len, uint64_t *ret);

#endif /* DMD_STATE_FILE_H */
