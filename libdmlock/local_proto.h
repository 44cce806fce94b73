/*
 * local_proto.h: the codec of the local protocol between dmlockd and its
 * clients (libdmlock, the dmlock CLI, socat), shared by both sides.  Pure
 * and sans-I/O: it turns one text line into a struct and back; it never
 * reads a socket, a clock or the environment, and never allocates.  Lock
 * names are checked with dm_lock_name_valid() from dm_types.h (whoever links
 * this codec links dm_types.c too).  Not installed.
 *
 * ======================================================================
 * dmlock local protocol, version 1
 * ======================================================================
 *
 * Transport.  A Unix stream socket (default /run/dmlock/dmlockd.sock; see
 * dmlock_socket_path()).  Both sides send lines of printable ASCII
 * (0x20..0x7e) ending in "\n"; a single "\r" right before the "\n" is
 * ignored, so `socat - UNIX-CONNECT:/run/dmlock/dmlockd.sock,crlf` works.
 * Fields are separated by exactly one space; no leading or trailing spaces.
 * A client line, newline included, is at most 1024 bytes.  Verbs and words
 * are case-sensitive.
 *
 * Greeting.  On accept the daemon writes one line before anything else:
 *	DMLOCK 1 <node> <algorithm>
 * "1" is the protocol version (a client must close on any other);
 * <node> is the daemon's node name, <algorithm> its algorithm, e.g.
 *	DMLOCK 1 host-a ricart-agrawala
 *
 * Fields.
 *	<id>	  1..32 bytes of [A-Za-z0-9._-], chosen by the client to name
 *		  one request.  It must not name a request of the same
 *		  connection that is still pending or held; once the daemon has
 *		  sent DENIED, LOST or RELEASED for it, it may be reused.
 *	<lock>	  a lock name: 1..255 bytes of 0x21..0x7e (printable, no space).
 *	<mode>	  "ex" (exclusive) or "sh" (shared).
 *	<wait>	  "try" (fail at once if taken), "forever", or a decimal number
 *		  of milliseconds 0..999999999999, no sign, no leading zero
 *		  ("0" is the same as "try").
 *	<token>	  fencing token, decimal 1..2^64-1, strictly increasing for
 *		  each new grant of the same lock name across the cluster.
 *	<deadline> absolute CLOCK_BOOTTIME time in milliseconds, decimal; 0
 *		  means none.  The daemon moves it forward with EXTEND while the
 *		  lock is safely held; a client must consider the lock lost once
 *		  its own CLOCK_BOOTTIME reaches the deadline without an EXTEND.
 *	<text>	  the rest of the line, free human-readable text (may be empty
 *		  but the space before it is always sent).
 *
 * Client requests and their answers.
 *	ACQUIRE <id> <lock> <mode> <wait>
 *		Later answered by exactly one of GRANTED <id> or DENIED <id>
 *		(or ERROR <id> at once if the line is invalid).  A granted
 *		lock is held until RELEASE/CANCEL, until the daemon sends LOST
 *		<id>, or until the connection closes (then the daemon releases
 *		every lock and request of the connection at once).
 *	RELEASE <id>
 *		Release a held lock: answered RELEASED <id>.  ERROR <id>
 *		not-held if it is still waiting, ERROR <id> unknown-id if no
 *		such request exists (e.g. it was just LOST).
 *	CANCEL <id>
 *		Withdraw a waiting request or release a held lock: answered
 *		RELEASED <id>; ERROR <id> unknown-id if no such request exists.
 *	STATUS	Answered by a status block (below).
 *	PING	Answered by PONG.
 *
 * Administrative requests (no id).  Each is answered either by a block
 * (lines sent in one piece, ending with END, like STATUS) or by one line
 * ERROR - <code> <text>; the text says what went wrong and what to do.
 *	LOCKS	The locks this node knows about, cluster-wide as far as the
 *		algorithm lets this node see them: LOCK lines (see the status
 *		block) with a tenth field, the node the request is on.  This
 *		version knows only requests made on this node (the engine has
 *		no view of remote state yet); later ones may add lines for
 *		other nodes, with "-" in the pid, uid and id fields.
 *	LEAVE	Leave the cluster gracefully (RA section 7.3) and stop the
 *		daemon once the other members have acknowledged.  Answered
 *		INFO <text> END before the leave starts; the daemon closes the
 *		connection when it exits.  Every lock held or waited for on
 *		this node is LOST/DENIED with reason shutdown.
 *		ERROR - bad-state if already leaving or not yet a member.
 *	REMOVE <node>
 *		Administrative removal of a (dead) member; answered INFO
 *		<text> END once the removal is under way.  ERROR - unknown-node
 *		if <node> is not in the roster, ERROR - bad-node if it is not a
 *		node name or names this node (use LEAVE).
 *	JOIN <node>@<host>:<port>
 *		Join a running cluster through that sponsor: INFO <text> END
 *		once under way.  ERROR - unsupported from a daemon without a
 *		peer transport, ERROR - bad-state if the node is already in a
 *		cluster (or joining, leaving) or a lock is held or waited for
 *		on it, ERROR - bad-node for a bad sponsor or this node.
 *	LEAVE, REMOVE and JOIN are roster operations: by default only root
 *	and the principals of the daemon's [access] roster setting may send
 *	them; anyone else gets ERROR - denied <text naming the rule>.
 *
 * Access control.  An ACQUIRE that the daemon's [access] lock rules do not
 * allow is answered DENIED <id> denied <text>, where the text names the
 * rule that refused it (or says that none matched).
 *
 * Daemon lines (besides the greeting and answers to STATUS).
 *	GRANTED <id> <token> <deadline>
 *	DENIED <id> <reason> <text>
 *		<reason>: busy (try: taken) | timeout (wait expired) |
 *		unsupported (mode/algorithm) | invalid | denied (access
 *		control) | shutdown (daemon stopping) | error (anything else).
 *	EXTEND <id> <deadline>
 *	LOST <id> <reason> <text>
 *		<reason>: lease (lease expired) | shutdown | removed (this node
 *		left or was removed from the cluster) | error.
 *	RELEASED <id>
 *	PONG
 *	ERROR <id|-> <code> <text>
 *		"-" when the line had no valid id.  <code>: syntax |
 *		unknown-verb | bad-id | bad-name | bad-mode | bad-wait |
 *		id-in-use | unknown-id | not-held | too-long | too-many-requests |
 *		too-many-errors | too-many-clients | internal | denied |
 *		bad-node | unknown-node | bad-state | unsupported.
 *	Clients must ignore other reason and code words as "error"/unknown
 *	(later versions may add some) but must close on an unknown verb.
 *
 * Status block.  Lines sent in one piece (no other line comes between
 * them), in this order, ending with END:
 *	NODE <name> <algorithm> <ready|starting> <roster-size> <epoch>
 *	CAPS <algorithm> <shared|exclusive-only|unknown>
 *		whether the algorithm admits shared (sh) requests; an ACQUIRE
 *		in sh mode on an exclusive-only algorithm is answered DENIED
 *		<id> unsupported <text naming the algorithm>.
 *	PEER <name> <address|-> <self|up|down> <contact> <rtt> <sent> <received>
 *		one per roster member; <contact> is how many ms ago the last
 *		frame from the peer arrived, <rtt> the last measured round
 *		trip in microseconds (a message to its acknowledgement);
 *		<sent>/<received> how many DATA frames (engine messages) this
 *		daemon wrote to / read from that peer since it started,
 *		resends and duplicates included; "-" when unknown (self, no
 *		link yet, no transport).  <sent> and <received> were added
 *		after the first version: older daemons send 5 fields.
 *	LOCK <lock> <ex|sh> <held|waiting> <token> <since> <pid> <uid> <id>
 *		one per request on this node; <token> 0 while waiting; <since>
 *		CLOCK_BOOTTIME ms of the grant or of the start of the wait;
 *		<pid>/<uid> the client's SO_PEERCRED; <id> its request id.
 *	ALGO <lock|-> <key=value>...
 *		the algorithm's own view: "-" for the node (e.g. election=bully
 *		coordinator=n1 epoch=3 elections=2), else one per lock with
 *		state on this node (e.g. token=here); at most 10 words, keys
 *		and values chosen by the algorithm (dmlock(1) lists them).
 *		Added after the first version: libdmlock before it refuses
 *		the line (it knew only the kinds above).
 *	END
 *	Clients must ignore status lines of other kinds and extra fields at
 *	the end of a known kind (later versions may add some).
 *	INFO <text>	a human-readable note in an administrative answer.
 *
 * Limits.  Per connection: 256 requests pending or held; 100 ERROR
 * answers; a line longer than 1024 bytes; a client that does not read its
 * answers (more than 1 MiB unread).  Past any of them the daemon sends
 * ERROR - <code> <text> (where possible) and closes that connection, which
 * releases its locks; other connections are not affected.  At most 1024
 * connections, of which a user other than root may hold 256 by default
 * ([local] clients_per_user in dmlockd.conf), and the last 16 are kept for
 * root; a connection past a cap is sent ERROR - too-many-clients and
 * closed.
 *
 * Example (C: client, D: daemon):
 *	D: DMLOCK 1 host-a ricart-agrawala
 *	C: ACQUIRE 1 backup ex 5000
 *	D: GRANTED 1 17 0
 *	C: RELEASE 1
 *	D: RELEASED 1
 * ======================================================================
 */
