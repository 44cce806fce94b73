/*
 * config_private.h: what the dmlockd.conf loader's files share, and nothing
 * outside them includes: the settings-table row type, the table itself
 * (config_file.c), the parse state handed to the per-setting parsers, and
 * those parsers (config_fields.c), which the loader and the reload
 * comparison (config_reload.c) tell apart by address.
 */
#ifndef DMD_CONFIG_PRIVATE_H
#define DMD_CONFIG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "dmlockd/config_file.h"

/* The rows of config_settings[]; config_file.c asserts it at compile time,
 * so a new setting bumps this count. */
#define CONFIG_N_SETTINGS 34

struct config_state;
typedef int config_parse_fn(struct config_state *st, void *field, const char *value,
    char *msg, size_t msglen);

struct config_setting {
	const char	*section;
	const char	*key;
	const char	*full_name;	/* "section.key" */
	config_parse_fn	*parse;
	size_t		 offset;
	const char	*def;		/* parsed like a value from the file; NULL: computed */
	bool		 list;		/* repeated keys and continuation lines append */
	const char	*doc;
};

extern const struct config_setting config_settings[CONFIG_N_SETTINGS];

struct config_state {
	struct dmd_config	*c;
	const char		*path;
	const char *const	*algorithms;
	FILE			*file;
	int			 lineno;
	bool			 in_defaults;
	int			 err_line;	/* 0: none; -1: error without a line */
	int			 err_code;
	char			 err[512];
	bool			 seen[CONFIG_N_SETTINGS];
	int			 line_of[CONFIG_N_SETTINGS];
};

/* config_fields.c: one parser per kind of setting; each fills *field from
 * value, or writes a message. */
extern config_parse_fn config_field_node_name, config_field_listen, config_field_cluster,
    config_field_peers, config_field_sponsor, config_field_algorithm, config_field_policy,
    config_field_duration, config_field_count, config_field_bytes, config_field_path,
    config_field_optional_string, config_field_mode, config_field_log_level,
    config_field_access_lock, config_field_access_roster, config_field_election,
    config_field_group_size, config_field_clients_per_user;

#endif /* DMD_CONFIG_PRIVATE_H */
