/*
 * dm_member_record.c: the membership record (struct dm_member_record in
 * dm_engine.h) -- what this node's processes agreed to about membership,
 * kept on disk because a restarted process remembers nothing else: the
 * last roster applied as an active member, the removals agreed to as a
 * voter that that roster does not show yet, the incarnations seen
 * removed, and the self-vote promise.  Loading it at start,
 * storing it (DM_FX_PERSIST_RECORD) before anything can depend on it, and
 * judging by it whether a prober is a node this node saw removed.
 *
 * Why (dmlock-sim --seed 1952 --nodes 5, every fault kind): a node removed
 * while cut off, whose listed members all crashed meanwhile, rebuilt a
 * majority of its stale roster from their restarted incarnations, which
 * vote for their old slots' removal without remembering that their old
 * incarnations had agreed to remove the prober; it then granted beside
 * the cluster that removed it.  The rule (dm_membership_on_suspect()): a
 * process that is not a member helps no prober that its record says was
 * removed -- one missing from the recorded roster at a label above the
 * prober's, or the subject of a recorded agreement at a ballot above the
 * prober's label.  Sketch of why it closes the hole: the removal of P at
 * ballot b was agreed by a majority Q of the roster R it was decided in,
 * and every voter in Q recorded (P, b) before its vote left.  A roster
 * that P can still use (label below b) is R or older; if it is R, every
 * majority of it meets Q, and a member of Q refuses P: a live one does
 * not list P (or stands by its promise), a restarted one by its record
 * (pruned only once it applied a roster at a label >= b, which then
 * omits P or re-admitted it).  A graceful leave is a roster change too,
 * and a leaver that gave up waiting for some members' acknowledgements
 * (dm_membership_left()) keeps them the same way: restarted, it does not
 * help them, from the roster it left, remove its old entry.  NOTES.md,
 * "Session 24", has the rest (older rosters, and the outages this costs).
 */
#include <errno.h>
#include <string.h>

#include "dm_engine_private.h"


int
dm_record_load(struct dm_engine *e, const struct dm_member_record *r)
{
	struct dm_record *rec = &e->record;

	if (r->n_names > DM_NODES_MAX || r->n_removals > DM_NODES_MAX)
		return -E2BIG;
	if ((r->n_names > 0 && r->names == NULL) || (r->n_removals > 0 && r->removals == NULL))
		return -EINVAL;
	for (size_t i = 0; i < r->n_names; i++) {
		if (!dm_node_name_str_valid(r->names[i]))
			return -EINVAL;
		strcpy(rec->names[i], r->names[i]);
	}
	for (size_t i = 0; i < r->n_removals; i++) {
		if (!dm_node_name_str_valid(r->removals[i].name))
			return -EINVAL;
		strcpy(rec->removals[i].name, r->removals[i].name);
		rec->removals[i].ballot = r->removals[i].ballot;
	}
	rec->label = r->label;
	rec->n_names = r->n_names;
	rec->n_removals = r->n_removals;
	rec->promise_prober[0] = '\0';
	rec->promise_label = 0;
	if (r->promise_prober != NULL) {
		if (!dm_node_name_str_valid(r->promise_prober))
			return -EINVAL;
		strcpy(rec->promise_prober, r->promise_prober);
		rec->promise_label = r->promise_label;
	}
	if (r->n_dead > DM_NODES_MAX)
		return -E2BIG;
	if (r->n_dead > 0 && r->dead == NULL)
		return -EINVAL;
	rec->n_dead = 0;
	rec->dead_next = 0;
	for (size_t i = 0; i < r->n_dead; i++) {
		if (!dm_node_name_str_valid(r->dead[i].name))
			return -EINVAL;
		dm_record_note_dead(e, r->dead[i].name, r->dead[i].incarnation);
	}
	rec->dead_changed = false;
	return 0;
}

