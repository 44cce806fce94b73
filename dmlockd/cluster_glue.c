/*
 * cluster_glue.c: the peer transport as the daemon's transport hooks, and
 * transport callbacks as engine events.  Encoding and decoding of engine
 * messages (dm_wire) happens here, in one reusable buffer each way.  A
 * session that lost messages (send-queue overflow, resync) halts the
 * daemon with DMD_EXIT_RESTART.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "dm_msg.h"
#include "dm_wire.h"
#include "dmlockd/cluster_glue.h"
#include "dmlockd/config_file.h"
#include "dmlockd/daemon.h"
#include "dmlockd/log.h"
#include "dmlockd/peer_transport.h"
#include "dmlockd/tls.h"

struct dmd_cluster {
	struct dmd_daemon	*daemon;
	struct peer_transport	*transport;
	uint32_t		 send_queue_limit;	/* for the overflow message */
	unsigned char		 tls_digest[32];	/* of the TLS files in use */
	bool			 tls_digest_ok;
	uint8_t			 out[DM_WIRE_MSG_MAX];
	struct dm_msg		 in;
};

#define TLS_FILE_MAX	(16u << 20)	/* larger files are not digested */

static int
digest_file(EVP_MD_CTX *md, const char *path)
{
	unsigned char buf[8192];
	size_t n, total = 0;
	FILE *f;

	if (path == NULL)
		return EVP_DigestUpdate(md, "-", 2) == 1 ? 0 : -ENOMEM;
	if (EVP_DigestUpdate(md, path, strlen(path) + 1) != 1)
		return -ENOMEM;
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		total += n;
		if (total > TLS_FILE_MAX || EVP_DigestUpdate(md, buf, n) != 1)
			break;
	}
	int r = ferror(f) ? -EIO : total > TLS_FILE_MAX ? -EFBIG : 0;
	fclose(f);
	OPENSSL_cleanse(buf, sizeof(buf));
	return r;
}

/* SHA-256 over the TLS files' paths and contents (the CRL optional): a
 * reload with byte-identical files changes nothing. */
static int
tls_files_digest(const struct dmd_config *c, unsigned char out[32])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = 0;
	int r = -ENOMEM;

	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	if ((r = digest_file(md, c->tls_ca)) < 0 || (r = digest_file(md, c->tls_cert)) < 0 ||
	    (r = digest_file(md, c->tls_key)) < 0 || (r = digest_file(md, c->tls_crl)) < 0)
		goto out;
	r = EVP_DigestFinal_ex(md, out, &len) == 1 && len == 32 ? 0 : -ENOMEM;
out:
	EVP_MD_CTX_free(md);
	return r;
}

static int
cluster_tls_new(const struct dmd_config *c, SSL_CTX **ret)
{
	char err[512] = "";
	struct tls_files files = {
		.ca = c->tls_ca, .cert = c->tls_cert, .key = c->tls_key, .crl = c->tls_crl,
	};
	int r = tls_context_new(&files, ret, err, sizeof(err));
	if (r < 0)
		return log_error_errno(r, "TLS: %s", err);
	return 0;
}

static void
glue_send(void *ctx, const char *peer, const struct dm_msg *msg)
{
	struct dmd_cluster *c = ctx;
	size_t len = 0;
	int r = dm_wire_encode(msg, c->out, sizeof(c->out), &len);
	if (r < 0) {
		log_error_errno(r, "cannot encode %s for %s", dm_msg_kind_name(msg->kind), peer);
		return;
	}
	r = peer_transport_send(c->transport, peer, c->out, len);
	if (r < 0) {
		struct log_fields f = { .peer = peer, .lock = msg->lock_len ? msg->lock : NULL };
		log_full(LOG_LEVEL_WARNING, &f, "cannot send %s: %s", dm_msg_kind_name(msg->kind),
		    strerror(-r));
	}
}

static void
glue_peer_add(void *ctx, const char *name, const char *address)
{
	struct dmd_cluster *c = ctx;
	int r = peer_transport_add_peer(c->transport, name,
	    address != NULL && address[0] != '\0' ? address : NULL);
	if (r < 0 && r != -EINVAL) {
		log_warning_errno(r, "cannot link to peer %s at %s", name, address ? address : "-");
		return;
	}
	/* The link may have come up before the engine knew the peer (a
	 * sponsor's link, up before the roster naming it arrived): tell the
	 * engine now.  We are inside an effect, so the step is deferred. */
	struct peer_transport_peer_info info;
	if (peer_transport_peer_info(c->transport, name, &info) == 0 && info.link_up) {
		struct dm_event ev = { .type = DM_EV_LINK_UP, .u.link.peer = name };
		(void)dmd_daemon_step(c->daemon, &ev);
	}
}

static void
glue_peer_remove(void *ctx, const char *name)
{
	struct dmd_cluster *c = ctx;
	(void)peer_transport_remove_peer(c->transport, name);
}

