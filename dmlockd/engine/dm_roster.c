/*
 * dm_roster.c: the roster (RA §7: the NAMES table and N), its changes and
 * the holder lease.  Accessors for algorithms, startup effects.
 * Membership protocols (join, leave, failure) are in dm_membership*.c.
 */
#include <errno.h>
#include <string.h>

#include "dm_engine_private.h"

/* A listed name's share of dm_roster_digest(): its hash and length, mixed.
 * The digest is the sum of the shares, kept as slots are taken and freed
 * (it is read at every step: dm_record_roster()). */
static uint64_t
name_share(const struct dm_node *n)
{
	return dm_mix64((uint64_t)n->name_hash << 8 | n->name_len);
}

static int
roster_add(struct dm_engine *e, const char *name, const char *address, uint64_t incarnation,
    dm_slot_t *ret)
{
	size_t nlen = strlen(name), alen = address != NULL ? strlen(address) : 0;
	dm_slot_t free_slot = DM_SLOT_NONE;

	if (!dm_node_name_valid(name, nlen) || alen > DM_ADDRESS_MAX)
		return -EINVAL;
	if (dm_roster_find(e, name, nlen) != DM_SLOT_NONE)
		return -EEXIST;
	for (size_t i = 0; i < DM_NODES_MAX; i++)
		if (!e->nodes[i].used) {
			free_slot = (dm_slot_t)i;
			break;
		}
	if (free_slot == DM_SLOT_NONE)
		return -ENOSPC;
	struct dm_node *n = &e->nodes[free_slot];
	memset(n, 0, sizeof(*n));
	n->used = true;
	if ((size_t)free_slot >= e->slot_limit)
		e->slot_limit = (size_t)free_slot + 1;
	n->name_len = (uint8_t)nlen;
	n->name_hash = dm_hash_bytes(name, nlen);
	memcpy(n->name, name, nlen + 1);
	e->roster_digest += name_share(n);
	if (alen > 0)
		memcpy(n->address, address, alen + 1);
	n->incarnation = incarnation;
	n->last_heard = e->now;
	n->joined_vote_subject = DM_SLOT_NONE;
	n->added_by = DM_SLOT_NONE;
	e->n_nodes++;
	if (ret != NULL)
		*ret = free_slot;
	return 0;
}

int
dm_roster_add_member(struct dm_engine *e, const char *name, const char *address,
    uint64_t incarnation, bool announce)
{
	dm_slot_t slot;
	int r = roster_add(e, name, address, incarnation, &slot);

	if (r < 0)
		return r;
	if (announce) {
		struct dm_effect fx = { .type = DM_FX_PEER_ADD,
		    .u.peer = { .name = e->nodes[slot].name, .address = e->nodes[slot].address } };
		dm_emit(e, &fx);
	}
	return 0;
}

struct gone_args {
	dm_slot_t slot;
};

static void
gone_lock(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	const struct gone_args *a = arg;

	e->algo->peer_gone(e, l, a->slot);
	dm_lock_maybe_free(e, l);
}

/* Erase slot from the roster: algorithms assume its answers first. */
void
dm_roster_erase(struct dm_engine *e, dm_slot_t slot)
{
	struct gone_args a = { .slot = slot };
	struct dm_effect fx = { .type = DM_FX_PEER_REMOVE };
	struct dm_node gone;

	if (slot >= DM_NODES_MAX || !e->nodes[slot].used || slot == e->self)
		return;
	/* Out of the roster first, so that N is already smaller when the
	 * algorithms re-evaluate (a grant may follow at once). */
	gone = e->nodes[slot];
	e->roster_digest -= name_share(&gone);
	memset(&e->nodes[slot], 0, sizeof(e->nodes[slot]));
	e->n_nodes--;
	if (dm_bit_get(e->seq_waiting, slot)) {
		dm_bit_set(e->seq_waiting, slot, false);
		e->seq_waiting_n--;
	}
	if (dm_bit_get(e->ack_waiting, slot)) {
		dm_bit_set(e->ack_waiting, slot, false);
		e->ack_waiting_n--;
	}
	/* Its acks no longer count towards a majority of the smaller roster
	 * (the bit AND the count: seed 1862/7, pause, a removed node renewed
	 * its lease with the count of an erased member's ack and granted with
	 * a stale fencing token). */
	for (size_t i = 0; i < e->heartbeats_n; i++) {
		if (dm_bit_get(e->heartbeats[i].acked, slot)) {
			dm_bit_set(e->heartbeats[i].acked, slot, false);
			e->heartbeats[i].acks--;
		}
		dm_bit_set(e->heartbeats[i].excluded, slot, false);
	}
	dm_static_hello_erased(e, slot);	/* (before peer_gone re-evaluates) */
	if (gone.joined_vote_subject != DM_SLOT_NONE)
		dm_membership_vote_orphaned(e, gone.joined_vote_subject);
	if (e->vote_subject == slot)
		dm_membership_vote_dropped(e);
	for (size_t i = 0; i < DM_NODES_MAX; i++)
		if (e->nodes[i].used && e->nodes[i].joined_vote_subject == slot)
			e->nodes[i].joined_vote_subject = DM_SLOT_NONE;
	dm_table_lock_foreach(e, gone_lock, &a);
	fx.u.peer.name = gone.name;
	fx.u.peer.address = gone.address;
	dm_emit(e, &fx);
	dm_local_kick_all(e);
	dm_membership_progress(e);
}