/* The ring slot of the i-th oldest dead incarnation held. */
static size_t
dead_slot(const struct dm_record *rec, size_t i)
{
	return (rec->dead_next + DM_NODES_MAX - rec->n_dead + i) % DM_NODES_MAX;
}

static void
record_emit(struct dm_engine *e)
{
	struct dm_record *rec = &e->record;
	const char *names[DM_NODES_MAX];
	struct dm_agreed_removal removals[DM_NODES_MAX];
	struct dm_dead_incarnation dead[DM_NODES_MAX];
	struct dm_effect fx = { .type = DM_FX_PERSIST_RECORD };

	for (size_t i = 0; i < rec->n_names; i++)
		names[i] = rec->names[i];
	for (size_t i = 0; i < rec->n_removals; i++)
		removals[i] = (struct dm_agreed_removal){ rec->removals[i].name,
		    rec->removals[i].ballot };
	/* Oldest first, so that loading them back keeps the order. */
	for (size_t i = 0; i < rec->n_dead; i++) {
		size_t k = dead_slot(rec, i);

		dead[i] = (struct dm_dead_incarnation){ rec->dead[k].name, rec->dead[k].incarnation };
	}
	rec->dead_changed = false;
	fx.u.record = (struct dm_member_record){
		.label = rec->label,
		.names = names,
		.n_names = rec->n_names,
		.removals = removals,
		.n_removals = rec->n_removals,
		.promise_prober = rec->promise_prober[0] != '\0' ? rec->promise_prober : NULL,
		.promise_label = rec->promise_label,
		.dead = rec->n_dead > 0 ? dead : NULL,
		.n_dead = rec->n_dead,
	};
	dm_emit(e, &fx);
}

/*
 * At the end of every step: an active member whose roster changed (label
 * or names) since the record was last stored stores it again, dropping
 * the agreed removals its label now covers; any node that noted a dead
 * incarnation this step (dm_record_note_dead()) stores the record too.  The daemon holds the
 * transport's writes for the whole step (peer_transport_hold()), so none
 * of the step's messages -- the NODE_FAILED of a removal is sent before
 * the roster changes -- leaves before the roster is on disk.
 */
/* Does our roster replace the record: are we an active member whose
 * roster differs from the one stored?  *digest: the roster's. */
static bool
record_takes_roster(const struct dm_engine *e, uint64_t *digest)
{
	const struct dm_record *rec = &e->record;

	if (e->membership != DM_MEMBER_ACTIVE)
		return false;
	/* A process that starts as a member of the configured static roster
	 * (label 0) knows less than the record of an earlier one at a higher
	 * label: keep that until this roster is at least as new. */
	if (!rec->mine && e->roster_epoch < rec->label)
		return false;
	*digest = dm_roster_digest(e);
	return !rec->mine || rec->label != e->roster_epoch || rec->digest != *digest;
}

void
dm_record_roster(struct dm_engine *e)
{
	struct dm_record *rec = &e->record;
	uint64_t digest;
	size_t kept = 0;

	if (e->emit == NULL)
		return;
	if (!record_takes_roster(e, &digest)) {
		if (rec->dead_changed)
			record_emit(e);		/* (a dead incarnation noted this step) */
		return;
	}
	rec->mine = true;
	rec->label = e->roster_epoch;
	rec->digest = digest;
	rec->n_names = 0;
	for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
	    j = dm_roster_next(e, j))
		strcpy(rec->names[rec->n_names++], e->nodes[j].name);
	for (size_t i = 0; i < rec->n_removals; i++)
		if (rec->removals[i].ballot > rec->label)
			rec->removals[kept++] = rec->removals[i];
	rec->n_removals = kept;
	if (rec->promise_prober[0] != '\0' && rec->label > rec->promise_label) {
		rec->promise_prober[0] = '\0';	/* (a newer roster covers it) */
		rec->promise_label = 0;
	}
	record_emit(e);
}

