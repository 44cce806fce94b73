/*
 * config_reload.c: comparing two loaded configs for SIGHUP.  Owns which
 * settings a running daemon applies on reload and the per-type comparison
 * of a setting's value, and lists the settings that differ and need a restart.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "dmlockd/config_private.h"

static bool
str_differs(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") != 0;
}

/* ---- reload: which settings a running daemon cannot apply ---- */

/* Applied on SIGHUP (main.c): the TLS files, the [access] rules, the log
 * level.  Everything else is read once at start. */
static bool
setting_reloadable(const struct config_setting *s)
{
	return strcmp(s->section, "tls") == 0 || strcmp(s->section, "access") == 0 ||
	    strcmp(s->section, "log") == 0;
}

static bool
spec_equal(const struct dm_peer_spec *a, const struct dm_peer_spec *b)
{
	return !str_differs(a->name, b->name) && !str_differs(a->address, b->address);
}

/* The same peers with the same addresses, in any order (names are unique). */
static bool
peers_equal(const struct dmd_config *a, const struct dmd_config *b)
{
	if (a->n_peers != b->n_peers)
		return false;
	for (size_t i = 0; i < a->n_peers; i++) {
		size_t j;
		for (j = 0; j < b->n_peers; j++)
			if (!str_differs(a->peers[i].name, b->peers[j].name))
				break;
		if (j == b->n_peers || !spec_equal(&a->peers[i], &b->peers[j]))
			return false;
	}
	return true;
}

static bool
listen_equal(const struct dmd_config *a, const struct dmd_config *b)
{
	if (a->n_listen != b->n_listen)
		return false;
	for (size_t i = 0; i < a->n_listen; i++)
		if (str_differs(a->listen[i], b->listen[i]))
			return false;
	return true;
}

/* Whether setting s has the same value in a and b, by the type its parser
 * fills.  An unknown parser counts as a change (check_config compares every
 * key of a config with itself, so a new parser without a case here fails). */
static bool
setting_equal(const struct config_setting *s, const struct dmd_config *a, const struct dmd_config *b)
{
	const void *fa = (const char *)a + s->offset, *fb = (const char *)b + s->offset;

	if (s->parse == config_field_node_name || s->parse == config_field_cluster ||
	    s->parse == config_field_path || s->parse == config_field_optional_string ||
	    s->parse == config_field_algorithm || s->parse == config_field_election)
		return !str_differs(*(char *const *)fa, *(char *const *)fb);
	if (s->parse == config_field_listen)
		return listen_equal(a, b);
	if (s->parse == config_field_peers)
		return peers_equal(a, b);
	if (s->parse == config_field_sponsor)
		return spec_equal(fa, fb);
	if (s->parse == config_field_policy)
		return *(const enum dm_failure_policy *)fa == *(const enum dm_failure_policy *)fb;
	if (s->parse == config_field_duration)
		return *(const dm_msec_t *)fa == *(const dm_msec_t *)fb;
	if (s->parse == config_field_count || s->parse == config_field_group_size ||
	    s->parse == config_field_clients_per_user)
		return *(const uint32_t *)fa == *(const uint32_t *)fb;
	if (s->parse == config_field_bytes)
		return *(const uint64_t *)fa == *(const uint64_t *)fb;
	if (s->parse == config_field_mode)
		return *(const mode_t *)fa == *(const mode_t *)fb;
	if (s->parse == config_field_log_level)
		return *(const enum log_level *)fa == *(const enum log_level *)fb;
	return false;
}

size_t
config_restart_changes(const struct dmd_config *running, const struct dmd_config *fresh,
    const char **keys, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < CONFIG_N_SETTINGS; i++) {
		const struct config_setting *s = &config_settings[i];
		if (setting_reloadable(s) || setting_equal(s, running, fresh))
			continue;
		if (n < max)
			keys[n] = s->full_name;
		n++;
	}
	return n;
}
