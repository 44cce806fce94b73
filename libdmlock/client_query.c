/*
 * client_query.c: libdmlock's queries of the daemon: dmlock_ping(),
 * dmlock_status() and dmlock_query() (admin requests), each one request
 * whose PONG or answer block it waits for on the connection (client.c's
 * dispatch collects the block).  Never logs, never touches signals.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dmlock.h"
#include "internal.h"
#include "local_proto.h"

/* ---- daemon queries ------------------------------------------------------ */

DMLOCK_EXPORT int
dmlock_ping(struct dmlock_conn *conn, int64_t *ret_rtt_us)
{
	struct timespec t0, t1;
	int r;

	if (conn == NULL)
		return -EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned want = conn->pongs + 1;
	r = conn_send_request(conn, &(struct lp_request){ .verb = LP_PING });
	if (r < 0)
		return r;
	uint64_t until = dmlock_now_ms() + DAEMON_GRACE_MS;
	/* <, not !=: a late PONG of an earlier ping that timed out may come
	 * in with ours and carry the count past want. */
	while (conn->pongs < want) {
		r = conn_wait(conn, until);
		if (r < 0)
			return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret_rtt_us != NULL)
		*ret_rtt_us = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000;
	return 0;
}

/* Send req and collect its answer block (or its ERROR - text). */
static int
conn_query(struct dmlock_conn *conn, const struct lp_request *req, char **ret)
{
	int r;

	if (conn == NULL || ret == NULL || conn->status_active)
		return -EINVAL;
	free(conn->status);
	conn->status = NULL;
	conn->status_len = 0;
	conn->status_done = false;
	conn->status_error = 0;
	r = conn_status_append(conn, "", 0);	/* an empty string to start from */
	if (r < 0)
		return r;
	conn->status_len = 0;
	conn->status[0] = '\0';
	r = conn_send_request(conn, req);
	if (r < 0)
		return r;
	conn->status_active = true;
	uint64_t until = dmlock_now_ms() + DAEMON_GRACE_MS;
	while (!conn->status_done) {
		r = conn_wait(conn, until);
		/* The answer may have come in with the end of the connection
		 * (LEAVE: the daemon exits right after answering). */
		if (r < 0 && !conn->status_done) {
			conn->status_active = false;
			return r;
		}
	}
	*ret = conn->status;
	conn->status = NULL;
	conn->status_len = 0;
	conn->status_done = false;
	return conn->status_error;
}

DMLOCK_EXPORT int
dmlock_status(struct dmlock_conn *conn, char **ret)
{
	char *text = NULL;
	int r = conn_query(conn, &(struct lp_request){ .verb = LP_STATUS }, &text);
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}

DMLOCK_EXPORT int
dmlock_query(struct dmlock_conn *conn, const char *request, char **ret)
{
	struct lp_request req;
	enum lp_error code;

	if (conn == NULL || request == NULL || ret == NULL)
		return -EINVAL;
	size_t len = strlen(request);
	if (len > 0 && request[len - 1] == '\n')
		len--;
	if (lp_request_parse(request, len, &req, &code) < 0 || !LP_VERB_IS_ADMIN(req.verb))
		return -EINVAL;
	*ret = NULL;
	return conn_query(conn, &req, ret);
}