/*
 * We leave gracefully, or are told to rejoin: the record keeps the roster
 * we leave behind, without us.  A later process started from the static peers sees from it
 * that the cluster went on without it (dm_record_start_kind()) and
 * joins through a sponsor, instead of forming the static roster again
 * beside the members that went on (dmlock-sim --static-restarts, seed
 * 156/3: three static members left one by one, leaving a node that had
 * joined meanwhile, and restarted from their peers they granted beside
 * it).  The last member leaves a roster of none: no record of names, and
 * its next process forms the static roster again.
 * Only a member's roster replaces the record.  A joiner told to rejoin has
 * no roster but its provisional one, often itself alone; stored, that
 * record of no other names read as "the last member left", and the next
 * process formed the static roster again, at label 0, beside the cluster
 * (hierarchical 505822/6, static restarts, groups of 2, a 6 s fault
 * phase: n5, refused while joining, restarted from the static roster and,
 * a member of that label-0 roster, voted that n3, removed by the cluster
 * and unaware, remove the members of its stale roster; n3 granted beside
 * the cluster).  A joiner keeps the record it has, without its own name.
 */
void
dm_record_left(struct dm_engine *e)
{
	struct dm_record *rec = &e->record;
	size_t kept = 0;

	if (e->emit == NULL)
		return;
	if (dm_membership_holds_roster(e) && (rec->mine || e->roster_epoch >= rec->label)) {
		rec->label = e->roster_epoch;
		rec->n_names = 0;
		for (dm_slot_t j = dm_roster_next(e, DM_SLOT_NONE); j != DM_SLOT_NONE;
		    j = dm_roster_next(e, j))
			if (j != e->self)
				strcpy(rec->names[rec->n_names++], e->nodes[j].name);
	} else {
		/* (An earlier process's roster, newer than ours, or we have
		 * none: keep it.) */
		for (size_t i = 0; i < rec->n_names; i++)
			if (strcmp(rec->names[i], e->nodes[e->self].name) != 0)
				memmove(rec->names[kept++], rec->names[i], sizeof(rec->names[i]));
		rec->n_names = kept;
	}
	rec->mine = true;
	rec->digest = 0;	/* (no roster of ours to compare with any more) */
	record_emit(e);
}

/* Does the record list name as a member? */
bool
dm_record_lists(const struct dm_engine *e, const char *name)
{
	const struct dm_record *rec = &e->record;

	for (size_t i = 0; i < rec->n_names; i++)
		if (strcmp(rec->names[i], name) == 0)
			return true;
	return false;
}

/* Is this a process started as a member from the static peers (or its
 * record) after an earlier one had been a member: a restart, not the
 * cluster's first start?  (Set by dm_engine_new() from the record it
 * loaded.) */
bool
dm_record_restarted_static(const struct dm_engine *e)
{
	return e->static_restart;
}

/*
 * How a process configured with static peers starts, by its record:
 * - no record (the first start), or the record lists exactly this node
 *   and its peers: as a member of that static roster;
 * - the record lists this node and only names among its peers, but not
 *   all of them (members were removed or left): as a member of the
 *   recorded roster at its label, the roster its earlier process had;
 *   forming the whole static roster again could take back a removed
 *   member beside the cluster that removed it;
 * - the record does not list this node (it left, or was told to rejoin),
 *   or lists names the peers do not (nodes that joined later: their
 *   addresses are not known here): the cluster went on without this
 *   roster, and forming it could make a second cluster beside that one
 *   (dmlock-sim --static-restarts, seed 156/3): join through the peers.
 */