#ifndef DMLOCK_LOCAL_PROTO_H
#define DMLOCK_LOCAL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dm_types.h"

#define LP_VERSION		1
#define LP_LINE_MAX		1024	/* bytes in a client line incl. "\n" */
#define LP_ID_MAX		32	/* bytes in a request id */
#define LP_TEXT_MAX		200	/* bytes of <text> the daemon sends */
#define LP_WAIT_MS_MAX		999999999999ULL
#define LP_REQUESTS_MAX		256	/* pending or held per connection */
#define LP_ERRORS_MAX		100	/* ERROR answers per connection */
#define LP_CLIENTS_MAX		1024	/* connections per daemon */
#define LP_OUTPUT_MAX		(1024 * 1024) /* unread daemon output per client */
/* Longest daemon line: a status LOCK line with a 255-byte name. */
#define LP_REPLY_MAX		512

enum lp_verb {
	LP_ACQUIRE = 1,
	LP_RELEASE,
	LP_CANCEL,
	LP_STATUS,
	LP_PING,
	LP_LOCKS,
	LP_LEAVE,
	LP_REMOVE,
	LP_JOIN,
};

/* Is verb one of the block-answered administrative requests (no id)? */
#define LP_VERB_IS_ADMIN(v) ((v) == LP_STATUS || (v) == LP_LOCKS || (v) == LP_LEAVE || \
	(v) == LP_REMOVE || (v) == LP_JOIN)
