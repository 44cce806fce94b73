/*
 * log.h: the daemon's logging.  Shell code only (the engine speaks through
 * DM_FX_LOG effects).  Lines go to stderr, or to the journal with structured
 * fields when running under systemd.  log_*_errno() return -|err| so a
 * caller can "return log_error_errno(r, ...)".
 */
#ifndef DMD_LOG_H
#define DMD_LOG_H

#include <stdint.h>

enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* Structured fields attached to one line; any may be NULL / 0. */
struct log_fields {
	const char	*lock;
	const char	*peer;
	uint64_t	 token;
};

void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);
/* Parse "err", "warning", "notice", "info", "debug" (or 3..7); -EINVAL. */
int log_level_from_string(const char *s, enum log_level *ret);
/* Route lines to the journal (true) or stderr (false). */
void log_use_journal(int on);

void log_full(enum log_level level, const struct log_fields *fields, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int log_errno_full(enum log_level level, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_error(...)		log_full(LOG_LEVEL_ERR, NULL, __VA_ARGS__)
#define log_warning(...)	log_full(LOG_LEVEL_WARNING, NULL, __VA_ARGS__)
#define log_notice(...)		log_full(LOG_LEVEL_NOTICE, NULL, __VA_ARGS__)
#define log_info(...)		log_full(LOG_LEVEL_INFO, NULL, __VA_ARGS__)
#define log_debug(...)		log_full(LOG_LEVEL_DEBUG, NULL, __VA_ARGS__)
#define log_error_errno(e, ...)	  log_errno_full(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_errno_full(LOG_LEVEL_WARNING, (e), __VA_ARGS__)

#endif /* DMD_LOG_H */
