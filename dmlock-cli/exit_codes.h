/*
 * exit_codes.h: every exit status dmlock itself produces (man/dmlock.1,
 * EXIT STATUS, documents the same table; keep them together).  Where
 * sysexits.h has a fitting code it is used; the two dmlock-specific codes
 * sit just past sysexits' range.  Otherwise `dmlock run` exits with the
 * command's own status (128+N when the command was killed by signal N).
 */
#ifndef DMLOCK_CLI_EXIT_CODES_H
#define DMLOCK_CLI_EXIT_CODES_H

enum dmlock_exit {
	DMLOCK_EXIT_OK = 0,
	DMLOCK_EXIT_FAILURE = 1,	/* a status/ping query failed for another reason */
	DMLOCK_EXIT_USAGE = 64,		/* EX_USAGE: bad option, argument or lock name */
	DMLOCK_EXIT_UNAVAILABLE = 69,	/* EX_UNAVAILABLE: cannot reach dmlockd */
	DMLOCK_EXIT_SOFTWARE = 70,	/* EX_SOFTWARE: unexpected reply from dmlockd */
	DMLOCK_EXIT_OSERR = 71,		/* EX_OSERR: fork, pipe, signal set-up failed */
	DMLOCK_EXIT_BUSY = 75,		/* EX_TEMPFAIL: -n and the lock is held (or -E CODE) */
	DMLOCK_EXIT_PROTOCOL = 76,	/* EX_PROTOCOL: the socket does not speak dmlock protocol v1 */
	DMLOCK_EXIT_NOPERM = 77,	/* EX_NOPERM: dmlockd refused this user the lock */
	DMLOCK_EXIT_WAIT_EXPIRED = 79,	/* -w SECONDS passed before the grant (or -E CODE) */
	DMLOCK_EXIT_LOCK_LOST = 80,	/* the lock was lost while the command ran */
	DMLOCK_EXIT_CANNOT_EXECUTE = 126, /* the command exists but could not be executed */
	DMLOCK_EXIT_NOT_FOUND = 127,	/* the command was not found */
};

#endif /* DMLOCK_CLI_EXIT_CODES_H */