static void
withdraw_requesting(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	(void)arg;
	if (l->phase != DM_PHASE_REQUESTING || strcmp(l->name, DM_ROSTER_LOCK) == 0)
		return;
	e->algo->withdraw(e, l);
	l->phase = DM_PHASE_IDLE;
}

static void
request_again(struct dm_engine *e, struct dm_lock *l, void *arg)
{
	(void)arg;
	if (l->phase == DM_PHASE_IDLE && l->waiters.head != NULL)
		dm_local_reconcile(e, l);
}

/* Withdraw every request we have out, erase slot old (unless
 * DM_SLOT_NONE) and add the member, then ask again of the new roster.  A
 * lock we hold stays held (the new incarnation needs our permission, which
 * we defer as usual); the roster lock is the sponsor's business (it holds
 * or gives it up itself). */
static int
add_asking_again(struct dm_engine *e, dm_slot_t old, const char *name, const char *address,
    uint64_t incarnation)
{
	uint64_t replaced = 0;
	dm_slot_t added;
	int r;

	dm_table_lock_foreach(e, withdraw_requesting, NULL);
	if (old != DM_SLOT_NONE) {
		replaced = e->nodes[old].incarnation;
		dm_roster_erase(e, old);
	}
	r = dm_roster_add_member(e, name, address, incarnation, true);
	if (old != DM_SLOT_NONE && r == 0 &&
	    (added = dm_roster_find(e, name, strlen(name))) != DM_SLOT_NONE)
		e->nodes[added].replaced_incarnation = replaced;
	dm_table_lock_foreach(e, request_again, NULL);
	return r;
}

/* Replace slot's entry with another incarnation of the same name.  Unlike
 * a removal, the name stays a member, and a request of ours sent to it
 * went to whichever incarnation answered that name: the live one may be
 * deferring it.  Taking its reply as given when the old entry goes (what
 * a removal does) let us enter beside it (seed 9629/14, crashes: a late
 * NODE_ADD replaced the entry of a node that held the lock).  So every
 * request we have out is withdrawn first and asked again. */
int
dm_roster_replace(struct dm_engine *e, dm_slot_t slot, const char *name, const char *address,
    uint64_t incarnation)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used || slot == e->self)
		return -EINVAL;
	return add_asking_again(e, slot, name, address, incarnation);
}

/* A member added under a name one of whose incarnations we removed: as for
 * a replacement, a request of ours sent to that name may have reached the
 * live incarnation, which may be deferring it, while the removal took the
 * removed one's reply as given.  Dmlock-sim --seeds 416189..416189 --nodes
 * 1-16 --rotate-faults (N = 14, crashes): n7 listed n4's dead incarnation
 * 2, removed it and took its reply for lock/b as given; n4's incarnation 3
 * had received that REQUEST and deferred it behind its own; its NODE_ADD
 * reached n7 next, and n7 entered while n4 held the lock.  So: withdraw
 * every request, add, ask again. */
int
dm_roster_add_returning(struct dm_engine *e, const char *name, const char *address,
    uint64_t incarnation)
{
	return add_asking_again(e, DM_SLOT_NONE, name, address, incarnation);
}

