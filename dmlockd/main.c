/*
 * main.c: dmlockd's entry point: command line, configuration (a file, or
 * a one-node cluster when there is none), and the wiring of the pieces —
 * event loop, engine host (daemon.c), local socket server, peer transport
 * (cluster_glue.c), systemd glue — plus the signals: SIGTERM/SIGINT leave
 * the cluster gracefully and exit, SIGHUP reloads, SIGUSR1 dumps state.
 * A daemon halted by cluster_glue.c (a peer session lost messages) exits
 * with DMD_EXIT_RESTART (75) without leaving, to come back as a new
 * incarnation.  Wiring only; the engine decides, daemon.c routes,
 * local_*.c translate.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "dm_engine.h"
#include "dmlockd/cluster_glue.h"
#include "dmlockd/config_file.h"
#include "dmlockd/daemon.h"
#include "dmlockd/frame.h"
#include "dmlockd/local_server.h"
#include "dmlockd/log.h"
#include "dmlockd/sd_glue.h"
#include "dmlockd/state_file.h"
#include "local_proto.h"
#include "socket_path.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONFIG		SYSCONFDIR "/dmlock/dmlockd.conf"
#define DEFAULT_ALGORITHM	"ricart-agrawala"
#define LEAVE_TIMEOUT_SEC	10	/* exit anyway if the graceful leave stalls */

struct options {
	const char	*socket_path;
	const char	*state_dir;
	const char	*config_path;
	bool		 config_explicit;
	bool		 check_config;
	bool		 log_level_set;
};

struct dmd_main {
	const struct options	*options;
	struct event_base	*base;
	struct dmd_daemon	*daemon;
	struct dmd_cluster	*cluster;
	struct local_server	*server;
	struct dmd_config	*config;	/* NULL: standalone */
	struct event		*status_timer;
	struct event		*leave_timer;
	char			 status[256];
	bool			 ready;
	bool			 leaving;
	unsigned		 unready_seconds;	/* status ticks while joining */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: dmlockd [-c CONFIG] [-S PATH] [-f] [--log-level LEVEL]\n"
	    "       dmlockd --check-config [-c CONFIG]\n"
	    "       dmlockd --list-config-keys | --list-algorithms | --version | --help\n"
	    "\n"
	    "  -c, --config CONFIG    configuration file (default " DEFAULT_CONFIG " if it\n"
	    "                         exists; without one dmlockd is a one-node cluster)\n"
	    "  -S, --socket PATH      local socket (default: the config's [local] socket, else\n"
	    "                         /run/dmlock/dmlockd.sock as root,\n"
	    "                         $XDG_RUNTIME_DIR/dmlock/dmlockd.sock otherwise)\n"
	    "      --state-dir DIR    durable state, one per daemon (default: the config's\n"
	    "                         [node] state_directory, else $STATE_DIRECTORY, else\n"
	    "                         /var/lib/dmlock as root, $XDG_STATE_HOME/dmlock otherwise)\n"
	    "  -f, --foreground       accepted for compatibility (dmlockd never daemonizes)\n"
	    "      --log-level LEVEL  err, warning, notice, info (default) or debug\n"
	    "      --check-config     validate the configuration file and exit\n"
	    "      --list-config-keys print every configuration key with its default and exit\n"
	    "      --list-algorithms  print the names of the mutual-exclusion algorithms and exit\n"
	    "      --version          print the version and exit\n"
	    "  -h, --help             print this help and exit\n");
}

