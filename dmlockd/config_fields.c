/*
 * config_fields.c: the per-setting parsers of dmlockd.conf, one per kind of
 * setting in the table (config_file.c): each fills one field of struct
 * dmd_config from a value, or writes a message; lists are split here and
 * [access] items handed to acl.c.  Never logs.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/config_private.h"
#include "dmlockd/frame.h"
#include "dmlockd/local_server.h"

#define CONFIG_LIST_SEPARATORS ", \t"

static int parse_unsigned(const char *value, uint64_t max, uint64_t *ret);

/* ---- value parsers: fill *field from value, or write a message ---- */

static int
set_string(void *field, const char *value)
{
	char **p = field, *copy = strdup(value);
	if (copy == NULL)
		return -ENOMEM;
	free(*p);
	*p = copy;
	return 0;
}

int
config_field_node_name(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (!dm_node_name_valid(value, strlen(value))) {
		snprintf(msg, n, "'%s' is not a valid node name (1-63 of A-Z a-z 0-9 . _ -, "
		    "starting with a letter or digit)", value);
		return -EINVAL;
	}
	return set_string(field, value);
}

int
config_field_cluster(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (!frame_cluster_name_valid(value, strlen(value))) {
		snprintf(msg, n, "'%s' is not a valid cluster name (1-63 of A-Z a-z 0-9 . _ -)", value);
		return -EINVAL;
	}
	return set_string(field, value);
}

/* Split value on CONFIG_LIST_SEPARATORS and call fn for each item. */
static int
for_each_item(struct config_state *st, const char *value, char *msg, size_t n,
    int (*fn)(struct config_state *, const char *, char *, size_t))
{
	char *copy = strdup(value), *save = NULL;
	int r = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (char *item = strtok_r(copy, CONFIG_LIST_SEPARATORS, &save); item != NULL && r == 0;
	    item = strtok_r(NULL, CONFIG_LIST_SEPARATORS, &save))
		r = fn(st, item, msg, n);
	free(copy);
	return r;
}

static int
add_listen(struct config_state *st, const char *item, char *msg, size_t n)
{
	struct dmd_config *c = st->c;

	if (config_parse_address(item, NULL, 0, NULL) < 0) {
		snprintf(msg, n, "'%s' is not an address (host:port or [v6]:port)", item);
		return -EINVAL;
	}
	if (c->n_listen >= CONFIG_LISTEN_MAX) {
		snprintf(msg, n, "more than %d listen addresses", CONFIG_LISTEN_MAX);
		return -EINVAL;
	}
	c->listen[c->n_listen] = strdup(item);
	if (c->listen[c->n_listen] == NULL)
		return -ENOMEM;
	c->n_listen++;
	return 0;
}

int
config_field_listen(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_listen);
}

static int
add_peer(struct config_state *st, const char *item, char *msg, size_t n)
{
	struct dmd_config *c = st->c;
	struct dm_peer_spec *grown;
	char *name, *address;
	int r;

	r = config_parse_peer(item, &name, &address);
	if (r == -EINVAL)
		snprintf(msg, n, "'%s' is not a peer (name@host:port)", item);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_peers; i++) {
		if (strcmp(c->peers[i].name, name) == 0) {
			snprintf(msg, n, "peer '%s' is listed twice", name);
			r = -EINVAL;
			goto fail;
		}
	}
	if (c->n_peers >= DM_NODES_MAX) {
		snprintf(msg, n, "more than %d peers", DM_NODES_MAX);
		r = -EINVAL;
		goto fail;
	}
	grown = realloc(c->peers, (c->n_peers + 1) * sizeof(*grown));
	if (grown == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	c->peers = grown;
	c->peers[c->n_peers++] = (struct dm_peer_spec){ name, address };
	return 0;
fail:
	free(name);
	free(address);
	return r;
}

int
config_field_peers(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	return for_each_item(st, value, msg, n, add_peer);
}

int
config_field_sponsor(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	struct dm_peer_spec *s = field;
	char *name, *address;
	int r;

	if (*value == '\0')
		return 0;
	r = config_parse_peer(value, &name, &address);
	if (r == -EINVAL)
		snprintf(msg, n, "'%s' is not a peer (name@host:port)", value);
	if (r < 0)
		return r;
	free((char *)s->name);
	free((char *)s->address);
	s->name = name;
	s->address = address;
	return 0;
}

int
config_field_algorithm(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	size_t used = 0;

	for (const char *const *a = st->algorithms; *a != NULL; a++)
		if (strcmp(*a, value) == 0)
			return set_string(field, value);
	used = (size_t)snprintf(msg, n, "unknown algorithm '%s' (known:", value);
	for (const char *const *a = st->algorithms; *a != NULL && used < n; a++)
		used += (size_t)snprintf(msg + used, n - used, " %s", *a);
	if (used < n)
		snprintf(msg + used, n - used, ")");
	return -EINVAL;
}

int
config_field_policy(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	enum dm_failure_policy *p = field;

	if (strcmp(value, "majority") == 0)
		*p = DM_FAILURE_MAJORITY;
	else if (strcmp(value, "paper") == 0)
		*p = DM_FAILURE_PAPER;
	else {
		snprintf(msg, n, "'%s' is not a failure policy (majority or paper)", value);
		return -EINVAL;
	}
	return 0;
}