/* Longest argument of REMOVE/JOIN: node "@" host:port. */
#define LP_ARG_MAX		(DM_NODE_NAME_MAX + 1 + DM_ADDRESS_MAX)

/* wait_ms values; equal to the engine's DM_WAIT_TRY and DM_WAIT_FOREVER. */
#define LP_WAIT_TRY		((uint64_t)0)
#define LP_WAIT_FOREVER		UINT64_MAX

/* A parsed client line. */
struct lp_request {
	enum lp_verb	 verb;
	char		 id[LP_ID_MAX + 1];	/* "" for STATUS, PING and admin verbs */
	char		 arg[LP_ARG_MAX + 1];	/* REMOVE: node; JOIN: node@host:port */
	char		 lock[DM_LOCK_NAME_MAX + 1];
	size_t		 lock_len;
	enum dm_mode	 mode;
	uint64_t	 wait_ms;
};

/* ERROR codes. */
enum lp_error {
	LP_E_SYNTAX = 1,
	LP_E_UNKNOWN_VERB,
	LP_E_BAD_ID,
	LP_E_BAD_NAME,
	LP_E_BAD_MODE,
	LP_E_BAD_WAIT,
	LP_E_ID_IN_USE,
	LP_E_UNKNOWN_ID,
	LP_E_NOT_HELD,
	LP_E_TOO_LONG,
	LP_E_TOO_MANY_REQUESTS,
	LP_E_TOO_MANY_ERRORS,
	LP_E_TOO_MANY_CLIENTS,
	LP_E_INTERNAL,
	LP_E_DENIED,
	LP_E_BAD_NODE,
	LP_E_UNKNOWN_NODE,
	LP_E_BAD_STATE,
	LP_E_UNSUPPORTED,
	LP_E_OTHER,		/* a code word this version does not know */
	_LP_E_MAX,
};

