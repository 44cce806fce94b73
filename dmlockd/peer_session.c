/*
 * peer_session.c: sequence numbers, the resend queue (a ring of messages
 * not yet acknowledged, bounded by a count) and duplicate/gap detection
 * for one peer.  See peer_session.h.  Pure: no I/O.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/peer_session.h"

void
peer_session_init(struct peer_session *s, size_t limit, uint64_t epoch)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit;
	s->epoch = epoch;
}

static struct peer_msg *
ring_at(const struct peer_session *s, size_t i)
{
	return s->ring[(s->head + i) % s->cap];
}

static void
drop_oldest(struct peer_session *s)
{
	struct peer_msg *m = s->ring[s->head];

	s->bytes -= m->len;
	free(m);
	s->ring[s->head] = NULL;
	s->head = (s->head + 1) % s->cap;
	s->count--;
	if (s->unsent > 0)
		s->unsent--;
}

void
peer_session_reset(struct peer_session *s)
{
	size_t limit = s->limit;
	uint64_t epoch = s->epoch;

	while (s->count > 0)
		drop_oldest(s);
	free(s->ring);
	peer_session_init(s, limit, epoch);
}

static int
grow(struct peer_session *s)
{
	size_t cap = s->cap == 0 ? 64 : s->cap * 2;
	struct peer_msg **ring;

	if (cap > s->limit)
		cap = s->limit;
	ring = calloc(cap, sizeof(*ring));
	if (ring == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->count; i++)
		ring[i] = ring_at(s, i);
	free(s->ring);
	s->ring = ring;
	s->cap = cap;
	s->head = 0;
	return 0;
}

int
peer_session_queue(struct peer_session *s, const uint8_t *payload, size_t len)
{
	struct peer_msg *m;

	if (s->count >= s->limit)
		return -ENOBUFS;
	if (s->count == s->cap && grow(s) < 0)
		return -ENOMEM;
	m = malloc(sizeof(*m) + len);
	if (m == NULL)
		return -ENOMEM;
	m->seq = ++s->last_queued;
	m->len = len;
	memcpy(m->data, payload, len);
	s->ring[(s->head + s->count) % s->cap] = m;
	s->count++;
	s->bytes += len;
	return 0;
}

int
peer_session_ack(struct peer_session *s, uint64_t seq)
{
	if (seq > s->last_queued)
		return -EPROTO;
	while (s->count > 0 && s->ring[s->head]->seq <= seq)
		drop_oldest(s);
	if (seq > s->last_acked)
		s->last_acked = seq;
	return 0;
}

int
peer_session_rewind(struct peer_session *s, uint64_t seq)
{
	int r = peer_session_ack(s, seq);

	if (r < 0)
		return r;
	s->unsent = 0;
	return 0;
}

const struct peer_msg *
peer_session_peek_unsent(const struct peer_session *s)
{
	return s->unsent < s->count ? ring_at(s, s->unsent) : NULL;
}

void
peer_session_mark_sent(struct peer_session *s)
{
	if (s->unsent < s->count)
		s->unsent++;
}

int
peer_session_accept(struct peer_session *s, uint64_t seq)
{
	if (seq <= s->last_received)
		return 0;
	if (seq != s->last_received + 1)
		return -EPROTO;
	s->last_received = seq;
	return 1;
}

void
peer_session_hello_out(const struct peer_session *s, uint64_t self_incarnation,
    struct peer_hello_view *ret)
{
	*ret = (struct peer_hello_view){
		.incarnation = self_incarnation,
		.epoch = s->epoch,
		.your_incarnation = s->peer_incarnation,
		.your_epoch = s->peer_epoch,
		.last_received = s->last_received,
	};
}

enum peer_hello_verdict
peer_session_hello_in(struct peer_session *s, uint64_t self_incarnation,
    const struct peer_hello_view *h, uint64_t *their_last)
{
	enum peer_hello_verdict v = PEER_HELLO_RESUME;
	uint64_t last;

	if (s->peer_incarnation != 0 && s->peer_incarnation != h->incarnation)
		v = PEER_HELLO_RESTARTED;	/* its state for us is new */
	else if (s->peer_incarnation != 0 && h->epoch < s->peer_epoch)
		return PEER_HELLO_STALE;	/* sent before it made the record we know */
	else if (s->peer_incarnation != 0 && h->epoch > s->peer_epoch)
		v = PEER_HELLO_NEW_EPOCH;	/* it removed us and added us again */

	/* What it received counts only if it names our current session; a
	 * HELLO that does not know us (or knows an older record) was sent
	 * before it learned of this one, and it has at least what it says:
	 * nothing, here. */
	last = h->your_incarnation == self_incarnation && h->your_epoch == s->epoch ?
	    h->last_received : 0;
	/* After a reset nothing of the new session was sent yet. */
	if (last > (v == PEER_HELLO_RESUME ? s->last_queued : 0))
		return PEER_HELLO_BAD_RESUME;
	if (v != PEER_HELLO_RESUME)
		peer_session_reset(s);
	s->peer_incarnation = h->incarnation;
	s->peer_epoch = h->epoch;
	*their_last = last;
	return v;
}

void
peer_session_new_epoch(struct peer_session *s, uint64_t epoch)
{
	peer_session_reset(s);
	s->epoch = epoch;
}

const char *
peer_hello_verdict_name(enum peer_hello_verdict v)
{
	switch (v) {
	case PEER_HELLO_RESUME: return "resume";
	case PEER_HELLO_RESTARTED: return "restarted";
	case PEER_HELLO_NEW_EPOCH: return "new-epoch";
	case PEER_HELLO_STALE: return "stale";
	case PEER_HELLO_BAD_RESUME: return "bad-resume";
	}
	return "?";
}