enum dm_record_start
dm_record_start_kind(const struct dm_engine *e, const struct dm_engine_config *cfg)
{
	const struct dm_record *rec = &e->record;
	size_t n_static = 1;

	if (rec->n_names == 0 || cfg->self == NULL || (cfg->n_peers > 0 && cfg->peers == NULL))
		return DM_START_STATIC;
	for (size_t i = 0; i < cfg->n_peers; i++)
		n_static += cfg->peers[i].name != NULL && strcmp(cfg->peers[i].name, cfg->self) != 0;
	if (n_static == 1)
		return DM_START_STATIC;	/* configured alone: nobody to join through */
	if (!dm_record_lists(e, cfg->self))
		return DM_START_JOIN;
	for (size_t i = 0; i < rec->n_names; i++) {
		bool peer = strcmp(rec->names[i], cfg->self) == 0;

		for (size_t k = 0; k < cfg->n_peers && !peer; k++)
			peer = cfg->peers[k].name != NULL && strcmp(cfg->peers[k].name, rec->names[i]) == 0;
		if (!peer)
			return DM_START_JOIN;
	}
	return rec->n_names == n_static ? DM_START_STATIC : DM_START_RECORDED;
}

/*
 * As a voter, we agree that subject be removed at ballot: store that
 * before the vote leaves.  -ENOSPC when the record has no room (a removal
 * per name, at most DM_NODES_MAX names pending): the caller refuses.
 */
int
dm_record_agree(struct dm_engine *e, const char *subject, uint64_t ballot)
{
	struct dm_record *rec = &e->record;
	size_t i;

	for (i = 0; i < rec->n_removals; i++)
		if (strcmp(rec->removals[i].name, subject) == 0)
			break;
	if (i == rec->n_removals) {
		if (i == DM_NODES_MAX)
			return -ENOSPC;
		strcpy(rec->removals[i].name, subject);
		rec->removals[i].ballot = 0;
		rec->n_removals++;
	}
	if (rec->removals[i].ballot >= ballot)
		return 0;
	rec->removals[i].ballot = ballot;
	record_emit(e);
	return 0;
}

/*
 * Did an earlier process of this node (or this one, as a member) see the
 * prober peer, whose roster label is label, removed: missing from the
 * recorded roster at a higher label, or the subject of a removal agreed
 * to at a higher ballot?  A prober that roster still lists may merely lag
 * behind (a survivor whose peers all crashed, seed 2947/4): not refused.
 */
/* Is peer missing from the recorded roster, its roster label below the
 * recorded one? */
static bool
record_dropped(const struct dm_engine *e, const char *peer, uint64_t label)
{
	const struct dm_record *rec = &e->record;
	bool listed = false;

	if (rec->n_names == 0 || label >= rec->label)
		return false;
	for (size_t i = 0; i < rec->n_names && !listed; i++)
		listed = strcmp(rec->names[i], peer) == 0;
	return !listed;
}

bool
dm_record_saw_removed(const struct dm_engine *e, const char *peer, uint64_t incarnation,
    uint64_t label)
{
	const struct dm_record *rec = &e->record;

	if (dm_record_dead(e, peer, incarnation))
		return true;
	for (size_t i = 0; i < rec->n_removals; i++)
		if (strcmp(rec->removals[i].name, peer) == 0 && label < rec->removals[i].ballot)
			return true;
	return record_dropped(e, peer, label);
}

/* Refusing a prober by the membership record can leave a cluster without
 * a way on (every member of the cluster that removed the prober crashed
 * while it was cut off): say so, once a minute at most. */
void
dm_record_warn_refusal(struct dm_engine *e, const char *peer)
{
	struct dm_record *rec = &e->record;
	struct dm_effect fx = { .type = DM_FX_LOG };

	if (rec->refusal_logged && e->now < rec->refusal_logged_at + 60000)
		return;
	rec->refusal_logged = true;
	rec->refusal_logged_at = e->now;
	fx.u.log.level = DM_LOG_WARNING;
	fx.u.log.text = "refusing to help this peer rebuild its roster: an earlier process of this "
	    "node saw it removed (the membership record in the state directory); if the cluster "
	    "that removed it is gone for good, see dmlockd(8), RECOVERY";
	fx.u.log.peer = peer;
	dm_emit(e, &fx);
}