/* Returns 0 to run, 1 to exit successfully, -EINVAL on a usage error. */
static int
parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_LOG_LEVEL = 256, OPT_VERSION, OPT_CHECK_CONFIG, OPT_LIST_KEYS, OPT_LIST_ALGORITHMS,
	    OPT_STATE_DIR };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "list-config-keys", no_argument, NULL, OPT_LIST_KEYS },
		{ "list-algorithms", no_argument, NULL, OPT_LIST_ALGORITHMS },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum log_level level;
	int c;

	while ((c = getopt_long(argc, argv, "S:c:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->socket_path = optarg;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case 'c':
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case 'f':
			break;
		case OPT_LOG_LEVEL:
			if (log_level_from_string(optarg, &level) < 0) {
				fprintf(stderr, "dmlockd: unknown log level '%s' "
				    "(err, warning, notice, info, debug)\n", optarg);
				return -EINVAL;
			}
			log_set_max_level(level);
			o->log_level_set = true;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			break;
		case OPT_LIST_KEYS:
			config_print_keys(stdout);
			return 1;
		case OPT_LIST_ALGORITHMS:
			for (const char *const *a = dm_algorithm_names(); *a != NULL; a++)
				printf("%s\n", *a);
			return 1;
		case OPT_VERSION:
			printf("dmlockd %s (local protocol %d, peer protocol %d)\n", PACKAGE_VERSION,
			    LP_VERSION, FRAME_PROTOCOL_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "dmlockd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	if (o->config_path == NULL && access(DEFAULT_CONFIG, F_OK) == 0)
		o->config_path = DEFAULT_CONFIG;
	return 0;
}

/* This host's name as a valid node name: the first label of the hostname,
 * with characters a node name cannot hold replaced by '-'. */
static void
default_node_name(char *buf, size_t size)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "localhost");
	host[strcspn(host, ".")] = '\0';
	size_t n = 0;
	for (size_t i = 0; host[i] != '\0' && n + 1 < size && n < DM_NODE_NAME_MAX; i++) {
		char ch = host[i];
		bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '-';
		buf[n++] = ok ? ch : '-';
	}
	buf[n] = '\0';
	if (!dm_node_name_valid(buf, n))
		snprintf(buf, size, "localhost");
}

/* 64 random bits for the incarnation number and the engine's seed. */
static uint64_t
startup_entropy(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v) && v != 0)
		return v;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ 1;
}

static int
load_config(const char *path, struct dmd_config **ret)
{
	char err[512] = "";
	int r = config_load(path, dm_algorithm_names(), ret, err, sizeof(err));
	if (r < 0)
		log_error("%s", err[0] != '\0' ? err : strerror(-r));
	return r;
}

static void
status_line(struct dmd_main *m, char *buf, size_t size)
{
	struct dm_engine_stats st;
	dm_engine_get_stats(dmd_daemon_engine(m->daemon), &st);
	snprintf(buf, size, "node %s, %s, roster %zu node(s), epoch %llu, %zu lock(s) held, "
	    "%zu waiting%s", dmd_daemon_node(m->daemon), st.algorithm, st.roster_size,
	    (unsigned long long)st.epoch, st.locks_held_local, st.waiters_local,
	    m->leaving ? ", leaving" : "");
}

/* Called once a second while the node has not joined: after 3 T_fail
 * (and every 10 minutes after that) say so, and what to look at.  A node
 * whose sponsors are all gone waits for ever (nobody can admit it), and
 * without this line its log would say nothing at all. */
static void
joining_hint(struct dmd_main *m)
{
	unsigned first;

	if (m->config == NULL || m->leaving)
		return;
	first = (unsigned)(3 * (m->config->request_timeout_ms + m->config->probe_timeout_ms) / 1000);
	if (first < 1)
		first = 1;
	m->unready_seconds++;
	if (m->unready_seconds < first || (m->unready_seconds - first) % 600 != 0)
		return;
	log_warning("not a member of the cluster after %u s: no sponsor has admitted this node yet"
	    " (`dmlock status` shows the peers and links; if every member has stopped, start the"
	    " nodes again from their peers)", m->unready_seconds);
	dmd_sd_notify_status("joining: not admitted after %u s", m->unready_seconds);
}

static void
on_status_timer(evutil_socket_t fd, short what, void *arg)
{
	struct dmd_main *m = arg;
	char now[sizeof(m->status)];
	if (!m->ready) {
		joining_hint(m);
		return;
	}
	status_line(m, now, sizeof(now));
	if (strcmp(now, m->status) != 0) {
		memcpy(m->status, now, sizeof(now));
		dmd_sd_notify_status("%s", m->status);
	}
}

static void
on_engine_state(void *ctx, enum dm_effect_type type)
{
	struct dmd_main *m = ctx;
	if (type == DM_FX_READY && !m->ready) {
		m->ready = true;
		status_line(m, m->status, sizeof(m->status));
		log_notice("ready: %s", m->status);
		if (!m->leaving)	/* not after STOPPING=1 */
			dmd_sd_notify_ready(m->status);
	} else if (type == DM_FX_LEFT) {
		log_notice("left the cluster");
		event_base_loopbreak(m->base);
	}
}

