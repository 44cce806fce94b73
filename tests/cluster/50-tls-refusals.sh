#!/bin/bash
# 50-tls-refusals: at the daemon level, a running cluster refuses, with the
# reason in its log and without any link coming up: a daemon whose
# certificate comes from another CA, one with an expired certificate, one
# whose certificate names another node than it claims, and a plaintext TCP
# client.  A correct daemon with the same config then joins (control).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cluster/lib-cluster.sh"

start_cluster 2
pick_ports 1 3
"$top_srcdir/tools/mkcerts" -d "$CERTS" --ca evilca --out node3-wrongca node3 >/dev/null || fail mkcerts
"$top_srcdir/tools/mkcerts" -d "$CERTS" --expired --out node3-expired node3 >/dev/null || fail mkcerts
"$top_srcdir/tools/mkcerts" -d "$CERTS" --out node3-misnamed node9 >/dev/null || fail mkcerts
"$top_srcdir/tools/mkcerts" -d "$CERTS" node3 >/dev/null || fail mkcerts

impostor_conf CONF_CERT=node3-wrongca
expect_impostor_refused "a certificate from another CA" 'TLS handshake.*(unknown ca|verify|certificate)'
impostor_conf CONF_CERT=node3-expired
expect_impostor_refused "an expired certificate" 'TLS handshake.*expired'
impostor_conf CONF_CERT=node3-misnamed
expect_impostor_refused "a certificate for node9 presented as node3" 'name mismatch'

# Plaintext: a TCP client that speaks no TLS.
before=$(refusals_in 1)
exec 4<>"/dev/tcp/127.0.0.1/${PORT[1]}" || fail "cannot connect to node1's port"
printf 'HELLO node3 cluster test algorithm ricart-agrawala\r\n\r\n' >&4 2>/dev/null
wait_until "node1 to refuse a plaintext client" eval '[ "$(refusals_in 1)" -gt "$before" ]'
reason=$(grep -E "$REFUSAL" "$(node_log 1)" | tail -n 1)
grep -q 'TLS handshake' <<<"$reason" || fail "plaintext refusal does not name TLS: $reason"
exec 4>&-
links_up 1 1 || fail "node1's links changed after the plaintext client"
pass "a plaintext client refused: ${reason#*: warning: }"

# Control: the same node3 with its proper certificate is admitted.
impostor_conf
: >"$(node_log 3)"
start_node 3
wait_until "node3 with a good certificate to link to node1" links_up 3 2
pass "node3 with a certificate from the cluster CA is admitted"
stop_cluster
