/*
 * acl.h: the local access-control list of dmlockd ([access] in
 * dmlockd.conf): which users and groups may take which lock names in which
 * mode, and who may run roster operations (join, leave, remove).
 *
 * Rules are kept in file order.  A lock rule is "WHO:MODE:PREFIX":
 *   WHO	"*" (anyone), a user name or uid, "@" + a group name or gid
 *   MODE	"ex" (exclusive and shared), "sh" (shared only), "none"
 *   PREFIX	"*" (every name) or the start of the lock names it covers
 * The first rule whose WHO and PREFIX match decides.  With no lock rule at
 * all everything is allowed; once there is one, a request no rule matches
 * is refused.  Roster principals use the same WHO syntax; root may always
 * run roster operations.
 *
 * Names are resolved to ids when a rule is added (getpwnam/getgrnam); the
 * checks themselves are pure functions of the ids, for unit tests.
 */
#ifndef DMD_ACL_H
#define DMD_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dm_types.h"

#define ACL_RULES_MAX		1024	/* lock rules plus roster principals */
#define ACL_GROUPS_MAX		1024	/* supplementary groups looked at per client */

struct dmd_acl;

/* Who is asking: SO_PEERCRED ids plus the uid's supplementary groups. */
struct acl_subject {
	uid_t		 uid;
	gid_t		 gid;
	const gid_t	*groups;
	size_t		 n_groups;
};

int acl_new(struct dmd_acl **ret);
struct dmd_acl *acl_free(struct dmd_acl *acl);

/*
 * Add a lock rule "WHO:MODE:PREFIX" or a roster principal "WHO".  source
 * (e.g. "dmlockd.conf:12") is quoted in denials.  Return 0, -ENOMEM,
 * -E2BIG (ACL_RULES_MAX), or -EINVAL with a message in msg.
 */
int acl_add_lock_rule(struct dmd_acl *acl, const char *text, const char *source, char *msg,
    size_t msglen);
int acl_add_roster_principal(struct dmd_acl *acl, const char *who, const char *source,
    char *msg, size_t msglen);
/* Forget every lock rule / every roster principal (a file replacing the
 * default list). */
void acl_clear_lock_rules(struct dmd_acl *acl);
void acl_clear_roster(struct dmd_acl *acl);

/* Does any rule name a group (then the caller must fill groups)? */
bool acl_needs_groups(const struct dmd_acl *acl);
size_t acl_n_lock_rules(const struct dmd_acl *acl);

/*
 * May who take lock (len bytes) in mode?  acl NULL allows everything.
 * Returns 0, or -EACCES with a sentence naming the deciding rule in why.
 */
int acl_check_lock(const struct dmd_acl *acl, const struct acl_subject *who, const char *lock,
    size_t len, enum dm_mode mode, char *why, size_t whylen);

/* May who run roster operations?  Root always; otherwise a principal must
 * match.  acl NULL: root only.  0 or -EACCES with why. */
int acl_check_roster(const struct dmd_acl *acl, const struct acl_subject *who, char *why,
    size_t whylen);

/*
 * Fill groups (capacity max) with the groups of the process at the other
 * end of the Unix socket fd, as the kernel recorded them at connect(2)
 * (SO_PEERGROUPS): gid (its SO_PEERCRED gid) first, then its
 * supplementary groups.  No NSS lookup, so it never blocks: this is what
 * the event loop uses.  Returns the count (at least 1 if max > 0), or
 * -ENOPROTOOPT if the kernel does not offer SO_PEERGROUPS (before Linux
 * 4.13: use acl_lookup_groups()), another -errno, or -ENOMEM.
 */
int acl_socket_groups(int fd, gid_t gid, gid_t *groups, size_t max);

/*
 * Fill groups (capacity max) with uid's supplementary groups, primary gid
 * first.  Returns the count (at least 1), never fails: a uid without a
 * passwd entry has just gid.  Reads the group database (NSS), which may
 * block for as long as a directory server takes to answer: only a
 * fallback for kernels without SO_PEERGROUPS.
 */
size_t acl_lookup_groups(uid_t uid, gid_t gid, gid_t *groups, size_t max);

#endif /* DMD_ACL_H */