static void
on_leave_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct dmd_main *m = arg;
	log_warning("graceful leave did not finish within %d s; exiting anyway", LEAVE_TIMEOUT_SEC);
	event_base_loopbreak(m->base);
}

static void
on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	struct dmd_main *m = arg;
	if (m->leaving) {
		log_notice("second %s: exiting now", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		event_base_loopbreak(m->base);
		return;
	}
	dmd_sd_notify_stopping();
	m->leaving = true;
	const char *signame = sig == SIGTERM ? "SIGTERM" : "SIGINT";
	struct dm_engine_stats st;
	dm_engine_get_stats(dmd_daemon_engine(m->daemon), &st);
	if (m->cluster == NULL || st.roster_size <= 1) {
		/* Nobody to tell.  The last member says what that means: the
		 * cluster has no member now, and forms again when its nodes
		 * start from their peers (a joining node would wait for ever). */
		if (m->cluster == NULL)
			log_notice("received %s: stopping", signame);
		else if (st.ready)
			log_notice("received %s: stopping; this node was the cluster's last member"
			    " (the cluster forms again when its nodes start from their peers)", signame);
		else
			log_notice("received %s: stopping (not a member of the cluster yet)", signame);
		event_base_loopbreak(m->base);
		return;
	}
	log_notice("received %s: leaving the cluster", signame);
	struct timeval tv = { .tv_sec = LEAVE_TIMEOUT_SEC };
	evtimer_add(m->leave_timer, &tv);
	struct dm_event ev = { .type = DM_EV_LEAVE };
	int r = dmd_daemon_step(m->daemon, &ev);
	if (r < 0) {
		log_warning_errno(r, "cannot leave the cluster gracefully");
		event_base_loopbreak(m->base);
	}
}

/* SIGHUP: reread the file; apply TLS files, [access] and the log level;
 * log every other setting that changed as needing a restart.  On any error
 * the running configuration stays.  systemd hears RELOADING=1 and READY=1
 * only when the node is ready and not leaving: a joining node sends its
 * first READY=1 when the engine says so, a leaving one never again. */
static void
on_reload_signal(evutil_socket_t sig, short what, void *arg)
{
	struct dmd_main *m = arg;
	struct dmd_config *fresh = NULL;
	bool notify = m->ready && !m->leaving;
	const char *changed[64];

	if (notify)
		dmd_sd_notify_reloading();
	if (m->config == NULL) {
		log_notice("SIGHUP: no configuration file in use; nothing to reload");
		goto out;
	}
	log_notice("SIGHUP: reloading %s", m->config->path);
	if (load_config(m->config->path, &fresh) < 0) {
		log_error("reload failed; keeping the running configuration");
		goto out;
	}
	if (!m->options->log_level_set && fresh->log_level != m->config->log_level) {
		log_set_max_level(fresh->log_level);
		log_notice("log level reloaded");
	}
	if (m->cluster != NULL && dmd_cluster_reload_tls(m->cluster, fresh) < 0)
		log_error("TLS files not reloaded; keeping the old ones");
	if (m->server != NULL)
		local_server_set_acl(m->server, config_take_acl(fresh));	/* [access] */
	size_t n = config_restart_changes(m->config, fresh, changed,
	    sizeof(changed) / sizeof(changed[0]));
	for (size_t i = 0; i < n && i < sizeof(changed) / sizeof(changed[0]); i++)
		log_warning("%s changed: not reloaded: needs a restart", changed[i]);
	if (n > 0)
		log_warning("%zu setting(s) not reloaded: restart dmlockd to apply them "
		    "(use dmlock join/leave/remove for the roster)", n);
	/* Keep the old config: the engine and transport borrow its strings. */
	config_free(fresh);
out:
	if (notify)
		dmd_sd_notify_ready(m->status);
}

static void
dump_roster_member(void *ctx, const char *name, const char *address, bool is_self, bool link_up)
{
	log_notice("state: peer %s %s %s", name, address != NULL && *address ? address : "-",
	    is_self ? "self" : link_up ? "up" : "down");
}

static void
dump_lock(void *ctx, const char *lock, uint64_t handle, enum dm_mode mode, bool granted,
    uint64_t token, dm_msec_t since)
{
	struct log_fields f = { .lock = lock, .token = token };
	log_full(LOG_LEVEL_NOTICE, &f, "state: lock %s handle %llu %s since %llu ms",
	    mode == DM_MODE_SHARED ? "sh" : "ex", (unsigned long long)handle,
	    granted ? "held" : "waiting", (unsigned long long)since);
}

