/*
 * dm_table.c: the engine's two hash tables: locks keyed by name and local
 * clients keyed by handle.  Chained buckets that double when the load
 * passes 1, so memory follows the number of active locks and clients; an
 * idle name has no entry at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm_engine_private.h"

#define TABLE_INITIAL_BUCKETS	64

/* FNV-1a. */
uint32_t
dm_hash_bytes(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t
hash_handle(uint64_t handle)
{
	handle ^= handle >> 33;
	handle *= 0xff51afd7ed558ccdULL;
	handle ^= handle >> 33;
	return (uint32_t)handle;
}

int
dm_table_init(struct dm_engine *e)
{
	e->locks = calloc(TABLE_INITIAL_BUCKETS, sizeof(*e->locks));
	e->clients = calloc(TABLE_INITIAL_BUCKETS, sizeof(*e->clients));
	if (e->locks == NULL || e->clients == NULL) {
		free(e->locks);
		free(e->clients);
		e->locks = NULL;
		e->clients = NULL;
		return -ENOMEM;
	}
	e->locks_buckets = TABLE_INITIAL_BUCKETS;
	e->clients_buckets = TABLE_INITIAL_BUCKETS;
	return 0;
}

void
dm_table_fini(struct dm_engine *e)
{
	for (size_t i = 0; i < e->clients_buckets; i++)
		for (struct dm_client *c = e->clients[i], *n; c != NULL; c = n) {
			n = c->hnext;
			free(c);
		}
	for (size_t i = 0; i < e->locks_buckets; i++)
		for (struct dm_lock *l = e->locks[i], *n; l != NULL; l = n) {
			n = l->hnext;
			free(l);
		}
	free(e->clients);
	free(e->locks);
	e->clients = NULL;
	e->locks = NULL;
}

struct dm_lock *
dm_table_lock_find(struct dm_engine *e, const char *name, size_t len)
{
	uint32_t h = dm_hash_bytes(name, len);

	for (struct dm_lock *l = e->locks[h & (e->locks_buckets - 1)]; l != NULL; l = l->hnext)
		if (l->hash == h && l->name_len == len && memcmp(l->name, name, len) == 0)
			return l;
	return NULL;
}

static void
lock_table_grow(struct dm_engine *e)
{
	size_t nb = e->locks_buckets * 2;
	struct dm_lock **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return;	/* keep the longer chains */
	for (size_t i = 0; i < e->locks_buckets; i++)
		for (struct dm_lock *l = e->locks[i], *n; l != NULL; l = n) {
			n = l->hnext;
			l->hnext = b[l->hash & (nb - 1)];
			b[l->hash & (nb - 1)] = l;
		}
	free(e->locks);
	e->locks = b;
	e->locks_buckets = nb;
}

int
dm_table_lock_insert(struct dm_engine *e, struct dm_lock *l)
{
	if (e->locks_n >= e->locks_buckets)
		lock_table_grow(e);
	l->hash = dm_hash_bytes(l->name, l->name_len);
	l->hnext = e->locks[l->hash & (e->locks_buckets - 1)];
	e->locks[l->hash & (e->locks_buckets - 1)] = l;
	e->locks_n++;
	return 0;
}

void
dm_table_lock_remove(struct dm_engine *e, struct dm_lock *l)
{
	struct dm_lock **pp = &e->locks[l->hash & (e->locks_buckets - 1)];

	for (; *pp != NULL; pp = &(*pp)->hnext)
		if (*pp == l) {
			*pp = l->hnext;
			e->locks_n--;
			return;
		}
}

void
dm_table_lock_foreach(struct dm_engine *e,
    void (*fn)(struct dm_engine *, struct dm_lock *, void *), void *arg)
{
	for (size_t i = 0; i < e->locks_buckets; i++)
		for (struct dm_lock *l = e->locks[i], *n; l != NULL; l = n) {
			n = l->hnext;
			fn(e, l, arg);
		}
}

struct dm_client *
dm_table_client_find(struct dm_engine *e, uint64_t handle)
{
	for (struct dm_client *c = e->clients[hash_handle(handle) & (e->clients_buckets - 1)];
	    c != NULL; c = c->hnext)
		if (c->handle == handle)
			return c;
	return NULL;
}

static void
client_table_grow(struct dm_engine *e)
{
	size_t nb = e->clients_buckets * 2;
	struct dm_client **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return;
	for (size_t i = 0; i < e->clients_buckets; i++)
		for (struct dm_client *c = e->clients[i], *n; c != NULL; c = n) {
			n = c->hnext;
			c->hnext = b[hash_handle(c->handle) & (nb - 1)];
			b[hash_handle(c->handle) & (nb - 1)] = c;
		}
	free(e->clients);
	e->clients = b;
	e->clients_buckets = nb;
}

int
dm_table_client_insert(struct dm_engine *e, struct dm_client *c)
{
	size_t i;

	if (e->clients_n >= e->clients_buckets)
		client_table_grow(e);
	i = hash_handle(c->handle) & (e->clients_buckets - 1);
	c->hnext = e->clients[i];
	e->clients[i] = c;
	e->clients_n++;
	return 0;
}

void
dm_table_client_remove(struct dm_engine *e, struct dm_client *c)
{
	struct dm_client **pp = &e->clients[hash_handle(c->handle) & (e->clients_buckets - 1)];

	for (; *pp != NULL; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			e->clients_n--;
			return;
		}
}
