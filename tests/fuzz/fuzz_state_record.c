/*
 * fuzz_state_record.c: libFuzzer target for the membership file's parser
 * (dmlockd/state_file.c, state_record_parse).  Whatever it refuses must be
 * refused with -EBADMSG.  Whatever it accepts must be a record the file
 * can hold (counts within DM_NODES_MAX, valid names, none twice, no dead
 * incarnation 0), its view
 * must show exactly what was parsed, and the round trip must hold: the
 * format being strict, state_record_format() of the view gives back the
 * very input, which parses to the same record again.
 *
 * Run: ./tests/fuzz/fuzz_state_record -max_total_time=60 tests/fuzz/corpus/state_record
 * (configure --enable-fuzzing CC=clang); tests/fuzz/replay_state_record
 * replays the corpus in make check.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dm_types.h"
#include "dmlockd/state_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct state_record first, again;
static char text[STATE_RECORD_TEXT_MAX + 1];

static void
check_view(struct state_record *sr)
{
	struct dm_member_record v;

	if (sr->n_names > DM_NODES_MAX || sr->n_removals > DM_NODES_MAX || sr->n_dead > DM_NODES_MAX)
		abort();
	state_record_view(sr, &v);
	if (v.label != sr->label || v.n_names != sr->n_names || v.n_removals != sr->n_removals)
		abort();
	for (size_t i = 0; i < v.n_names; i++) {
		if (v.names[i] != sr->names[i] ||
		    !dm_node_name_valid(v.names[i], strlen(v.names[i])))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(v.names[i], v.names[j]) == 0)
				abort();
	}
	if ((v.promise_prober != NULL) != sr->promised ||
	    (sr->promised && (v.promise_prober != sr->promise_prober ||
	    v.promise_label != sr->promise_label ||
	    !dm_node_name_valid(v.promise_prober, strlen(v.promise_prober)))))
		abort();
	if (v.n_dead != sr->n_dead || (v.n_dead > 0) != (v.dead != NULL))
		abort();
	for (size_t i = 0; i < v.n_dead; i++) {
		if (v.dead[i].name != sr->dead_names[i] ||
		    v.dead[i].incarnation != sr->dead_incarnations[i] || v.dead[i].incarnation == 0 ||
		    !dm_node_name_valid(v.dead[i].name, strlen(v.dead[i].name)))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(v.dead[i].name, v.dead[j].name) == 0)
				abort();
	}
	for (size_t i = 0; i < v.n_removals; i++) {
		if (v.removals[i].name != sr->removed[i] || v.removals[i].ballot != sr->ballots[i] ||
		    !dm_node_name_valid(v.removals[i].name, strlen(v.removals[i].name)))
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(v.removals[i].name, v.removals[j].name) == 0)
				abort();
	}
}

static bool
same_record(const struct state_record *a, const struct state_record *b)
{
	if (a->label != b->label || a->n_names != b->n_names || a->n_removals != b->n_removals ||
	    a->promised != b->promised || a->n_dead != b->n_dead)
		return false;
	for (size_t i = 0; i < a->n_dead; i++)
		if (strcmp(a->dead_names[i], b->dead_names[i]) != 0 ||
		    a->dead_incarnations[i] != b->dead_incarnations[i])
			return false;
	if (a->promised && (a->promise_label != b->promise_label ||
	    strcmp(a->promise_prober, b->promise_prober) != 0))
		return false;
	for (size_t i = 0; i < a->n_names; i++)
		if (strcmp(a->names[i], b->names[i]) != 0)
			return false;
	for (size_t i = 0; i < a->n_removals; i++)
		if (strcmp(a->removed[i], b->removed[i]) != 0 || a->ballots[i] != b->ballots[i])
			return false;
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dm_member_record view;
	int r = state_record_parse((const char *)data, size, &first);
	int len;

	if (r != 0) {
		if (r != -EBADMSG)
			abort();
		return 0;
	}
	if (size == 0 || data[size - 1] != '\n' || size > STATE_RECORD_TEXT_MAX)
		abort();
	check_view(&first);
	state_record_view(&first, &view);
	len = state_record_format(&view, text, sizeof(text));
	if (len < 0 || (size_t)len != size || memcmp(text, data, size) != 0)
		abort();
	if (state_record_parse(text, (size_t)len, &again) != 0 || !same_record(&first, &again))
		abort();
	check_view(&again);
	return 0;
}