static int
glue_peer_info(void *ctx, const char *name, struct dmd_peer_link_info *ret)
{
	struct dmd_cluster *c = ctx;
	struct peer_transport_peer_info info;
	int r = peer_transport_peer_info(c->transport, name, &info);
	if (r < 0)
		return r;
	*ret = (struct dmd_peer_link_info){ .link_up = info.link_up,
	    .last_contact_ms = info.last_contact_ms, .rtt_us = info.rtt_us,
	    .data_sent = (int64_t)info.data_frames_sent,
	    .data_received = (int64_t)info.data_frames_received };
	return 0;
}

static void
glue_hold(void *ctx)
{
	struct dmd_cluster *c = ctx;

	peer_transport_hold(c->transport);
}

static void
glue_release(void *ctx)
{
	struct dmd_cluster *c = ctx;

	peer_transport_release(c->transport);
}

static const struct dmd_transport_ops glue_ops = {
	.send = glue_send,
	.peer_add = glue_peer_add,
	.peer_remove = glue_peer_remove,
	.peer_info = glue_peer_info,
	.hold = glue_hold,
	.release = glue_release,
};

static void
step_or_warn(struct dmd_cluster *c, struct dm_event *ev, const char *peer)
{
	int r = dmd_daemon_step(c->daemon, ev);
	if (r < 0 && r != -ESHUTDOWN) {	/* -ESHUTDOWN: halted, exiting */
		struct log_fields f = { .peer = peer };
		log_full(LOG_LEVEL_WARNING, &f, "engine refused event %d from peer: %s",
		    (int)ev->type, strerror(-r));
	}
}

static void
on_message(void *ctx, const char *peer, const uint8_t *payload, size_t len)
{
	struct dmd_cluster *c = ctx;
	int r = dm_wire_decode(payload, len, &c->in);
	if (r < 0) {
		struct log_fields f = { .peer = peer };
		log_full(LOG_LEVEL_WARNING, &f, "malformed engine message (%zu bytes): %s; "
		    "resetting the link", len, strerror(-r));
		(void)peer_transport_cut_link(c->transport, peer);
		return;
	}
	struct dm_event ev = { .type = DM_EV_RECEIVE, .u.receive = { .peer = peer, .msg = &c->in } };
	step_or_warn(c, &ev, peer);
}

static void
on_link_up(void *ctx, const char *peer)
{
	struct dmd_cluster *c = ctx;
	struct log_fields f = { .peer = peer };
	log_full(LOG_LEVEL_INFO, &f, "link up");
	struct dm_event ev = { .type = DM_EV_LINK_UP, .u.link.peer = peer };
	step_or_warn(c, &ev, peer);
}

static void
on_link_down(void *ctx, const char *peer)
{
	struct dmd_cluster *c = ctx;
	struct log_fields f = { .peer = peer };
	log_full(LOG_LEVEL_INFO, &f, "link down");
	struct dm_event ev = { .type = DM_EV_LINK_DOWN, .u.link.peer = peer };
	step_or_warn(c, &ev, peer);
}

static void
on_peer_restarted(void *ctx, const char *peer, uint64_t incarnation)
{
	struct dmd_cluster *c = ctx;
	struct log_fields f = { .peer = peer };
	log_full(LOG_LEVEL_NOTICE, &f, "peer restarted (incarnation %llx)",
	    (unsigned long long)incarnation);
	struct dm_event ev = { .type = DM_EV_PEER_RESTARTED, .u.restarted.peer = peer };
	step_or_warn(c, &ev, peer);
}

/*
 * A message to a live peer was lost without the engine knowing: the
 * engine assumes every message to a peer in its roster arrives, in order,
 * so this node's state is no longer one the protocol allows (a lost token
 * or REPLY can stall the cluster).  The engine cannot take a new
 * incarnation in-process, so the process ends, like a crash at this point
 * (no more messages, no LEAVE), and its restart is a new incarnation the
 * other nodes handle as a crashed-and-restarted peer.
 */
static void
on_send_overflow(void *ctx, const char *peer, size_t unacked)
{
	struct dmd_cluster *c = ctx;
	struct log_fields f = { .peer = peer };

	if (dmd_daemon_halt_status(c->daemon) != 0)
		return;		/* already on the way out */
	log_full(LOG_LEVEL_ERR, &f, "send queue to peer %s overflowed: %zu messages "
	    "unacknowledged (send_queue_limit %" PRIu32 "), a message to it was dropped: this "
	    "node's cluster state is no longer valid, dmlockd exits with status %d and must be "
	    "restarted (systemd: Restart=on-failure) so that the cluster sees a new incarnation; "
	    "check the network link between this node and %s (it carried nothing back while "
	    "both nodes stayed in the cluster)", peer, unacked, c->send_queue_limit,
	    DMD_EXIT_RESTART, peer);
	dmd_daemon_halt(c->daemon, DMD_EXIT_RESTART);
}

/* The same hazard through the transport's resync (TRANSPORT-NOTES.md): both
 * ends dropped queued messages of a session their engines think is live.
 * Exiting makes the peer see a restart (its engine's case) instead of a
 * new epoch it would take silently. */
