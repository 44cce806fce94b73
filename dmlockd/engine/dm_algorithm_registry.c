/*
 * dm_algorithm_registry.c: the table of mutual-exclusion algorithms by
 * config name.  A new algorithm is one algo_*.c file plus one line here.
 * The first entry is the default.
 */
#include <string.h>

#include "dm_algorithm.h"

extern const struct dm_algorithm dm_algo_ricart_agrawala;
extern const struct dm_algorithm dm_algo_suzuki_kasami;
extern const struct dm_algorithm dm_algo_raymond;
extern const struct dm_algorithm dm_algo_naimi_trehel;
extern const struct dm_algorithm dm_algo_lamport;
extern const struct dm_algorithm dm_algo_maekawa;
extern const struct dm_algorithm dm_algo_rcv;
extern const struct dm_algorithm dm_algo_hierarchical;

static const struct dm_algorithm *const registry[] = {
	&dm_algo_ricart_agrawala,
	&dm_algo_suzuki_kasami,
	&dm_algo_raymond,
	&dm_algo_naimi_trehel,
	&dm_algo_lamport,
	&dm_algo_maekawa,
	&dm_algo_rcv,
	&dm_algo_hierarchical,
};

static const char *const registry_names[] = {
	"ricart-agrawala",
	"suzuki-kasami",
	"raymond",
	"naimi-trehel",
	"lamport",
	"maekawa",
	"rcv",
	"hierarchical",
	NULL,
};

const struct dm_algorithm *
dm_algorithm_find(const char *name)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

const char *const *
dm_algorithm_names(void)
{
	return registry_names;
}
