/*
 * peer_node.c: a minimal process around the peer transport for the
 * multi-process tests in tests/transport/: one node with real TLS that
 * sends --count numbered messages to each peer once a link to it is up (or
 * at once to peers given with --peer), checks that what it receives is in
 * order, and reports events as lines on stdout:
 *   listening ADDR | up PEER | down PEER | restarted PEER INC |
 *   refused REASON | received PEER N (when N == --count) | order-error PEER
 * It runs until SIGTERM/SIGINT.
 */
#include "config.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmlockd/log.h"
#include "dmlockd/peer_transport.h"
#include "dmlockd/tls.h"

#define PEERS_MAX 8

struct tracked {
	char		 name[DM_NODE_NAME_MAX + 1];
	uint64_t	 expect, received;
	bool		 sent;
};

static struct peer_transport *transport;
static struct tracked tracked[PEERS_MAX];
static size_t n_tracked;
static uint64_t count = 1000;

static struct tracked *
track(const char *name)
{
	for (size_t i = 0; i < n_tracked; i++)
		if (strcmp(tracked[i].name, name) == 0)
			return &tracked[i];
	if (n_tracked == PEERS_MAX)
		return NULL;
	snprintf(tracked[n_tracked].name, sizeof(tracked[n_tracked].name), "%s", name);
	return &tracked[n_tracked++];
}

static void
send_all(struct tracked *p)
{
	uint8_t payload[8];

	if (p->sent)
		return;
	p->sent = true;
	for (uint64_t i = 0; i < count; i++) {
		for (int b = 0; b < 8; b++)
			payload[b] = (uint8_t)(i >> (56 - 8 * b));
		if (peer_transport_send(transport, p->name, payload, sizeof(payload)) < 0) {
			printf("send-error %s\n", p->name);
			break;
		}
	}
}

static void
on_message(void *ctx, const char *peer, const uint8_t *payload, size_t len)
{
	struct tracked *p = track(peer);
	uint64_t index = 0;

	if (p == NULL || len != 8)
		return;
	for (int b = 0; b < 8; b++)
		index = (index << 8) | payload[b];
	if (index != p->expect)
		printf("order-error %s got %llu want %llu\n", peer, (unsigned long long)index,
		    (unsigned long long)p->expect);
	p->expect = index + 1;
	if (++p->received == count)
		printf("received %s %llu\n", peer, (unsigned long long)p->received);
}

static void
on_link_up(void *ctx, const char *peer)
{
	struct tracked *p = track(peer);

	printf("up %s\n", peer);
	if (p != NULL)
		send_all(p);
}

static void
on_link_down(void *ctx, const char *peer)
{
	printf("down %s\n", peer);
}

static void
on_peer_restarted(void *ctx, const char *peer, uint64_t incarnation)
{
	struct tracked *p = track(peer);

	printf("restarted %s %llu\n", peer, (unsigned long long)incarnation);
	if (p != NULL)
		*p = (struct tracked){ .sent = false };
	if (p != NULL)
		snprintf(p->name, sizeof(p->name), "%s", peer);
}

static void
on_refused(void *ctx, const char *peer, const char *reason)
{
	printf("refused %s\n", reason);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "name", required_argument, NULL, 'n' }, { "certs", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' }, { "peer", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' }, { "incarnation", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	const struct peer_transport_callbacks cb = {
		.on_message = on_message, .on_link_up = on_link_up, .on_link_down = on_link_down,
		.on_peer_restarted = on_peer_restarted, .on_refused = on_refused,
	};
	const char *name = NULL, *certs = NULL, *listen[4], *peers[PEERS_MAX];
	size_t n_listen = 0, n_peers = 0;
	uint64_t incarnation = 1;
	char cert[512], key[512], ca[512], err[512], addr[128];
	struct event_base *base;
	struct event *sigterm, *sigint;
	SSL_CTX *tls;
	int opt, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'n': name = optarg; break;
		case 'd': certs = optarg; break;
		case 'l': if (n_listen < 4) listen[n_listen++] = optarg; break;
		case 'p': if (n_peers < PEERS_MAX) peers[n_peers++] = optarg; break;
		case 'c': count = strtoull(optarg, NULL, 10); break;
		case 'i': incarnation = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (name == NULL || certs == NULL) {
		fprintf(stderr, "usage: peer_node --name N --certs DIR [--listen A]... [--peer NAME@ADDR]... "
		    "[--count N] [--incarnation I]\n");
		return 2;
	}
	log_set_max_level(LOG_LEVEL_NOTICE);
	snprintf(cert, sizeof(cert), "%s/%s.crt", certs, name);
	snprintf(key, sizeof(key), "%s/%s.key", certs, name);
	snprintf(ca, sizeof(ca), "%s/ca.crt", certs);
	r = tls_context_new(&(struct tls_files){ ca, cert, key, NULL }, &tls, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "peer_node: %s\n", err);
		return 1;
	}
	base = event_base_new();
	r = peer_transport_new(base, &(struct peer_transport_config){
	    .self = name, .cluster = "test", .algorithm = "ricart-agrawala",
	    .incarnation = incarnation, .listen = listen, .n_listen = n_listen, .tls = tls,
	    .limits = { .keepalive_ms = 200, .reconnect_min_ms = 20, .reconnect_max_ms = 500 } },
	    &cb, NULL, &transport);
	SSL_CTX_free(tls);
	if (r < 0) {
		fprintf(stderr, "peer_node: cannot start: %s\n", strerror(-r));
		return 1;
	}
	for (size_t i = 0; i < n_listen; i++)
		if (peer_transport_listen_address(transport, i, addr, sizeof(addr)) == 0)
			printf("listening %s\n", addr);
	for (size_t i = 0; i < n_peers; i++) {
		char peer_name[DM_NODE_NAME_MAX + 1];
		const char *at = strchr(peers[i], '@');
		if (at == NULL || (size_t)(at - peers[i]) > DM_NODE_NAME_MAX)
			return 2;
		snprintf(peer_name, sizeof(peer_name), "%.*s", (int)(at - peers[i]), peers[i]);
		if (peer_transport_add_peer(transport, peer_name, at + 1) < 0)
			return 2;
		send_all(track(peer_name));	/* queued until the link is up */
	}
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	event_base_dispatch(base);
	printf("exiting\n");
	event_free(sigterm);
	event_free(sigint);
	peer_transport_free(transport);
	event_base_loop(base, EVLOOP_NONBLOCK);	/* let libevent finish freeing bufferevents */
	event_base_free(base);
	return 0;
}
