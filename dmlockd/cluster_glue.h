/*
 * cluster_glue.h: joins the peer transport to the daemon: engine SEND /
 * PEER_ADD / PEER_REMOVE effects become transport calls (messages encoded
 * with dm_wire), and transport callbacks (payload received, link up/down,
 * peer restarted) become engine events.  No protocol decision is made here;
 * a peer session that lost messages (send-queue overflow, resync) halts
 * the daemon for a restart as a new incarnation (daemon.h,
 * DMD_EXIT_RESTART).
 */
#ifndef DMD_CLUSTER_GLUE_H
#define DMD_CLUSTER_GLUE_H

#include <stdint.h>

struct dmd_cluster;
struct dmd_config;
struct dmd_daemon;

/*
 * Load the TLS files, start listening and install the transport hooks in
 * daemon.  Returns 0, or a negative errno after logging why (bad TLS
 * files, address in use).  *ret untouched on failure.
 */
int dmd_cluster_new(struct dmd_daemon *daemon, const struct dmd_config *config,
    uint64_t incarnation, uint64_t seed, struct dmd_cluster **ret);
struct dmd_cluster *dmd_cluster_free(struct dmd_cluster *cluster);

/* Before exiting: run base until every peer link has written what was
 * queued for it, at most ms milliseconds (the LEAVE_ACK of the step that
 * left, or that a last member sent before it stopped, must reach its peer;
 * a lost one made the peer keep this node as an agreed removal). */
void dmd_cluster_drain(struct dmd_cluster *cluster, struct event_base *base, int ms);

/* Reload CA, certificate, key and CRL from config.  If any of the files
 * changed (paths or bytes), every peer link is closed and verified again
 * with the new ones when it is redialed (a peer revoked in the CRL stays
 * out); byte-identical files change nothing.  0, or negative errno (logged;
 * the old files and links stay in use). */
int dmd_cluster_reload_tls(struct dmd_cluster *cluster, const struct dmd_config *config);

#endif /* DMD_CLUSTER_GLUE_H */