/* Undo a transient entry that no lock state refers to: no effects. */
void
dm_roster_erase_quiet(struct dm_engine *e, dm_slot_t slot)
{
	if (slot >= DM_NODES_MAX || !e->nodes[slot].used || slot == e->self)
		return;
	e->roster_digest -= name_share(&e->nodes[slot]);
	memset(&e->nodes[slot], 0, sizeof(e->nodes[slot]));
	e->n_nodes--;
}

int
dm_roster_init(struct dm_engine *e, const struct dm_engine_config *cfg)
{
	int r;

	r = roster_add(e, cfg->self, cfg->self_address, cfg->incarnation, &e->self);
	if (r < 0)
		return r;
	if (cfg->n_peers > DM_NODES_MAX - 1 || (cfg->n_peers > 0 && cfg->peers == NULL))
		return -EINVAL;
	for (size_t i = 0; i < cfg->n_peers; i++) {
		if (cfg->peers[i].name == NULL)
			return -EINVAL;
		if (strcmp(cfg->peers[i].name, cfg->self) == 0)
			continue;	/* self may be listed */
		if (e->start_recorded && !dm_record_lists(e, cfg->peers[i].name))
			continue;	/* removed, or left, before we stopped */
		r = roster_add(e, cfg->peers[i].name, cfg->peers[i].address, 0, NULL);
		if (r < 0)
			return r == -EEXIST ? -EINVAL : r;
	}
	if (e->start_recorded)
		e->roster_epoch = e->roster_applied = e->record.label;
	if (e->join_from_peers) {
		/* The cluster went on without this roster: its peers are the
		 * sponsors to try in turn (the config was checked above). */
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j)) {
			struct dm_sponsor *sp = &e->sponsors[e->n_sponsors];

			if (j == e->self)
				continue;
			memcpy(sp->name, e->nodes[j].name, sizeof(sp->name));
			memcpy(sp->address, e->nodes[j].address, sizeof(sp->address));
			e->n_sponsors++;
		}
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (j != e->self)
				dm_roster_erase_quiet(e, j);
		e->membership = DM_MEMBER_JOINING;
		return 0;
	}
	if (cfg->sponsor != NULL) {
		size_t nlen = cfg->sponsor->name != NULL ? strlen(cfg->sponsor->name) : 0;
		size_t alen = cfg->sponsor->address != NULL ? strlen(cfg->sponsor->address) : 0;
		if (!dm_node_name_valid(cfg->sponsor->name, nlen) || alen > DM_ADDRESS_MAX ||
		    strcmp(cfg->sponsor->name, cfg->self) == 0)
			return -EINVAL;
		memcpy(e->sponsor, cfg->sponsor->name, nlen + 1);
		if (alen > 0)
			memcpy(e->sponsor_address, cfg->sponsor->address, alen + 1);
		memcpy(e->sponsors[0].name, e->sponsor, nlen + 1);
		memcpy(e->sponsors[0].address, e->sponsor_address, sizeof(e->sponsor_address));
		e->n_sponsors = 1;
		e->membership = DM_MEMBER_JOINING;
	} else {
		e->membership = DM_MEMBER_ACTIVE;
	}
	return 0;
}

void
dm_roster_start(struct dm_engine *e)
{
	for (size_t i = 0; i < DM_NODES_MAX; i++) {
		if (!e->nodes[i].used || i == e->self)
			continue;
		e->nodes[i].last_heard = e->now;
		struct dm_effect fx = { .type = DM_FX_PEER_ADD,
		    .u.peer = { .name = e->nodes[i].name, .address = e->nodes[i].address } };
		dm_emit(e, &fx);
	}
	if (e->membership == DM_MEMBER_JOINING) {
		if (e->join_from_peers)
			dm_log(e, DM_LOG_NOTICE, "the membership record shows a cluster that went on "
			    "without the configured peers' roster: joining it through them", NULL,
			    DM_SLOT_NONE);
		dm_membership_join_start(e);
		return;
	}
	if (e->start_recorded)
		dm_log(e, DM_LOG_NOTICE, "the membership record shows members removed or gone since "
		    "the configured peers: starting as a member of the recorded roster", NULL,
		    DM_SLOT_NONE);
	struct dm_effect ready = { .type = DM_FX_READY };
	dm_emit(e, &ready);
}

/* A fingerprint of the set of names listed (order-free): two rosters with
 * the same names have the same digest (dm_lease.c, "stale rosters"). */
