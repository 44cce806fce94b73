/*
 * sim_check.h: the simulator's oracle.  It is told, in real simulated time,
 * what every client asked for and what it was granted, and it checks:
 *   - mutual exclusion: no two clients hold one lock incompatibly (two
 *     exclusive, or exclusive with shared) at the same real instant, where
 *     a client holds from its grant until it releases, is told the lock is
 *     lost, or its grant's expiry (deadline on its host clock, converted to
 *     real time by the caller) passes;
 *   - fencing tokens: an exclusive grant's token exceeds every earlier
 *     grant's token for that name, a shared grant's exceeds every earlier
 *     exclusive grant's;
 *   - liveness: once healed, every pending request is granted or denied
 *     within a bound;
 *   - the Ricart-Agrawala Appendix bound: with FIFO links, at most 2(N-1)
 *     entries of other nodes into their critical sections between a node's
 *     REQUEST and its own entry (an entry = the node going from no local
 *     holder of the name to one).  Only entries in a mode that conflicts
 *     with the waiter's count (section 6.6: readers never defer readers);
 *     a local handoff continues an entry unless the waiter's REQUEST had
 *     already reached that node (see note_grant in sim_check.c).
 * It knows nothing of engines or messages, so it can be unit-tested with
 * hand-made histories.  The first violation is kept in ck->what.
 */
#ifndef SIM_CHECK_H
#define SIM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dm_types.h"
#include "sim_heap.h"

#define SIM_NODES_MAX		64
#define SIM_CHECK_WHAT_MAX	512

enum sim_violation {
	SIM_OK = 0,
	SIM_V_EXCLUSION,	/* two incompatible holders at one instant */
	SIM_V_TOKEN,		/* fencing token did not increase */
	SIM_V_LIVENESS,		/* request pending too long after healing */
	SIM_V_BOUND,		/* more than 2(N-1) conflicting entries before ours */
	SIM_V_PROTOCOL,		/* grant without request, double grant, ... */
	SIM_V_MESSAGES,		/* fault-free message count not 2(N-1) per entry */
	SIM_V_NONDETERMINISM,	/* a replay of the seed ran differently */
};

struct sim_claim;
struct sim_request;
struct sim_lockstate;

struct sim_checker {
	struct sim_claim	*claims;
	size_t			 n_claims, cap_claims;
	struct sim_request	*reqs;
	size_t			 n_reqs, cap_reqs;
	struct sim_lockstate	*locks;
	size_t			 n_locks, cap_locks;

	sim_time_t		 healed_at;	/* 0: faults may still happen */
	bool			 healed;
	unsigned		 bound_nodes;	/* N for the Appendix bound; 0 = off */

	enum sim_violation	 violation;
	char			 what[SIM_CHECK_WHAT_MAX];

	/* Statistics. */
	uint64_t		 grants, denials, entries;
};

const char *sim_violation_name(enum sim_violation v);

void sim_check_init(struct sim_checker *ck);
void sim_check_fini(struct sim_checker *ck);

/* Every function returns 0, or -1 once a violation has been recorded
 * (then and on every later call). */
int sim_check_request(struct sim_checker *ck, sim_time_t t, int node,
    uint64_t handle, const char *lock, enum dm_mode mode);
int sim_check_grant(struct sim_checker *ck, sim_time_t t, int node,
    uint64_t handle, uint64_t token, sim_time_t expiry);
int sim_check_deny(struct sim_checker *ck, sim_time_t t, uint64_t handle);
/* The client withdrew a waiting request (cancel). */
int sim_check_withdraw(struct sim_checker *ck, sim_time_t t, uint64_t handle);
/* The holder stopped holding: release, LOST, crash of its node.  The
 * engine no longer holds the lock for it either. */
int sim_check_end(struct sim_checker *ck, sim_time_t t, uint64_t handle);
/* The holder's expiry moved (EXTEND); 0 = none. */
int sim_check_expiry(struct sim_checker *ck, sim_time_t t, uint64_t handle,
    sim_time_t expiry);
/* Node sent a REQUEST (number seq) for lock in mode: the first of a round
 * starts a network-level request; later ones may only upgrade its mode. */
int sim_check_net_request(struct sim_checker *ck, sim_time_t t, int node, const char *lock,
    enum dm_mode mode, uint64_t seq);
/* Node received from's REQUEST number seq for lock. */
void sim_check_net_deliver(struct sim_checker *ck, int node, int from, const char *lock,
    uint64_t seq);
/* Stop tracking node's network request for lock (cancel, timeout, fault). */
void sim_check_untrack(struct sim_checker *ck, int node, const char *lock);
void sim_check_untrack_all(struct sim_checker *ck);
/* Forget every request and claim of node (it crashed). */
int sim_check_forget_node(struct sim_checker *ck, sim_time_t t, int node);
/* Faults have stopped and the network is whole from t on. */
void sim_check_heal(struct sim_checker *ck, sim_time_t t);
/* Liveness: after healing, no request pending longer than bound. */
int sim_check_progress(struct sim_checker *ck, sim_time_t t, sim_time_t bound);
/* Messages per entry in a fault-free run: exactly per_peer * (N-1)
 * (Ricart-Agrawala: 2). */
int sim_check_messages(struct sim_checker *ck, uint64_t messages, uint64_t entries,
    unsigned n_nodes, unsigned per_peer);
/* Record a violation found elsewhere (e.g. an engine error return). */
int sim_check_fail(struct sim_checker *ck, enum sim_violation v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t sim_check_pending(const struct sim_checker *ck);

#endif /* SIM_CHECK_H */