/*
 * A joiner helps no peer that its recorded roster dropped (missing from
 * it, at a lower label than the message carries): it takes no roster from
 * it, acknowledges none of its NODE_ADDs and gives it no permission for
 * the roster lock, as it gives it no removal vote.  Not for a removal this
 * node only agreed to (dm_record_saw_removed()'s other half): the removal
 * may never have happened, and a joiner that refused the last member it
 * had voted to remove would never join again (maekawa 564/5, leaves: every
 * restarted leaver refused the one member left).  A
 * removed node restarted from its stale record counts a joiner's answers
 * as those of the member it lists under that name (it lists its peers
 * with no incarnation), and with them rebuilt its old roster beside the
 * cluster that removed it: dmlock-sim --restarts static --fault-mask 5,
 * seeds 16773/4 (Ricart-Agrawala, two holders: a node whose record showed
 * the sponsor removed joined through it) and 18999/6 (Maekawa, token
 * order: the restarted nodes' new incarnations, joining elsewhere, acked
 * the stale sponsor's NODE_ADDs and granted it the roster lock).
 * Also while a node told to rejoin waits its restart interval (rule 10):
 * its roster is gone and it answers as a joiner does (hierarchical
 * 107933/8, crash and partition, groups of 5: n1, told to rejoin, acked
 * the NODE_ADD of n0, which it had removed at label 22 while n0 was cut
 * off; n0 admitted a node with it, rebuilt its label-10 roster and
 * granted beside the label-22 cluster).
 * Not for a dead incarnation (dm_record_dead()) either: a stale cluster
 * can remove a live member of the real one, and a node of that stale
 * cluster, noting it dead and then told to rejoin, refused for ever the
 * roster of the sponsor that admitted it (hierarchical 513274/11,
 * partitions, groups of 3: n2 noted n0's rejoined incarnation dead when
 * a label-34 minority removed it, and never joined through n0 again).
 */
bool
dm_record_refuses_joiner_help(struct dm_engine *e, const char *peer, const struct dm_msg *m)
{
	bool joiner = e->membership == DM_MEMBER_JOINING || e->membership == DM_MEMBER_RESTARTING;

	if (!joiner || dm_broken(e, DM_BREAK_STALE_ROSTER) || !record_dropped(e, peer, m->roster_epoch))
		return false;
	dm_record_warn_refusal(e, peer);
	return true;
}

/*
 * The self-vote promise.  A restarted process votes that a prober remove
 * its own earlier incarnation; the cluster may go on from that removal,
 * and our next process, remembering nothing of it, would help a prober
 * still at the roster the removal changed -- one the cluster removed
 * meanwhile -- rebuild it with our vote (Naimi-Trehel 4982/5, crash,
 * partition, join and stale-roster storms: n6's and n3's restarted
 * processes voted their old incarnations out of the cluster's label-6
 * and label-7 rosters, then voted for n2, removed while cut off and still
 * at label 6, and n2 granted beside the cluster; hierarchical 19161/6,
 * every kind and storms, groups of 5: the same with n5's and n7's).  So
 * before a self-vote leaves, the prober's roster label and name go on
 * disk; any later process of ours votes on no other node's slot for
 * another prober whose roster label is not above it
 * (dm_record_promise_refuses()); its own old slot it still gives up.
 * The prober itself goes on from the roster it asked from (it removes
 * every restarted member's old entry in turn).  A SUSPECT_ABORT from it
 * lowers the promise below its label, binding every prober
 * (dm_record_promise_void()), and a roster this node applies as a member
 * at a higher label covers it.  Only self-votes: votes about another
 * restarted node as well held lagging members of rosters restarted from
 * the static peers off for good (NOTES.md, "Session 29").
 */
void
dm_record_self_vote(struct dm_engine *e, const char *prober, uint64_t label)
{
	struct dm_record *rec = &e->record;
	bool held = rec->promise_prober[0] != '\0';

	if (held && strcmp(rec->promise_prober, prober) == 0 && label <= rec->promise_label)
		return;
	if (!held || label > rec->promise_label)
		rec->promise_label = label;
	strcpy(rec->promise_prober, prober);
	record_emit(e);
}

