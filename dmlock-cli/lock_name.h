/*
 * lock_name.h: lock names as the dmlock command sees them: checking a name
 * given with --name, and deriving one from a command line when none is.
 */
#ifndef DMLOCK_CLI_LOCK_NAME_H
#define DMLOCK_CLI_LOCK_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Longest lock name the daemon accepts (DM_LOCK_NAME_MAX). */
#define LOCK_NAME_MAX 255

/* "cmd/" + 32 hex digits (the first 128 bits of the SHA-256). */
#define LOCK_NAME_DERIVED_PREFIX "cmd/"
#define LOCK_NAME_DERIVED_HEX_DIGITS 32
#define LOCK_NAME_DERIVED_SIZE (sizeof(LOCK_NAME_DERIVED_PREFIX) + LOCK_NAME_DERIVED_HEX_DIGITS)

/* Room for lock_name_check()'s phrase and for lock_name_quote()'s copy. */
#define LOCK_NAME_WHY_SIZE 48
#define LOCK_NAME_QUOTED_SHOWN 40
#define LOCK_NAME_QUOTED_SIZE (4 * LOCK_NAME_QUOTED_SHOWN + sizeof("..."))

/*
 * 0 if name is a lock name: 1..255 bytes of printable ASCII other than
 * space (0x21..0x7e).  Otherwise -EINVAL, and why says which rule the
 * name breaks, the first it breaks: "it is empty", "it is 300 bytes
 * long", "byte 2 is a space", "byte 5 is 0x0a".
 */
int lock_name_check(const char *name, char why[LOCK_NAME_WHY_SIZE]);

/*
 * name as an error message may show it: its first LOCK_NAME_QUOTED_SHOWN
 * bytes, "..." if there are more, and every byte that is not printable
 * ASCII as \xNN (so no name can move the cursor or change the colours of
 * the terminal it is reported on).
 */
void lock_name_quote(const char *name, char ret[LOCK_NAME_QUOTED_SIZE]);

/*
 * The name of a command line: "cmd/" followed by the first 32 lowercase hex
 * digits of the SHA-256 of every argument followed by one NUL byte, that is
 *     printf 'cmd/%s\n' "$(printf '%s\0' CMD ARGS... | sha256sum | cut -c1-32)"
 * The arguments are hashed exactly as given (no PATH lookup, no host name),
 * so the same crontab line on every host maps to the same lock.
 * argc >= 1; ret must hold LOCK_NAME_DERIVED_SIZE bytes.
 */
void lock_name_from_argv(int argc, char *const argv[], char ret[LOCK_NAME_DERIVED_SIZE]);

#endif /* DMLOCK_CLI_LOCK_NAME_H */