static void
on_dump_signal(evutil_socket_t sig, short what, void *arg)
{
	struct dmd_main *m = arg;
	char line[sizeof(m->status)];
	status_line(m, line, sizeof(line));
	log_notice("state: %s", line);
	dm_engine_visit_roster(dmd_daemon_engine(m->daemon), dump_roster_member, m);
	dm_engine_visit_local_locks(dmd_daemon_engine(m->daemon), dump_lock, m);
}

static int
socket_path_for(const struct dmd_main *m, int listen_fd, char *path, size_t size)
{
	int r;
	if (m->options->socket_path != NULL)
		r = snprintf(path, size, "%s", m->options->socket_path) >= (int)size
		    ? -ENAMETOOLONG : 0;
	else if (m->config != NULL && m->config->local_socket != NULL)
		r = snprintf(path, size, "%s", m->config->local_socket) >= (int)size
		    ? -ENAMETOOLONG : 0;
	else
		r = lp_socket_path_daemon(path, size);
	if (r == -ENOENT && listen_fd >= 0) {
		/* Socket activation as a user without XDG_RUNTIME_DIR: the
		 * path only names the socket in logs. */
		snprintf(path, size, "(socket activation)");
		r = 0;
	}
	if (r == -ENOENT)
		return log_error_errno(r, "no socket path: XDG_RUNTIME_DIR is unset (use -S PATH)");
	if (r < 0)
		return log_error_errno(r, "bad socket path");
	return 0;
}

/* The state directory (state_file.h): --state-dir, the config's [node]
 * state_directory, systemd's $STATE_DIRECTORY (its first entry), then
 * /var/lib/dmlock as root (StateDirectory=dmlock's path) or the user's
 * $XDG_STATE_HOME/dmlock (~/.local/state/dmlock).  Missing parents are made
 * 0700 under $XDG_STATE_HOME or ~ (the XDG spec's mode), else 0755. */
static int
state_dir_path_for(const struct dmd_main *m, char *path, size_t size, mode_t *parent_mode)
{
	const char *env = getenv("STATE_DIRECTORY");
	const char *home = getenv("HOME");
	int n;

	*parent_mode = 0755;
	if (m->options->state_dir != NULL)
		n = snprintf(path, size, "%s", m->options->state_dir);
	else if (m->config != NULL && m->config->state_dir != NULL)
		n = snprintf(path, size, "%s", m->config->state_dir);
	else if (env != NULL && env[0] != '\0')
		n = snprintf(path, size, "%.*s", (int)strcspn(env, ":"), env);
	else if (geteuid() == 0)
		n = snprintf(path, size, "/var/lib/dmlock");
	else if ((env = getenv("XDG_STATE_HOME")) != NULL && env[0] == '/') {
		n = snprintf(path, size, "%s/dmlock", env);
		*parent_mode = 0700;
	} else if (home != NULL && home[0] == '/') {
		n = snprintf(path, size, "%s/.local/state/dmlock", home);
		*parent_mode = 0700;
	} else
		return log_error_errno(ENOENT, "no state directory: HOME is unset (use --state-dir DIR)");
	if (n < 0 || (size_t)n >= size)
		return log_error_errno(ENAMETOOLONG, "state directory path too long");
	return 0;
}

/* Give the socket the configured group (default: "dmlock" when that group
 * exists and we run as root), unless it already has it. */
static int
apply_socket_group(const struct dmd_config *c, const char *path, int listen_fd)
{
	const char *name = c != NULL ? c->socket_group : NULL;
	if (listen_fd >= 0)
		return 0;
	if (name == NULL || name[0] == '\0') {
		if (geteuid() != 0 || getgrnam("dmlock") == NULL)
			return 0;
		name = "dmlock";
	}
	struct group *g = getgrnam(name);
	if (g == NULL)
		return log_error_errno(ENOENT, "[local] socket_group: no group '%s'", name);
	struct stat st;
	if (stat(path, &st) == 0 && st.st_gid == g->gr_gid)
		return 0;
	if (chown(path, (uid_t)-1, g->gr_gid) < 0)
		return log_error_errno(errno, "cannot give %s to group %s", path, name);
	return 0;
}

