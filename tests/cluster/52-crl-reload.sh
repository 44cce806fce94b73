#!/bin/bash
# 52-crl-reload: a CRL added by SIGHUP takes a revoked member out at once.
# A 3-node cluster is linked; node1 and node2 get a CRL revoking node3 and
# SIGHUP: every link they had is closed and verified again, node1-node2
# comes back, node3 is refused over and over and never gets a link again
# (before, the links verified before the revocation stayed up for good).
# A SIGHUP with the TLS files unchanged keeps every link (control).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

start_cluster 3

# Control: byte-identical TLS files, nothing happens to the links.  (Only
# what comes after the SIGHUP counts: a crossing dial at start may have
# logged a link down before.)
downs=$(grep -c 'link down' "$(node_log 1)")
kill -HUP "${NODE_PID[1]}"
wait_log 1 'TLS files unchanged; peer links kept'
[ "$(grep -c 'link down' "$(node_log 1)")" -eq "$downs" ] ||
	fail "a SIGHUP with unchanged TLS files cut a link: $(grep 'link down' "$(node_log 1)" | tail -n 1)"
links_up 1 2 || fail "node1 lost links on an unchanged reload"
pass "SIGHUP with unchanged TLS files keeps the links"

"$top_srcdir/tools/mkcerts" -d "$CERTS" --crl node3 >/dev/null || fail "mkcerts --crl"
for i in 1 2; do
	write_conf "$i" "peers = $(roster_of 1 2 3)" "[tls]
crl = $CERTS/ca.crl"
done
before1=$(refusals_in 1)
before2=$(refusals_in 2)
kill -HUP "${NODE_PID[1]}" "${NODE_PID[2]}"
wait_log 1 'TLS files reloaded; [12] peer link\(s\) closed'
wait_log 2 'TLS files reloaded; [12] peer link\(s\) closed'

# node3 is refused again and again by both (its dials and theirs).
revoked_many() {
	[ "$(tail -n +$((before1 + 1)) <(grep -E "$REFUSAL" "$(node_log 1)") | grep -c revoked)" -ge 3 ] &&
		[ "$(tail -n +$((before2 + 1)) <(grep -E "$REFUSAL" "$(node_log 2)") | grep -c revoked)" -ge 3 ]
}
wait_until "node1 and node2 to refuse the revoked node3 three times each" revoked_many
wait_until "node1 and node2 to link again" eval 'links_up 1 1 && links_up 2 1'
# Still refused after the others linked again, and node3 has no link.
n1=$(refusals_in 1)
wait_until "another refusal of node3 by node1" eval '[ "$(refusals_in 1)" -gt "$n1" ]'
links_up 3 0 || fail "node3 still has a link: $(DMLOCK_SOCKET=$(node_sock 3) "$DMLOCK" status --json)"
links_up 1 1 || fail "node1's links: $(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" status --json)"
json=$(DMLOCK_SOCKET=$(node_sock 1) "$DMLOCK" status --json)
grep -q '"name":"node2"[^}]*"link":"up"' <<<"$json" || fail "node1-node2 is not the link up: $json"
reason=$(grep -E "$REFUSAL" "$(node_log 1)" | grep revoked | tail -n 1)
pass "node3 revoked by a reloaded CRL is cut off and stays out: ${reason#*: warning: }"
stop_cluster