/* Does the self-vote promise refuse prober, whose roster label is label? */
bool
dm_record_promise_refuses(const struct dm_engine *e, const char *prober, uint64_t label)
{
	const struct dm_record *rec = &e->record;

	return rec->promise_prober[0] != '\0' && strcmp(rec->promise_prober, prober) != 0 &&
	    label <= rec->promise_label;
}

/*
 * The prober of our promise gave its vote up (SUSPECT_ABORT): it will
 * never commit it, so a rival at its roster label may have our vote.  A
 * prober below that label stays refused, whoever it is: we helped a
 * roster at that label go on, and an earlier promise of ours may have
 * been at any label below it (only the highest is kept).
 */
void
dm_record_promise_void(struct dm_engine *e, const char *prober)
{
	struct dm_record *rec = &e->record;

	if (rec->promise_prober[0] == '\0' || strcmp(rec->promise_prober, prober) != 0)
		return;
	if (rec->promise_label == 0) {
		rec->promise_prober[0] = '\0';	/* (nothing is below label 0) */
	} else {
		/* Our own name: no prober is exempt (none probes us by it). */
		strcpy(rec->promise_prober, e->nodes[e->self].name);
		rec->promise_label--;
	}
	record_emit(e);
}

/*
 * Dead incarnations.  An incarnation removed from the roster (or gone by
 * its leave) never comes back: a node re-admitted after a removal joins
 * under a new one (restart_and_rejoin_why()).  The record's roster label
 * cannot say so: a node removed while cut off goes on with its stale
 * roster, and its labels are its own ballots, which can pass the
 * cluster's; a restarted process whose record had dropped it then took
 * the higher label for a re-admission and helped it (Naimi-Trehel
 * 13365/6, fault mask ff: n2, removed at label 6 while cut off, reached
 * label 13 by the votes of a stale member, then n4's and n7's restarted
 * processes, their records at label 6, voted their old incarnations out
 * of its roster and it granted beside the cluster; Raymond 2469/6, storms
 * alone: the same with n3 at label 18 against records at 12 and 10).  So
 * a member that removes an incarnation stores it before the step's
 * messages leave (dm_record_roster() at the end of the step), and its
 * later processes refuse that incarnation whatever label it shows -- a
 * removal vote only (dm_membership_on_suspect()): the removal may have
 * been a stale cluster's, of a member the real cluster kept, and a
 * joiner must still take that member's roster (hierarchical 513274/11,
 * dm_record_refuses_joiner_help()).
 */
void
dm_record_note_dead(struct dm_engine *e, const char *name, uint64_t incarnation)
{
	struct dm_record *rec = &e->record;
	size_t i;

	if (incarnation == 0)
		return;
	for (i = 0; i < rec->n_dead; i++) {
		size_t k = dead_slot(rec, i);

		if (strcmp(rec->dead[k].name, name) == 0) {
			if (rec->dead[k].incarnation == incarnation)
				return;
			/* (The name's last incarnation replaces it in place:
			 * an earlier one is gone when a later one exists.) */
			rec->dead[k].incarnation = incarnation;
			rec->dead_changed = true;
			return;
		}
	}
	strcpy(rec->dead[rec->dead_next].name, name);
	rec->dead[rec->dead_next].incarnation = incarnation;
	rec->dead_next = (rec->dead_next + 1) % DM_NODES_MAX;
	if (rec->n_dead < DM_NODES_MAX)
		rec->n_dead++;
	rec->dead_changed = true;
}

/* Did this node (or an earlier process of it) see incarnation of name removed? */
bool
dm_record_dead(const struct dm_engine *e, const char *name, uint64_t incarnation)
{
	const struct dm_record *rec = &e->record;

	if (incarnation == 0)
		return false;
	for (size_t i = 0; i < rec->n_dead; i++)
		if (rec->dead[i].incarnation == incarnation && strcmp(rec->dead[i].name, name) == 0)
			return true;
	return false;
}
