/*
 * dm_types.c: validation of the names that cross trust boundaries
 * (lock names from clients, node names from peers and config).
 */
#include <string.h>

#include "dm_types.h"

bool
dm_lock_name_valid(const char *name, size_t len)
{
	if (name == NULL || len == 0 || len > DM_LOCK_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x21 || c > 0x7e)
			return false;
	}
	return true;
}

static bool
is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool
dm_node_name_valid(const char *name, size_t len)
{
	if (name == NULL || len == 0 || len > DM_NODE_NAME_MAX)
		return false;
	if (!is_alnum((unsigned char)name[0]))
		return false;
	for (size_t i = 1; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!is_alnum(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

bool
dm_node_name_str_valid(const char *name)
{
	return name != NULL && dm_node_name_valid(name, strnlen(name, DM_NODE_NAME_MAX + 1));
}