int
config_field_election(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	char **p = field;

	if (strcmp(value, "bully") != 0 && strcmp(value, "invitation") != 0) {
		snprintf(msg, n, "'%s' is not an election (bully or invitation)", value);
		return -EINVAL;
	}
	char *copy = strdup(value);
	if (copy == NULL)
		return -ENOMEM;
	free(*p);
	*p = copy;
	return 0;
}

int
config_field_group_size(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, 64, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a group size (1 to 64)", value);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

int
config_field_clients_per_user(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, LOCAL_CLIENTS_PER_UID_MAX, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a number of connections (1 to %d: of %d, the last %d "
		    "are kept for root)", value, LOCAL_CLIENTS_PER_UID_MAX, LP_CLIENTS_MAX,
		    LOCAL_CLIENTS_ROOT_RESERVED);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

int
config_field_duration(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	dm_msec_t ms;

	if (config_parse_duration(value, &ms) < 0 || ms == 0) {
		snprintf(msg, n, "'%s' is not a duration (a positive number with ms, s, m or h)", value);
		return -EINVAL;
	}
	*(dm_msec_t *)field = ms;
	return 0;
}

static int
parse_unsigned(const char *value, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (*value == '\0')
		return -EINVAL;
	for (const char *p = value; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

int
config_field_count(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	uint64_t v;

	if (parse_unsigned(value, 1000000000, &v) < 0 || v == 0) {
		snprintf(msg, n, "'%s' is not a count (1 to 1000000000)", value);
		return -EINVAL;
	}
	*(uint32_t *)field = (uint32_t)v;
	return 0;
}

int
config_field_bytes(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	const uint64_t max = UINT64_C(1) << 40;
	char digits[32];
	size_t len = strlen(value);
	uint64_t v, mult = 1;

	if (len > 0 && len < sizeof(digits)) {
		memcpy(digits, value, len + 1);
		switch (digits[len - 1]) {
		case 'k': case 'K': mult = 1024; break;
		case 'M': mult = 1024 * 1024; break;
		case 'G': mult = 1024 * 1024 * 1024; break;
		}
		if (mult != 1)
			digits[len - 1] = '\0';
		if (digits[0] != '\0' && strspn(digits, "0123456789") == strlen(digits)) {
			/* Bounded before multiplying: v * mult cannot wrap. */
			if (parse_unsigned(digits, max / mult, &v) < 0) {
				snprintf(msg, n, "'%s' is too large (at most 2^40 bytes: 1024G)", value);
				return -EINVAL;
			}
			if (v * mult >= FRAME_MAX) {
				*(uint64_t *)field = v * mult;
				return 0;
			}
		}
	}
	snprintf(msg, n, "'%s' is not a size (%d to 2^40 bytes, suffix K, M or G allowed)", value,
	    FRAME_MAX);
	return -EINVAL;
}

int
config_field_path(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (*value == '\0' || strlen(value) >= PATH_MAX) {
		snprintf(msg, n, "a path is required");
		return -EINVAL;
	}
	return set_string(field, value);
}

int
config_field_optional_string(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	char **p = field;

	if (*value == '\0') {
		free(*p);
		*p = NULL;
		return 0;
	}
	if (strlen(value) >= PATH_MAX) {
		snprintf(msg, n, "value too long");
		return -EINVAL;
	}
	return set_string(field, value);
}

int
config_field_mode(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(value, &end, 8);
	if (*value < '0' || *value > '7' || errno != 0 || *end != '\0' || v > 0777) {
		snprintf(msg, n, "'%s' is not an octal mode (0000 to 0777)", value);
		return -EINVAL;
	}
	*(mode_t *)field = (mode_t)v;
	return 0;
}

int
config_field_log_level(struct config_state *st, void *field, const char *value, char *msg, size_t n)
{
	if (log_level_from_string(value, field) < 0) {
		snprintf(msg, n, "'%s' is not a log level (err, warning, notice, info, debug)", value);
		return -EINVAL;
	}
	return 0;
}

static int
acl_item(struct config_state *st, const char *item, char *msg, size_t n, bool lock_rule)
{
	char source[96];
	int r;

	if (st->c->acl == NULL) {
		r = acl_new(&st->c->acl);
		if (r < 0)
			return r;
	}
	const char *base = strrchr(st->path, '/');
	snprintf(source, sizeof(source), "%s line %d", base != NULL ? base + 1 : st->path,
	    st->lineno);
	return lock_rule ? acl_add_lock_rule(st->c->acl, item, source, msg, n)
	    : acl_add_roster_principal(st->c->acl, item, source, msg, n);
}

static int
add_access_lock(struct config_state *st, const char *item, char *msg, size_t n)
{
	return acl_item(st, item, msg, n, true);
}

static int
add_access_roster(struct config_state *st, const char *item, char *msg, size_t n)
{
	return acl_item(st, item, msg, n, false);
}

int
config_field_access_lock(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	return for_each_item(st, value, msg, n, add_access_lock);
}

int
config_field_access_roster(struct config_state *st, void *field, const char *value, char *msg,
    size_t n)
{
	return for_each_item(st, value, msg, n, add_access_roster);
}
