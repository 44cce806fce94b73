/*
 * log.c: the daemon's log sink: stderr lines "dmlockd[pid]: <level>: text
 * key=value...", or sd_journal_send() with DMLOCK_LOCK=, DMLOCK_PEER=,
 * DMLOCK_TOKEN= fields when under systemd.  Saves and restores errno.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

#include "log.h"

static enum log_level max_level = LOG_LEVEL_INFO;
static int use_journal;

static const char *const level_names[] = {
	[LOG_LEVEL_ERR] = "err",
	[LOG_LEVEL_WARNING] = "warning",
	[LOG_LEVEL_NOTICE] = "notice",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void
log_set_max_level(enum log_level level)
{
	max_level = level;
}

enum log_level
log_get_max_level(void)
{
	return max_level;
}

int
log_level_from_string(const char *s, enum log_level *ret)
{
	for (int l = LOG_LEVEL_ERR; l <= LOG_LEVEL_DEBUG; l++) {
		char num[2] = { (char)('0' + l), '\0' };
		if (strcasecmp(s, level_names[l]) == 0 || strcmp(s, num) == 0) {
			*ret = (enum log_level)l;
			return 0;
		}
	}
	if (strcasecmp(s, "error") == 0) {
		*ret = LOG_LEVEL_ERR;
		return 0;
	}
	return -EINVAL;
}

void
log_use_journal(int on)
{
	use_journal = on;
}

static void
log_emit(enum log_level level, const struct log_fields *f, const char *text)
{
#ifdef HAVE_SYSTEMD
	if (use_journal) {
		char token[32] = "";
		if (f != NULL && f->token != 0)
			snprintf(token, sizeof(token), "%" PRIu64, f->token);
		sd_journal_send("MESSAGE=%s", text, "PRIORITY=%d", (int)level,
		    "DMLOCK_LOCK=%s", f != NULL && f->lock != NULL ? f->lock : "",
		    "DMLOCK_PEER=%s", f != NULL && f->peer != NULL ? f->peer : "",
		    "DMLOCK_TOKEN=%s", token, NULL);
		return;
	}
#endif
	char extra[512] = "";
	size_t n = 0;
	if (f != NULL && f->lock != NULL)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, " lock=%s", f->lock);
	if (f != NULL && f->peer != NULL && n < sizeof(extra))
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, " peer=%s", f->peer);
	if (f != NULL && f->token != 0 && n < sizeof(extra))
		snprintf(extra + n, sizeof(extra) - n, " token=%" PRIu64, f->token);
	fprintf(stderr, "dmlockd[%ld]: %s: %s%s\n", (long)getpid(), level_names[level], text, extra);
}

static void
log_vfull(enum log_level level, const struct log_fields *fields, int err, const char *fmt, va_list ap)
{
	char text[1024];
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	if (err != 0 && n >= 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, ": %s", strerror(err));
	log_emit(level, fields, text);
}

void
log_full(enum log_level level, const struct log_fields *fields, const char *fmt, ...)
{
	int saved = errno;
	if (level <= max_level) {
		va_list ap;
		va_start(ap, fmt);
		log_vfull(level, fields, 0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

int
log_errno_full(enum log_level level, int err, const char *fmt, ...)
{
	int saved = errno;
	err = abs(err);
	if (level <= max_level) {
		va_list ap;
		va_start(ap, fmt);
		log_vfull(level, NULL, err, fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return -err;
}
