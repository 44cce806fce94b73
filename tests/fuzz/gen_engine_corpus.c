/*
 * gen_engine_corpus.c: writes the seed corpus of the engine fuzz target
 * (fuzz_engine.c).  For every registered algorithm it runs short simulated
 * 3-node clusters (tests/sim) and records what node n0's engine was given
 * (messages from n1 and n2 as wire bytes, time passing, its clients'
 * acquires and releases, link changes) as a fuzz_engine.h script, so the
 * fuzzer starts from real traffic of every message kind and payload.
 *
 * Usage: gen_engine_corpus DIR   (writes DIR/<algorithm>-<n>)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine.h"
#include "dm_msg.h"
#include "dm_wire.h"
#include "fuzz_engine.h"
#include "sim_world.h"

#define GEN_BYTES_MAX	(24 * 1024)
#define GEN_CLIENTS	8

struct gen {
	uint8_t		 out[GEN_BYTES_MAX];
	size_t		 len;
	bool		 full, started;
	dm_msec_t	 last_now;
	uint64_t	 handles[GEN_CLIENTS];	/* client slot -> n0's handle */
};

static void
put(struct gen *g, const uint8_t *bytes, size_t n)
{
	if (g->full || g->len + n > sizeof(g->out)) {
		g->full = true;
		return;
	}
	memcpy(g->out + g->len, bytes, n);
	g->len += n;
}

static void
put_op(struct gen *g, enum fz_op op, uint8_t arg)
{
	put(g, (const uint8_t[]){ (uint8_t)op, arg }, 2);
}

static int
slot_of(struct gen *g, uint64_t handle, bool claim)
{
	for (int i = 0; i < GEN_CLIENTS; i++)
		if (g->handles[i] == handle)
			return i;
	if (!claim)
		return -1;
	for (int i = 0; i < GEN_CLIENTS; i++)
		if (g->handles[i] == 0) {
			g->handles[i] = handle;
			return i;
		}
	return -1;
}

static void
observe(void *ctx, sim_time_t now, int node, const struct dm_event *ev)
{
	struct gen *g = ctx;
	uint8_t wire[DM_WIRE_MSG_MAX];
	size_t len;
	int c;

	(void)now;
	if (node != 0 || g->full)
		return;
	if (!g->started) {
		g->started = true;
		g->last_now = ev->now;
	}
	while (ev->now > g->last_now) {
		dm_msec_t d = ev->now - g->last_now;
		uint8_t step = d > 255 ? 255 : (uint8_t)d;

		put_op(g, FZ_OP_TICK, step);
		g->last_now += step;
	}
	switch (ev->type) {
	case DM_EV_RECEIVE:
		if (strcmp(ev->u.receive.peer, "n1") != 0 && strcmp(ev->u.receive.peer, "n2") != 0)
			return;
		if (dm_wire_encode(ev->u.receive.msg, wire, sizeof(wire), &len) != 0 || len > 0x7fff)
			return;
		put_op(g, FZ_OP_RECEIVE, (uint8_t)(((len >> 8) << 1) |
		    (strcmp(ev->u.receive.peer, "n2") == 0)));
		put(g, (const uint8_t[]){ (uint8_t)(len & 0xff) }, 1);
		put(g, wire, len);
		return;
	case DM_EV_ACQUIRE:
		if ((c = slot_of(g, ev->u.acquire.handle, true)) < 0)
			return;
		put_op(g, FZ_OP_ACQUIRE, (uint8_t)(c |
		    (strcmp(ev->u.acquire.lock, "lock/b") == 0 ? 0x08 : 0) |
		    (ev->u.acquire.mode == DM_MODE_SHARED ? 0x10 : 0) |
		    (ev->u.acquire.wait_ms == DM_WAIT_TRY ? 0x20 :
		     ev->u.acquire.wait_ms == DM_WAIT_FOREVER ? 0 : 0x40)));
		return;
	case DM_EV_RELEASE:
	case DM_EV_CANCEL:
		if ((c = slot_of(g, ev->u.release.handle, false)) < 0)
			return;
		put_op(g, ev->type == DM_EV_RELEASE ? FZ_OP_RELEASE : FZ_OP_CANCEL, (uint8_t)c);
		g->handles[c] = 0;
		return;
	case DM_EV_LINK_UP:
	case DM_EV_LINK_DOWN:
		if (strcmp(ev->u.link.peer, "n1") != 0 && strcmp(ev->u.link.peer, "n2") != 0)
			return;
		put_op(g, FZ_OP_LINK, (uint8_t)((strcmp(ev->u.link.peer, "n2") == 0) |
		    (ev->type == DM_EV_LINK_UP ? 2 : 0)));
		return;
	default:
		return;
	}
}

/* A client slot is free again once n0 denied it or it lost its lock. */
static void
observe_effect(void *ctx, sim_time_t now, int node, const struct dm_effect *fx)
{
	struct gen *g = ctx;
	int c;

	(void)now;
	if (node != 0)
		return;
	if (fx->type == DM_FX_DENY && (c = slot_of(g, fx->u.deny.handle, false)) >= 0)
		g->handles[c] = 0;
	if (fx->type == DM_FX_LOST && (c = slot_of(g, fx->u.lost.handle, false)) >= 0)
		g->handles[c] = 0;
}

static int
write_seed(const char *dir, const char *algorithm, unsigned k, const struct gen *g)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%u", dir, algorithm, k);
	if (!(f = fopen(path, "wb")))
		return -errno;
	if (fwrite(g->out, 1, g->len, f) != g->len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) == 0 ? 0 : -errno;
}

int
main(int argc, char **argv)
{
	const char *const *names = dm_algorithm_names();
	static struct gen g;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 64;
	}
	for (size_t a = 0; names[a]; a++) {
		/* k = 0 fault-free, 1 link resets, 2 partitions (removal
		 * votes, refusals, heartbeat acks naming pending removals) */
		for (unsigned k = 0; k < 3; k++) {
			struct sim_config cfg = {
				.seed = 11 + k, .nodes = 3, .algorithm = names[a],
				.faults = k == 2 ? SIM_F_PARTITION : k ? SIM_F_LINK : 0,
				.shared = true,
				.fault_ms = 200, .calm_ms = 150,
				.observe_event = observe, .observe_effect = observe_effect,
				.hook_ctx = &g,
			};
			struct sim_result res;
			int r;

			memset(&g, 0, sizeof(g));
			put(&g, (const uint8_t[]){ (uint8_t)a }, 1);
			if ((r = sim_run(&cfg, &res)) < 0) {
				fprintf(stderr, "%s: simulation failed: %s\n", names[a], strerror(-r));
				return 1;
			}
			if ((r = write_seed(argv[1], names[a], k, &g)) < 0) {
				fprintf(stderr, "%s: %s\n", argv[1], strerror(-r));
				return 1;
			}
			printf("%s-%u: %zu bytes\n", names[a], k, g.len);
		}
	}
	return 0;
}
