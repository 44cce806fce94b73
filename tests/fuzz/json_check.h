/*
 * json_check.h: a strict JSON checker for tests (json_check.c).
 */
#ifndef DMLOCK_TESTS_JSON_CHECK_H
#define DMLOCK_TESTS_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* True when text (len bytes, no NUL inside) is exactly one JSON value,
 * ASCII only, followed by one newline. */
bool json_check_line(const char *text, size_t len);

#endif