static int
build_engine_config(struct dmd_main *m, uint64_t incarnation, uint64_t seed, char *node,
    size_t node_size, struct dm_engine_config *ret)
{
	if (m->config != NULL) {
		config_to_engine(m->config, incarnation, seed, ret);
		return 0;
	}
	default_node_name(node, node_size);
	*ret = (struct dm_engine_config){
		.self = node,
		.self_address = "",
		.cluster = "standalone",
		.algorithm = DEFAULT_ALGORITHM,
		.failure_policy = DM_FAILURE_MAJORITY,
		.incarnation = incarnation,
		.seed = seed,
	};
	return 0;
}

/*
 * A configuration that names neither peers (other than this node) nor a
 * sponsor starts this node alone.  If the membership record shows it a
 * member of a larger roster when it stopped -- a node that joined with
 * `dmlock join` and then crashed, or was killed, without leaving -- that
 * cluster still counts it, and alone it would grant locks beside it.
 * Refuse, naming the way on.  (A node that left, or was told to rejoin,
 * recorded the roster without itself: alone it is a cluster of its own.)
 */
static int
refuse_alone_after_cluster(const struct dm_engine_config *ec, const struct state_record *rec,
    const char *state_path)
{
	size_t others = 0;
	bool listed = false;
	const char *other = NULL;

	if (ec->sponsor != NULL)
		return 0;
	for (size_t i = 0; i < ec->n_peers; i++)
		if (strcmp(ec->peers[i].name, ec->self) != 0)
			return 0;
	for (size_t i = 0; i < rec->n_names; i++) {
		if (strcmp(rec->names[i], ec->self) == 0) {
			listed = true;
		} else {
			others++;
			other = rec->names[i];
		}
	}
	if (!listed || others == 0)
		return 0;
	log_error("this node (%s) was a member of a cluster of %zu nodes when it stopped (its"
	    " membership record %s/%s lists %s among them), but its configuration names neither"
	    " peers nor a sponsor: alone, it would grant locks beside that cluster.  Set sponsor ="
	    " NAME@HOST:PORT of a member in [cluster] to come back into it, or remove %s/%s to start"
	    " a new cluster of this node alone", ec->self, others + 1, state_path, STATE_RECORD_FILE,
	    other, state_path, STATE_RECORD_FILE);
	return -EINVAL;
}

static bool
config_is_clustered(const struct dmd_config *c)
{
	return c != NULL && (c->n_listen > 0 || c->n_peers > 1 || c->sponsor.name != NULL);
}

/* Descriptors the configured limits can hold at once: every local client,
 * two links per possible peer (a duplicate-link race), the inbound
 * handshakes and the listeners, plus a margin for the event loop, the
 * state directory, logging and dials. */
static rlim_t
fds_needed(const struct dmd_config *c)
{
	rlim_t n = LP_CLIENTS_MAX + 64;

	if (config_is_clustered(c))
		n += 2 * (rlim_t)DM_NODES_MAX + c->max_handshakes + c->n_listen;
	return n;
}

/* Outside systemd (whose unit sets LimitNOFILE=) the soft limit is often
 * 1024, below what the limits above need: take the hard limit, and warn
 * when even that is too low (accepts then pause while descriptors are
 * short: accept_guard.h). */
static void
raise_fd_limit(const struct dmd_config *c)
{
	struct rlimit rl;
	rlim_t need = fds_needed(c), before;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_warning_errno(errno, "cannot read the open-file limit");
		return;
	}
	before = rl.rlim_cur;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
		/* An unlimited hard limit is refused for descriptors: ask for
		 * what is needed then. */
		if (setrlimit(RLIMIT_NOFILE, &want) < 0 && rl.rlim_max == RLIM_INFINITY &&
		    need > rl.rlim_cur) {
			want.rlim_cur = need;
			(void)setrlimit(RLIMIT_NOFILE, &want);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = before;
		if (rl.rlim_cur != before)
			log_info("open-file limit raised from %llu to %llu",
			    (unsigned long long)before, (unsigned long long)rl.rlim_cur);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		log_warning("the open-file limit is %llu (hard %llu), below the %llu descriptors "
		    "%d local clients%s can use: new connections will wait while descriptors are "
		    "short (raise LimitNOFILE= or ulimit -Hn)", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)rl.rlim_max, (unsigned long long)need, LP_CLIENTS_MAX,
		    config_is_clustered(c) ? " and the peer links" : "");
}

