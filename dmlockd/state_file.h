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
#include <sys/types.h>

#define STATE_FLOOR_FILE	"epoch-floor"

struct state_dir {
	int		 fd;		/* the directory, locked; -1: not open */
	const char	*path;		/* borrowed, for messages */
	int		 spare_fd;	/* /dev/null, given up to store a floor when the
					 * process is out of descriptors; -1: none */
};

/* Create path (mode 0750) if missing, with its missing parents (mode
 * parent_mode: 0700 for the XDG default, as the XDG base directory spec
 * asks), each creation made durable by an fsync of the directory it was
 * made in; lock it, and read the stored floor into *floor (0 if none was
 * stored).  Errors are logged with the path: -errno, -EBUSY if another
 * process holds the directory, -EBADMSG for a file that is not a floor
 * (never guessed: a wrong floor could repeat tokens). */
int	state_dir_open(const char *path, mode_t parent_mode, struct state_dir *ret,
	    uint64_t *floor);
/* Store floor atomically and durably (temporary file, fsync, rename,
 * fsync of the directory).  A process out of descriptors (EMFILE) closes
 * its spare one to open the file and takes it back after.  Logged;
 * -errno. */
int	state_dir_store_floor(struct state_dir *sd, uint64_t floor);
void	state_dir_close(struct state_dir *sd);
/* The file's contents: decimal digits and a newline, nothing else, below
 * 2^64.  0 or -EBADMSG (fuzzed: tests/fuzz/fuzz_state_floor.c). */
int	state_floor_parse(const char *text, size_t len, uint64_t *ret);

#endif /* DMD_STATE_FILE_H */
