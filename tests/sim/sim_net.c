/*
 * sim_net.c: FIFO message queues of the simulated links, and the spare
 * buffers of delivered messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_net.h"

int
sim_net_init(struct sim_net *net, unsigned n)
{
	net->links = calloc((size_t)n * n, sizeof(*net->links));
	if (!net->links)
		return -ENOMEM;
	net->n = n;
	net->spare = NULL;
	return 0;
}

void
sim_net_fini(struct sim_net *net)
{
	struct sim_msg *m;

	for (size_t i = 0; i < (size_t)net->n * net->n; i++)
		sim_net_flush(net, &net->links[i]);
	while ((m = net->spare) != NULL) {
		net->spare = m->next;
		free(m);
	}
	free(net->links);
	net->links = NULL;
	net->n = 0;
}

struct sim_link *
sim_net_link(struct sim_net *net, unsigned from, unsigned to)
{
	return &net->links[(size_t)from * net->n + to];
}

/* A buffer for len bytes: a spare one if it is short enough. */
static struct sim_msg *
msg_new(struct sim_net *net, size_t len)
{
	size_t cap = len <= SIM_MSG_POOLED ? SIM_MSG_POOLED : len;
	struct sim_msg *m = net->spare;

	if (cap == SIM_MSG_POOLED && m != NULL) {
		net->spare = m->next;
		return m;
	}
	m = malloc(sizeof(*m) + cap);
	if (m)
		m->cap = cap;
	return m;
}

void
sim_net_release(struct sim_net *net, struct sim_msg *m)
{
	if (m->cap == SIM_MSG_POOLED) {
		m->next = net->spare;
		net->spare = m;
	} else {
		free(m);
	}
}

int
sim_net_enqueue(struct sim_net *net, struct sim_link *link, sim_time_t at,
    const uint8_t *bytes, size_t len, sim_time_t *ret_at)
{
	struct sim_msg *m = msg_new(net, len);

	if (!m)
		return -ENOMEM;
	if (at < link->last_at)
		at = link->last_at;
	link->last_at = at;
	m->next = NULL;
	m->at = at;
	m->len = len;
	memcpy(m->bytes, bytes, len);
	if (link->tail)
		link->tail->next = m;
	else
		link->head = m;
	link->tail = m;
	link->n++;
	*ret_at = at;
	return 0;
}

struct sim_msg *
sim_net_pop(struct sim_link *link)
{
	struct sim_msg *m = link->head;

	if (!m)
		return NULL;
	link->head = m->next;
	if (!link->head)
		link->tail = NULL;
	link->n--;
	return m;
}

void
sim_net_flush(struct sim_net *net, struct sim_link *link)
{
	struct sim_msg *m;

	while ((m = sim_net_pop(link)))
		sim_net_release(net, m);
	link->last_at = 0;
	link->epoch++;
}