static int
install_signals(struct dmd_main *m, struct event **ev, size_t n)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	event_callback_fn fns[] = { on_stop_signal, on_stop_signal, on_reload_signal, on_dump_signal };
	for (size_t i = 0; i < n && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		ev[i] = evsignal_new(m->base, sigs[i], fns[i], m);
		if (ev[i] == NULL || evsignal_add(ev[i], NULL) < 0)
			return log_error_errno(ENOMEM, "cannot install signal handlers");
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int
run(const struct options *o)
{
	char node[DM_NODE_NAME_MAX + 1];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct dmd_main m = { .options = o };
	struct local_server *server = NULL;
	struct event *signals[4] = { NULL };
	struct dm_engine_config engine_config;
	char state_path[4096];
	struct state_dir state = { .fd = -1, .spare_fd = -1 };
	/* The membership record read at start: engine_config.last_record
	 * points into it until dm_engine_new() has copied it.  Static: it is
	 * large (fixed arrays of DM_NODES_MAX names), and run() runs once. */
	static struct state_record last_record;
	int listen_fd = -ENOENT;
	int r;

	log_use_journal(dmd_sd_stderr_is_journal());
	if (o->config_path != NULL) {
		r = load_config(o->config_path, &m.config);
		if (r < 0)
			return r;
		if (!o->log_level_set)
			log_set_max_level(m.config->log_level);
	}
	raise_fd_limit(m.config);
	uint64_t incarnation = startup_entropy();
	uint64_t seed = startup_entropy();
	build_engine_config(&m, incarnation, seed, node, sizeof(node), &engine_config);

	listen_fd = dmd_sd_listen_fd();
	if (listen_fd < 0 && listen_fd != -ENOENT)
		return listen_fd;
	r = socket_path_for(&m, listen_fd, path, sizeof(path));
	if (r < 0)
		goto out;

	mode_t state_parent_mode;
	r = state_dir_path_for(&m, state_path, sizeof(state_path), &state_parent_mode);
	if (r < 0)
		goto out;
	r = state_dir_open(state_path, state_parent_mode, &state, &engine_config.epoch_floor);
	if (r < 0)
		goto out;
	r = state_dir_read_record(&state, &last_record);	/* -EBADMSG: logged with the path */
	if (r < 0)
		goto out;
	state_record_view(&last_record, &engine_config.last_record);
	if (last_record.label != 0 || last_record.n_names > 0 || last_record.n_removals > 0)
		log_info("membership record from %s/%s: roster label %llu, %zu members,"
		    " %zu agreed removals", state_path, STATE_RECORD_FILE,
		    (unsigned long long)last_record.label, last_record.n_names,
		    last_record.n_removals);
	r = refuse_alone_after_cluster(&engine_config, &last_record, state_path);
	if (r < 0)
		goto out;

	m.base = event_base_new();
	if (m.base == NULL) {
		r = log_error_errno(ENOMEM, "cannot create the event loop");
		goto out;
	}
	r = dmd_daemon_new(m.base, &engine_config, &m.daemon);
	if (r == -ERANGE) {
		log_error_errno(r, "the epoch floor %llu in %s/%s is out of range",
		    (unsigned long long)engine_config.epoch_floor, state_path, STATE_FLOOR_FILE);
		goto out;
	}
	if (r < 0 && (r == -EINVAL || r == -E2BIG) &&
	    (last_record.label != 0 || last_record.n_names > 0 || last_record.n_removals > 0)) {
		log_error_errno(r, "the engine refused the configuration (algorithm %s) or the"
		    " membership record in %s/%s", engine_config.algorithm, state_path,
		    STATE_RECORD_FILE);
		goto out;
	}
	if (r < 0) {
		log_error_errno(r, "the engine refused the configuration (algorithm %s)",
		    engine_config.algorithm);
		goto out;
	}
	dmd_daemon_set_state_hook(m.daemon, on_engine_state, &m);
	dmd_daemon_set_state_dir(m.daemon, &state);
	if (config_is_clustered(m.config)) {
		r = dmd_cluster_new(m.daemon, m.config, incarnation, seed, &m.cluster);
		if (r < 0)
			goto out;
	}

	mode_t mode = m.config != NULL ? m.config->socket_mode : geteuid() == 0 ? 0660 : 0600;
	size_t per_uid = m.config != NULL ? m.config->clients_per_user : LOCAL_CLIENTS_PER_UID;
	r = local_server_new(m.daemon, path, mode, listen_fd >= 0 ? listen_fd : -1, per_uid,
	    &server);
	if (r < 0)
		goto out;
	r = apply_socket_group(m.config, path, listen_fd);
	if (r < 0)
		goto out;
	m.server = server;
	local_server_set_acl(server, config_take_acl(m.config));	/* [access] */

	m.status_timer = event_new(m.base, -1, EV_PERSIST, on_status_timer, &m);
	m.leave_timer = evtimer_new(m.base, on_leave_timeout, &m);
	if (m.status_timer == NULL || m.leave_timer == NULL) {
		r = log_error_errno(ENOMEM, "cannot create timers");
		goto out;
	}
	evtimer_add(m.status_timer, &(struct timeval){ .tv_sec = 1 });
	r = install_signals(&m, signals, sizeof(signals) / sizeof(signals[0]));
	if (r < 0)
		goto out;
	r = dmd_sd_watchdog_start(m.base);
	if (r < 0)
		log_warning_errno(r, "cannot arm the systemd watchdog");

	/* The first step delivers the startup effects (READY when standalone,
	 * PEER_ADD for the roster, JOIN through the sponsor). */
	struct dm_event tick = { .type = DM_EV_TICK };
	r = dmd_daemon_step(m.daemon, &tick);
	if (r < 0) {
		log_error_errno(r, "engine failed to start");
		goto out;
	}
	log_notice("dmlockd %s listening on %s (node %s, algorithm %s, %s)", PACKAGE_VERSION,
	    path, engine_config.self, engine_config.algorithm,
	    m.cluster != NULL ? "clustered" : "standalone");

	if (event_base_dispatch(m.base) < 0) {
		r = log_error_errno(EIO, "event loop failed");
		goto out;
	}
	r = dmd_daemon_halt_status(m.daemon);
	if (r != 0) {
		/* Halted (cluster_glue.c said why): close the clients and the
		 * links like a crash would, no LEAVE; the status asks the
		 * service manager for a new process. */
		dmd_sd_notify_status("exiting with status %d to restart as a new incarnation", r);
		dmd_sd_notify_stopping();
		log_notice("exiting with status %d without leaving the cluster: local clients are "
		    "disconnected and lose their locks; a restarted dmlockd joins as a new "
		    "incarnation", r);
	}
out:
	dmd_sd_watchdog_stop();
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i] != NULL)
			event_free(signals[i]);
	if (m.status_timer != NULL)
		event_free(m.status_timer);
	if (m.leave_timer != NULL)
		event_free(m.leave_timer);
	local_server_free(server);
	dmd_cluster_drain(m.cluster, m.base, 1000);
	dmd_cluster_free(m.cluster);
	dmd_daemon_free(m.daemon);
	if (m.base != NULL) {
		/* Let libevent finish freeing bufferevents closed above. */
		event_base_loop(m.base, EVLOOP_NONBLOCK);
		event_base_free(m.base);
	}
	config_free(m.config);
	state_dir_close(&state);
	return r;
}

static int
check_config(const struct options *o)
{
	struct dmd_config *c = NULL;
	if (o->config_path == NULL) {
		fprintf(stderr, "dmlockd: no configuration file (%s does not exist): "
		    "dmlockd would run as a one-node cluster\n", DEFAULT_CONFIG);
		return 0;
	}
	if (load_config(o->config_path, &c) < 0)
		return -EINVAL;
	printf("%s: OK (node %s, algorithm %s, %zu peer(s)%s)\n", o->config_path, c->node_name,
	    c->algorithm, c->n_peers, c->sponsor.name != NULL ? ", joins through a sponsor" : "");
	config_free(c);
	return 0;
}

int
main(int argc, char **argv)
{
	struct options o = { 0 };
	int r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? EXIT_SUCCESS : 2;
	if (o.check_config)
		return check_config(&o) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	r = run(&o);	/* > 0: an exit status chosen by dmd_daemon_halt() */
	return r < 0 ? EXIT_FAILURE : r > 0 ? r : EXIT_SUCCESS;
}
