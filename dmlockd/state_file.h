/*
 * state_file.h: the daemon's durable state, two small files in the state
 * directory (StateDirectory=dmlock, /var/lib/dmlock):
 *  - epoch-floor: the epoch floor the engine asks to keep (DM_FX_PERSIST),
 *    read back at the next start (dm_engine_config.epoch_floor), so
 *    fencing tokens never go backwards across a restart, even of the whole
 *    cluster;
 *  - membership: the membership record the engine asks to keep
 *    (DM_FX_PERSIST_RECORD: the last roster this node applied, the
 *    removals it agreed to, the incarnations it saw removed, its self-vote
 *    promise), read back at the next start
 *    (dm_engine_config.last_record), so a restarted process never helps a
 *    node its earlier process saw removed rebuild its old roster.
 * The directory is locked (flock) for the daemon's lifetime: two daemons
 * sharing one floor could each start below the other's tokens.
 */
#ifndef DMD_STATE_FILE_H
#define DMD_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dm_engine.h"

#define STATE_FLOOR_FILE	"epoch-floor"
#define STATE_RECORD_FILE	"membership"

/* The longest membership file: "label " and 20 digits, then DM_NODES_MAX
 * "member NAME", DM_NODES_MAX "removed NAME BALLOT" and DM_NODES_MAX
 * "dead NAME INCARNATION" lines, then one "promise LABEL PROBER" line,
 * each line with its newline. */
#define STATE_RECORD_TEXT_MAX	(6 + 20 + 1 + \
	DM_NODES_MAX * (7 + DM_NODE_NAME_MAX + 1) + \
	DM_NODES_MAX * (8 + DM_NODE_NAME_MAX + 1 + 20 + 1) + \
	DM_NODES_MAX * (5 + DM_NODE_NAME_MAX + 1 + 20 + 1) + \
	(8 + 20 + 1 + DM_NODE_NAME_MAX + 1))

/* A membership record that owns its strings (a parsed file).  View it as
 * the engine's struct dm_member_record with state_record_view(). */
struct state_record {
	uint64_t	 label;
	size_t		 n_names;
	size_t		 n_removals;
	char		 names[DM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	char		 removed[DM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	uint64_t	 ballots[DM_NODES_MAX];
	bool		 promised;		/* a "promise" line */
	uint64_t	 promise_label;
	char		 promise_prober[DM_NODE_NAME_MAX + 1];
	size_t		 n_dead;
	char		 dead_names[DM_NODES_MAX][DM_NODE_NAME_MAX + 1];
	uint64_t	 dead_incarnations[DM_NODES_MAX];
	/* Filled by state_record_view(), pointing into this struct. */
	const char	*name_ptrs[DM_NODES_MAX];
	struct dm_agreed_removal removals[DM_NODES_MAX];
	struct dm_dead_incarnation dead[DM_NODES_MAX];
};

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
/* Store the membership record r (borrowed for the call) in the file
 * STATE_RECORD_FILE, like state_dir_store_floor() (same temporary file,
 * fsync, rename, fsync of the directory, same spare descriptor).  -EINVAL
 * for a record the file cannot hold (state_record_format()); logged;
 * -errno. */
int	state_dir_store_record(struct state_dir *sd, const struct dm_member_record *r);
/* Read the stored membership record of the open directory sd into *ret:
 * all zero if none was stored (no file).  Errors are logged with the
 * path: -errno, -EBADMSG for a file that is not a membership record
 * (never guessed: a wrong record could let a removed node's old roster
 * come back). */
int	state_dir_read_record(const struct state_dir *sd, struct state_record *ret);
void	state_dir_close(struct state_dir *sd);
/* The file's contents: decimal digits and a newline, nothing else, below
 * 2^64.  0 or -EBADMSG (fuzzed: tests/fuzz/fuzz_state_floor.c). */
int	state_floor_parse(const char *text, size_t len, uint64_t *ret);
/* The membership file's contents, one item a line, each line ending in a
 * newline, single spaces:
 *	label <decimal>
 *	member <name>			(zero or more)
 *	removed <name> <decimal ballot>	(zero or more)
 * in that order; decimals without sign or leading zero (but "0"), below
 * 2^64; names valid (dm_node_name_valid()), no name twice among the
 * members nor among the removals, at most DM_NODES_MAX of each.  0 (*ret
 * filled, its view too) or -EBADMSG (*ret undefined; fuzzed:
 * tests/fuzz/fuzz_state_record.c). */
int	state_record_parse(const char *text, size_t len, struct state_record *ret);
/* The file's contents for r, into buf (size bytes, NUL-terminated): the
 * length without the NUL, -EINVAL if r breaks the rules above (an invalid
 * or repeated name, too many), -ENOSPC if buf is too small
 * (STATE_RECORD_TEXT_MAX + 1 always suffices). */
int	state_record_format(const struct dm_member_record *r, char *buf, size_t size);
/* Point sr's view arrays into sr and fill *ret with the record's view,
 * valid while sr is neither changed nor moved. */
void	state_record_view(struct state_record *sr, struct dm_member_record *ret);

#endif /* DMD_STATE_FILE_H */
