/*
 * errors.c: dmlock_strerror(), text for the codes libdmlock returns.  The
 * codes the library gives a specific meaning get dmlock wording; the rest
 * fall back to the C library's description.  Thread-safe (static strings).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dmlock.h"
#include "internal.h"

static const struct {
	int		 err;
	const char	*text;
} dmlock_errors[] = {
	{ EBUSY, "lock is held by someone else" },
	{ ETIMEDOUT, "timed out" },
	{ ETIME, "dmlockd did not answer in time" },
	{ ENOLCK, "lock is not held (it was lost, released or never granted)" },
	{ ECONNRESET, "connection to dmlockd lost" },
	{ EPIPE, "connection to dmlockd lost" },
	{ EPROTO, "protocol error talking to dmlockd" },
	{ ENOENT, "no dmlockd socket there (is dmlockd running?)" },
	{ ECONNREFUSED, "dmlockd is not accepting connections (is dmlockd running?)" },
	{ EACCES, "permission denied" },
	{ ENOBUFS, "too many requests outstanding on this connection" },
	{ ESHUTDOWN, "dmlockd is shutting down" },
	{ EUSERS, "dmlockd has too many clients (try again later)" },
	{ EIDRM, "this node is no longer a member of the cluster" },
	{ EOPNOTSUPP, "not supported by the cluster's algorithm" },
	{ EINVAL, "invalid argument (lock name, mode or timeout)" },
	{ ENAMETOOLONG, "socket path too long" },
	{ ENOMEM, "out of memory" },
	{ EIO, "dmlockd reported an error" },
};

DMLOCK_EXPORT const char *
dmlock_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	for (size_t i = 0; i < sizeof(dmlock_errors) / sizeof(dmlock_errors[0]); i++)
		if (dmlock_errors[i].err == err)
			return dmlock_errors[i].text;
	const char *s = strerrordesc_np(err);
	return s != NULL ? s : "unknown error";
}
