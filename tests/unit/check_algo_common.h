/* check_algo_common.h: helpers shared by check_algo_lamport.c and check_algo_maekawa.c: a
 * cluster of engines running a chosen algorithm, a mutual-exclusion round, and
 * the scenarios both files run with only the algorithm and the node count
 * differing. */
static struct h_cluster C;

/* h_init with another algorithm (the harness's h_config picks RA). */
static void
p_init(int n, enum dm_failure_policy policy, const char *algo)
{
	struct dm_peer_spec peers[H_NODES];
	struct dm_engine_config cfg;

	memset(&C, 0, sizeof(C));
	C.q = calloc(H_QUEUE, sizeof(*C.q));
	ck_assert_ptr_nonnull(C.q);
	C.n = n;
	C.now = 1000;
	for (int i = 0; i < n; i++) {
		snprintf(C.names[i], sizeof(C.names[i]), "node%d", i);
		peers[i].name = C.names[i];
		peers[i].address = "127.0.0.1:2";
	}
	for (int i = 0; i < n; i++) {
		h_config(&cfg, C.names[i], peers, (size_t)n);
		cfg.algorithm = algo;
		cfg.failure_policy = policy;
		ck_assert_int_eq(dm_engine_new(&cfg, &C.e[i]), 0);
		struct dm_event ev = { .type = DM_EV_TICK };
		ck_assert_int_eq(h_step(&C, i, &ev), 0);
	}
}

static void
teardown(void)
{
	h_fini(&C);
}

static bool
granted(uint64_t h)
{
	return h_find(&C, DM_FX_GRANT, h) != NULL;
}

static void
assert_all_idle(void)
{
	for (int i = 0; i < C.n; i++) {
		struct dm_engine_stats st;
		if (C.down[i])
			continue;
		dm_engine_get_stats(C.e[i], &st);
		ck_assert_uint_eq(st.locks_active, 0);
	}
}

/* Every live node asks for "x" at once; release whoever holds until all
 * were served, checking that at most one holds at any time and tokens rise.
 * Crashed nodes (C.down) take no part. */
static void
serve_all(int n, uint64_t base)
{
	bool done[H_NODES] = { false };
	uint64_t last_token = 0;
	int live = 0;

	for (int i = 0; i < n; i++) {
		done[i] = C.down[i];
		if (C.down[i])
			continue;
		live++;
		h_acquire(&C, i, base + (uint64_t)i, "x", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	}
	for (int round = 0; round < live; round++) {
		int holder = -1;
		h_pump(&C);
		for (int i = 0; i < n; i++)
			if (!done[i] && granted(base + (uint64_t)i)) {
				ck_assert_msg(holder < 0, "node%d and node%d hold x together", holder, i);
				holder = i;
			}
		ck_assert_msg(holder >= 0, "round %d: nobody holds x (deadlock)", round);
		ck_assert_uint_gt(h_find(&C, DM_FX_GRANT, base + (uint64_t)holder)->token, last_token);
		last_token = h_find(&C, DM_FX_GRANT, base + (uint64_t)holder)->token;
		done[holder] = true;
		ck_assert_int_eq(h_release(&C, holder, base + (uint64_t)holder), 0);
	}
	h_pump(&C);
}

/* A REQUEST that never reached a member (the engine drops algorithm messages
 * to a node that is still joining) is recovered by the probe after the
 * request timeout, which carries the request: granted, nobody removed. */
static void
lost_request_recovered(const char *algo)
{
	p_init(3, DM_FAILURE_PAPER, algo);
	C.down[1] = true;		/* node1 loses what is sent now */
	h_acquire(&C, 0, 1, "lost", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	C.down[1] = false;
	ck_assert(!granted(1));
	h_advance(&C, C.now + 6000);	/* request timeout 5 s, then the probe */
	ck_assert(granted(1));
	ck_assert_uint_eq(h_roster(&C, 0), 3);
	ck_assert_int_eq(h_release(&C, 0, 1), 0);
	h_pump(&C);
	assert_all_idle();
}

/* Shared mode is refused at once (EOPNOTSUPP), with no message sent. */
static void
shared_refused(const char *algo)
{
	p_init(2, DM_FAILURE_PAPER, algo);
	h_acquire(&C, 0, 1, "s", DM_MODE_SHARED, DM_WAIT_FOREVER);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_DENY, 1));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 1)->error, -EOPNOTSUPP);
	ck_assert_uint_eq(C.sent_algo, 0);
}

/* On n nodes node0 holds "t": node1's try-once is refused EBUSY (with a
 * message of kind busy_kind sent, unless busy_kind is -1); node2's waiting
 * request, cancelled, blocks nobody: after node0's release, try_node's
 * try-once is granted. */
static void
try_and_cancel(const char *algo, int n, int busy_kind, int try_node)
{
	p_init(n, DM_FAILURE_PAPER, algo);
	h_acquire(&C, 0, 1, "t", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	h_acquire(&C, 1, 2, "t", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_pump(&C);
	ck_assert_ptr_nonnull(h_find(&C, DM_FX_DENY, 2));
	ck_assert_int_eq(h_find(&C, DM_FX_DENY, 2)->error, -EBUSY);
	if (busy_kind >= 0)
		ck_assert_uint_ge(C.sent_kind[busy_kind], 1);
	/* A waiting request cancelled: it must not block the next one. */
	h_acquire(&C, 2, 3, "t", DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(3));
	ck_assert_int_eq(h_cancel(&C, 2, 3), 0);
	h_pump(&C);
	h_release(&C, 0, 1);
	h_pump(&C);
	assert_all_idle();
	h_acquire(&C, try_node, 4, "t", DM_MODE_EXCLUSIVE, DM_WAIT_TRY);
	h_pump(&C);
	ck_assert(granted(4));
	h_release(&C, try_node, 4);
	h_pump(&C);
	assert_all_idle();
}

/* n nodes under the majority policy, all asking at once, rounds times over
 * (serve_all: one holder at a time, rising tokens, no deadlock). */
static void
contention_rounds(const char *algo, int n, int rounds)
{
	p_init(n, DM_FAILURE_MAJORITY, algo);
	for (int r = 0; r < rounds; r++)
		serve_all(n, 1000u * (uint64_t)(r + 1));
	assert_all_idle();
}

/* Node holder takes lock (handle 1); then node waiter waits for it (handle 2). */
static void
hold_and_wait(const char *lock, int holder, int waiter)
{
	h_acquire(&C, holder, 1, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(granted(1));
	h_acquire(&C, waiter, 2, lock, DM_MODE_EXCLUSIVE, DM_WAIT_FOREVER);
	h_pump(&C);
	ck_assert(!granted(2));
}

/* On n nodes node0 holds lock (handle 1) and node waiter waits (handle 2);
 * node0 crashes, and within wait_ms the waiter is granted. */
static void
failed_holder_granted(const char *algo, int n, const char *lock, int waiter, dm_msec_t wait_ms)
{
	p_init(n, DM_FAILURE_PAPER, algo);
	hold_and_wait(lock, 0, waiter);
	C.down[0] = true;	/* the holder crashes */
	h_advance(&C, C.now + wait_ms);
	ck_assert(granted(2));
}
