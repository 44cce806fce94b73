/*
 * config_file.h: the daemon's configuration file (dmlockd.conf, INI, parsed with
 * inih).  One static table (config_file.c) lists every setting with its
 * section, key, parser, default and documentation; config_file.c also runs
 * the parse and the cross-checks, config_fields.c holds the per-setting
 * parsers, config_values.c the value parsers, config_reload.c what a reload
 * may change.  Library-style: it never logs; errors come back as
 * "FILE:LINE: message" in the caller's buffer.
 */
#ifndef DMD_CONFIG_FILE_H
#define DMD_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dm_engine.h"
#include "dmlockd/acl.h"
#include "dmlockd/log.h"

#define CONFIG_LISTEN_MAX	16

struct dmd_config {
	char		*path;			/* the file it came from */

	/* [node] */
	char		*node_name;		/* default: hostname */
	char		*listen[CONFIG_LISTEN_MAX];	/* "host:port", "[v6]:port" */
	size_t		 n_listen;
	char		*cluster;
	char		*state_dir;		/* NULL: see dmlockd --help */

	/* [cluster] */
	struct dm_peer_spec *peers;		/* strings owned by the config */
	size_t		 n_peers;
	struct dm_peer_spec sponsor;		/* name NULL: none */
	char		*algorithm;
	char		*election;		/* "bully" or "invitation" */
	uint32_t	 group_size;		/* hierarchical: nodes per group */
	enum dm_failure_policy failure_policy;
	dm_msec_t	 request_timeout_ms;
	dm_msec_t	 probe_timeout_ms;
	dm_msec_t	 lease_ms;
	dm_msec_t	 heartbeat_ms;
	dm_msec_t	 restart_interval_ms;

	/* [tls]: paths, relative ones resolved against the config file's directory */
	char		*tls_ca;
	char		*tls_cert;
	char		*tls_key;
	char		*tls_crl;		/* NULL: none */

	/* [transport] */
	dm_msec_t	 keepalive_ms;
	uint32_t	 keepalive_misses;
	dm_msec_t	 reconnect_min_ms;
	dm_msec_t	 reconnect_max_ms;
	dm_msec_t	 handshake_timeout_ms;
	uint32_t	 max_handshakes;
	uint32_t	 send_queue_limit;	/* messages queued per peer */
	uint64_t	 write_buffer_limit;	/* bytes in a link's output buffer */

	/* [local] */
	char		*local_socket;
	mode_t		 socket_mode;
	char		*socket_group;		/* NULL: "dmlock" if it exists (as root), else
						 * the daemon's group */
	uint32_t	 clients_per_user;	/* connections a user other than root may
						 * hold, 1 to LOCAL_CLIENTS_PER_UID_MAX */

	/* [access]: lock rules and roster principals (acl.h); NULL: none */
	struct dmd_acl	*acl;

	/* [log] */
	enum log_level	 log_level;
};

/*
 * Load and validate a config file.  algorithms is the NULL-terminated list of
 * valid algorithm names (pass dm_algorithm_names()); NULL selects the
 * built-in list config_default_algorithms.  Returns 0 and a new config in
 * *ret, or a negative errno with "FILE:LINE: message" (or "FILE: message")
 * in err: -ENOENT/-EACCES (file), -EINVAL (content), -ENOMEM.  *ret is
 * untouched on failure.
 */
int config_load(const char *path, const char *const *algorithms, struct dmd_config **ret,
    char *err, size_t errlen);
struct dmd_config *config_free(struct dmd_config *config);

/* Take the [access] rules out of c (NULL if none); c no longer owns them.
 * NULL-safe. */
struct dmd_acl *config_take_acl(struct dmd_config *c);

/*
 * Fill an engine config from c.  Every pointer in *ret borrows from c, which
 * must outlive the engine config.  incarnation and seed come from the caller.
 */
void config_to_engine(const struct dmd_config *c, uint64_t incarnation, uint64_t seed,
    struct dm_engine_config *ret);

/*
 * The settings that differ between the running config and a freshly loaded
 * one and that a running daemon does not apply (all but the [tls] files,
 * [access] and [log], which SIGHUP reloads): up to max "section.key" names
 * in keys, in table order.  Returns how many differ (may exceed max).
 * Peers compare as a set of name@address; listen addresses in order.
 */
size_t config_restart_changes(const struct dmd_config *running, const struct dmd_config *fresh,
    const char **keys, size_t max);

/* The address peers use to reach this node: its own roster entry if the
 * peers list names it, else the first listen address (NULL if none). */
const char *config_self_address(const struct dmd_config *c);

/* Every "section.key" the file accepts, NULL-terminated, in table order
 * (for the man-page coverage test and "dmlockd --list-config-keys"). */
const char *const *config_key_names(void);
/* Print "section.key = default ; doc" lines, one per setting. */
void config_print_keys(FILE *out);

extern const char *const config_default_algorithms[];

/* Value parsers, exposed for tests.  All return 0 or -EINVAL. */
int config_parse_duration(const char *s, dm_msec_t *ret);	/* "500ms", "5s", "2m", "1h", "250" (ms) */
int config_parse_address(const char *s, char *host, size_t hostlen, uint16_t *port);
int config_parse_peer(const char *s, char **ret_name, char **ret_address);	/* name@host:port */

#endif /* DMD_CONFIG_FILE_H */
