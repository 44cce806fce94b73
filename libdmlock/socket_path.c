/*
 * socket_path.c: default socket path resolution shared by dmlockd,
 * libdmlock and the dmlock CLI (rules in socket_path.h).  Reads only the
 * environment and stat(2); never logs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "socket_path.h"

static int
copy_path(char *buf, size_t size, const char *a, const char *b)
{
	size_t limit = sizeof(((struct sockaddr_un *)0)->sun_path);
	int n = snprintf(buf, size, "%s%s", a, b);
	if (n < 0 || (size_t)n >= size || (size_t)n >= limit)
		return -ENAMETOOLONG;
	return 0;
}

static const char *
user_runtime_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg == NULL || xdg[0] != '/')
		return NULL;
	return xdg;
}

int
lp_socket_path_client(char *buf, size_t size)
{
	const char *env = getenv(DMLOCK_SOCKET_ENV);
	if (env != NULL && env[0] != '\0')
		return copy_path(buf, size, env, "");

	const char *xdg = user_runtime_dir();
	if (geteuid() != 0 && xdg != NULL) {
		struct stat st;
		int r = copy_path(buf, size, xdg, "/dmlock/" DMLOCK_SOCKET_NAME);
		if (r == 0 && stat(buf, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
	}
	return copy_path(buf, size, DMLOCK_SYSTEM_SOCKET, "");
}

int
lp_socket_path_daemon(char *buf, size_t size)
{
	if (geteuid() == 0)
		return copy_path(buf, size, DMLOCK_SYSTEM_SOCKET, "");
	const char *xdg = user_runtime_dir();
	if (xdg == NULL)
		return -ENOENT;
	return copy_path(buf, size, xdg, "/dmlock/" DMLOCK_SOCKET_NAME);
}