enum lp_reply_type {
	LP_R_GREETING = 1,
	LP_R_GRANTED,
	LP_R_DENIED,
	LP_R_EXTEND,
	LP_R_LOST,
	LP_R_RELEASED,
	LP_R_PONG,
	LP_R_ERROR,
	LP_R_STATUS_LINE,	/* NODE, CAPS, PEER, LOCK, ALGO, INFO: see text */
	LP_R_END,
};

/*
 * A daemon line.  Which fields matter depends on type:
 *   GREETING: version, node, algorithm
 *   GRANTED: id, token, deadline	EXTEND: id, deadline
 *   DENIED: id, error (-errno from the reason word), text
 *   LOST: id, error, text		RELEASED: id
 *   ERROR: id ("" for "-"), code, text
 *   STATUS_LINE: text (the whole line without newline)
 * text points into the parsed line (borrowed) or, when formatting, at the
 * caller's string; it is not NUL-terminated: use text_len.
 */
struct lp_reply {
	enum lp_reply_type type;
	char		 id[LP_ID_MAX + 1];
	uint64_t	 token;
	uint64_t	 deadline;
	int		 error;
	enum lp_error	 code;
	const char	*text;
	size_t		 text_len;
	unsigned	 version;
	char		 node[DM_NODE_NAME_MAX + 1];
	char		 algorithm[DM_ALGORITHM_NAME_MAX + 1];
};

/*
 * Parse one client line of len bytes, without its "\n" (a trailing "\r"
 * is dropped).  Returns 0 and fills *ret, or -EINVAL and sets *ret_error;
 * then ret->id holds the request's id if that much was valid (else ""), so
 * the daemon can answer ERROR <id>.
 */
int lp_request_parse(const char *line, size_t len, struct lp_request *ret,
    enum lp_error *ret_error);

/* Format a request as one line with "\n" into buf; returns its length, or
 * -EINVAL for an invalid request, -ENOBUFS if size is too small. */
int lp_request_format(char *buf, size_t size, const struct lp_request *req);

/* Parse one daemon line (without "\n").  Returns 0, or -EPROTO. */
int lp_reply_parse(const char *line, size_t len, struct lp_reply *ret);

/*
 * Format a daemon line with "\n" into buf; returns its length, or -EINVAL,
 * -ENOBUFS.  text is cut to LP_TEXT_MAX bytes and any byte outside
 * 0x20..0x7e becomes '?'.  An error errno with no reason word of its own
 * is sent as "error".  STATUS_LINE sends text as it is (checked printable).
 */
int lp_reply_format(char *buf, size_t size, const struct lp_reply *reply);

/* Word <-> errno for DENIED and LOST reasons; unknown words give -EIO,
 * unknown errnos "error". */
const char *lp_denied_reason_name(int error);
int lp_denied_reason_from_name(const char *word, size_t len);
const char *lp_lost_reason_name(int error);
int lp_lost_reason_from_name(const char *word, size_t len);

/* ERROR code word; NULL for an invalid code. */
const char *lp_error_name(enum lp_error code);

/* Syntax of a JOIN sponsor, node@host:port (node a valid node name, the
 * address 1..DM_ADDRESS_MAX bytes ending in :port). */
bool lp_sponsor_valid(const char *s, size_t len);

/* The errno a library reports for an ERROR code of an admin request. */
int lp_error_errno(enum lp_error code);

/* Syntax of ids (also used by the daemon and the library). */
bool lp_id_valid(const char *id, size_t len);

#endif /* DMLOCK_LOCAL_PROTO_H */