static void
on_session_lost(void *ctx, const char *peer, size_t dropped, const char *why)
{
	struct dmd_cluster *c = ctx;
	struct log_fields f = { .peer = peer };

	if (dmd_daemon_halt_status(c->daemon) != 0)
		return;
	log_full(LOG_LEVEL_ERR, &f, "session with peer %s out of step (%s): %zu queued "
	    "messages to it dropped, and it drops those it queued to this node: this node's "
	    "cluster state is no longer valid, dmlockd exits with status %d and must be "
	    "restarted (systemd: Restart=on-failure) so that the cluster sees a new incarnation; "
	    "check whether %s restarted just now (a dead process's connection read after its "
	    "successor's), else report this with both nodes' logs", peer, why, dropped,
	    DMD_EXIT_RESTART, peer);
	dmd_daemon_halt(c->daemon, DMD_EXIT_RESTART);
}

static const struct peer_transport_callbacks glue_callbacks = {
	.on_message = on_message,
	.on_link_up = on_link_up,
	.on_link_down = on_link_down,
	.on_peer_restarted = on_peer_restarted,
	/* on_refused: the transport already logs every refusal with its reason. */
	.on_send_overflow = on_send_overflow,
	.on_session_lost = on_session_lost,
};

int
dmd_cluster_new(struct dmd_daemon *daemon, const struct dmd_config *config,
    uint64_t incarnation, uint64_t seed, struct dmd_cluster **ret)
{
	struct dmd_cluster *c = NULL;
	SSL_CTX *tls = NULL;
	int r;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return log_error_errno(ENOMEM, "cannot allocate the peer transport");
	c->daemon = daemon;
	c->send_queue_limit = config->send_queue_limit;
	c->tls_digest_ok = tls_files_digest(config, c->tls_digest) == 0;
	r = cluster_tls_new(config, &tls);
	if (r < 0)
		goto fail;
	struct peer_transport_config tc = {
		.self = config->node_name,
		.cluster = config->cluster,
		.algorithm = config->algorithm,
		.incarnation = incarnation,
		.listen = (const char *const *)config->listen,
		.n_listen = config->n_listen,
		.tls = tls,
		.seed = seed,
		.refuse_unknown_peers = false,	/* new nodes join through a sponsor */
		.limits = {
			.keepalive_ms = config->keepalive_ms,
			.keepalive_misses = config->keepalive_misses,
			.reconnect_min_ms = config->reconnect_min_ms,
			.reconnect_max_ms = config->reconnect_max_ms,
			.handshake_timeout_ms = config->handshake_timeout_ms,
			.max_handshakes = config->max_handshakes,
			.send_queue_limit = config->send_queue_limit,
			.write_buffer_limit = (size_t)config->write_buffer_limit,
		},
	};
	r = peer_transport_new(dmd_daemon_base(daemon), &tc, &glue_callbacks, c, &c->transport);
	SSL_CTX_free(tls);	/* the transport holds its own reference */
	if (r < 0) {
		log_error_errno(r, "cannot start the peer transport on %s",
		    config->n_listen > 0 ? config->listen[0] : "(no listen address)");
		goto fail;
	}
	dmd_daemon_set_transport(daemon, &glue_ops, c);
	*ret = c;
	return 0;
fail:
	free(c);
	return r;
}

static void
drain_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	*(bool *)arg = true;
}

void
dmd_cluster_drain(struct dmd_cluster *c, struct event_base *base, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	bool late = false;
	struct event *deadline;

	if (c == NULL || base == NULL || !peer_transport_writing(c->transport))
		return;
	deadline = evtimer_new(base, drain_deadline, &late);
	if (deadline == NULL)
		return;
	evtimer_add(deadline, &tv);
	while (!late && peer_transport_writing(c->transport))
		event_base_loop(base, EVLOOP_ONCE);
	event_free(deadline);
}

struct dmd_cluster *
dmd_cluster_free(struct dmd_cluster *c)
{
	if (c == NULL)
		return NULL;
	dmd_daemon_set_transport(c->daemon, NULL, NULL);
	peer_transport_free(c->transport);
	free(c);
	return NULL;
}

int
dmd_cluster_reload_tls(struct dmd_cluster *c, const struct dmd_config *config)
{
	unsigned char digest[32];
	SSL_CTX *tls = NULL;
	bool digest_ok = tls_files_digest(config, digest) == 0;

	if (digest_ok && c->tls_digest_ok && memcmp(digest, c->tls_digest, sizeof(digest)) == 0) {
		log_info("TLS files unchanged; peer links kept");
		return 0;
	}
	int r = cluster_tls_new(config, &tls);
	if (r < 0)
		return r;
	/* Every link was verified against the old CA and CRL: the transport
	 * closes them all, and both ends verify each other again. */
	size_t cut = peer_transport_set_tls(c->transport, tls);
	SSL_CTX_free(tls);
	memcpy(c->tls_digest, digest, sizeof(digest));
	c->tls_digest_ok = digest_ok;
	log_notice("TLS files reloaded; %zu peer link(s) closed to verify the peers again", cut);
	return 0;
}