uint64_t
dm_roster_digest(const struct dm_engine *e)
{
	return e->roster_digest;	/* (the sum of name_share() over the listed) */
}

/* The digest our roster will have once slot is erased (a removal's
 * announcement carries it: dm_membership_failure.c). */
uint64_t
dm_roster_digest_without(const struct dm_engine *e, dm_slot_t slot)
{
	return e->roster_digest - name_share(&e->nodes[slot]);
}

/* What listing name would add to our digest: 0 if we list it. */
uint64_t
dm_roster_digest_share(const struct dm_engine *e, const char *name)
{
	struct dm_node n = { .name_len = (uint8_t)strlen(name) };

	if (n.name_len == 0 || dm_roster_find(e, name, n.name_len) != DM_SLOT_NONE)
		return 0;
	n.name_hash = dm_hash_bytes(name, n.name_len);
	return name_share(&n);
}

bool
dm_roster_ready(const struct dm_engine *e)
{
	return e->membership == DM_MEMBER_ACTIVE;
}

dm_slot_t
dm_roster_find(const struct dm_engine *e, const char *name, size_t len)
{
	uint32_t h;

	if (len == 0 || len > DM_NODE_NAME_MAX)
		return DM_SLOT_NONE;
	/* Once per message received: the hash spares a byte comparison with
	 * every member whose name has the same length. */
	h = dm_hash_bytes(name, len);
	for (size_t i = 0; i < e->slot_limit; i++)
		if (e->nodes[i].used && e->nodes[i].name_hash == h && e->nodes[i].name_len == len &&
		    memcmp(e->nodes[i].name, name, len) == 0)
			return (dm_slot_t)i;
	return DM_SLOT_NONE;
}

dm_slot_t
dm_roster_self(const struct dm_engine *e)
{
	return e->self;
}

size_t
dm_roster_size(const struct dm_engine *e)
{
	return e->n_nodes;
}

dm_slot_t
dm_roster_next(const struct dm_engine *e, dm_slot_t after)
{
	size_t i = after == DM_SLOT_NONE ? 0 : (size_t)after + 1;

	for (; i < e->slot_limit; i++)
		if (e->nodes[i].used)
			return (dm_slot_t)i;
	return DM_SLOT_NONE;
}

int
dm_roster_compare(const struct dm_engine *e, dm_slot_t a, dm_slot_t b)
{
	const struct dm_node *x = &e->nodes[a], *y = &e->nodes[b];
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	if (c != 0)
		return c;
	return (int)x->name_len - (int)y->name_len;
}

const char *
dm_roster_name(const struct dm_engine *e, dm_slot_t slot)
{
	return slot < DM_NODES_MAX && e->nodes[slot].used ? e->nodes[slot].name : NULL;
}

bool
dm_roster_joined(const struct dm_engine *e)
{
	return e->membership != DM_MEMBER_JOINING && e->membership != DM_MEMBER_RESTARTING &&
	    e->membership != DM_MEMBER_LEFT;
}

uint64_t
dm_roster_incarnation(const struct dm_engine *e, dm_slot_t slot)
{
	if (slot == e->self)
		return e->incarnation;
	return slot < DM_NODES_MAX && e->nodes[slot].used ? e->nodes[slot].incarnation : 0;
}

bool
dm_roster_departing(const struct dm_engine *e, dm_slot_t slot)
{
	return slot < DM_NODES_MAX && e->nodes[slot].used && e->nodes[slot].departing;
}

void
dm_roster_link(struct dm_engine *e, const char *peer, bool up)
{
	dm_slot_t s = dm_roster_find(e, peer, strlen(peer));

	if (s == DM_SLOT_NONE) {
		/* A non-member linked to us (e.g. removed while frozen, or
		 * restarted from a static roster): tell it to rejoin, or it may
		 * wait for ever before saying anything that would earn a
		 * REJOIN.  A joiner in progress ignores it. */
		if (up)
			dm_membership_stranger_linked(e, peer);
		return;
	}
	if (s == e->self || e->nodes[s].link_up == up)
		return;	/* a replayed LINK_UP is not news from the peer */
	e->nodes[s].link_up = up;
	if (up) {
		e->nodes[s].last_heard = e->now;
		dm_static_hello_link_up(e, s);
	}
}
