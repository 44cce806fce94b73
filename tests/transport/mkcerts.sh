#!/bin/bash
# tests/transport/mkcerts.sh: tools/mkcerts makes what the TLS links need:
# a CA, node certificates whose SAN DNS is the node name and that verify
# against the CA, an expired certificate, a second unrelated CA, and a CRL
# that revokes exactly the certificates named.
set -euo pipefail
: "${top_srcdir:?}"
tmp=$(mktemp -d /tmp/dmlock-mkcerts-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mk="$top_srcdir/tools/mkcerts"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$mk" -d "$tmp" node1 node2.example
for n in node1 node2.example; do
	openssl verify -CAfile "$tmp/ca.crt" "$tmp/$n.crt" >/dev/null || fail "$n does not verify"
	openssl x509 -in "$tmp/$n.crt" -noout -ext subjectAltName | grep -qx "    DNS:$n" ||
		fail "$n: SAN is not DNS:$n"
	openssl x509 -in "$tmp/$n.crt" -noout -checkhost "$n" | grep -q "does match" || fail "$n: checkhost"
	[[ $(stat -c %a "$tmp/$n.key") == 600 ]] || fail "$n.key is not mode 600"
	cmp -s <(openssl x509 -in "$tmp/$n.crt" -noout -pubkey) \
		<(openssl pkey -in "$tmp/$n.key" -pubout) || fail "$n: key does not match"
done
ca_before=$(openssl x509 -in "$tmp/ca.crt" -noout -fingerprint)

# Reuses the CA on a second run.
"$mk" -d "$tmp" node3
[[ $(openssl x509 -in "$tmp/ca.crt" -noout -fingerprint) == "$ca_before" ]] || fail "CA was remade"
openssl verify -CAfile "$tmp/ca.crt" "$tmp/node3.crt" >/dev/null || fail "node3 does not verify"

# Expired certificate.
"$mk" -d "$tmp" --expired --out node1-expired node1
out=$(openssl verify -CAfile "$tmp/ca.crt" "$tmp/node1-expired.crt" 2>&1 || true)
grep -q "certificate has expired" <<<"$out" || fail "expired cert: $out"

# A second CA: its certificates do not verify against the first.
"$mk" -d "$tmp" --ca other --out node1-other node1
out=$(openssl verify -CAfile "$tmp/ca.crt" "$tmp/node1-other.crt" 2>&1 || true)
grep -q "unable to get local issuer" <<<"$out" || fail "second CA: $out"
openssl verify -CAfile "$tmp/other.crt" "$tmp/node1-other.crt" >/dev/null || fail "second CA own verify"

# CRL revoking node2.example only.
"$mk" -d "$tmp" --crl node2.example
out=$(openssl verify -crl_check -CRLfile "$tmp/ca.crl" -CAfile "$tmp/ca.crt" "$tmp/node2.example.crt" 2>&1 || true)
grep -q "certificate revoked" <<<"$out" || fail "CRL: $out"
openssl verify -crl_check -CRLfile "$tmp/ca.crl" -CAfile "$tmp/ca.crt" "$tmp/node1.crt" >/dev/null ||
	fail "CRL revoked node1 too"

# Bad input is refused.
if "$mk" -d "$tmp" "bad name" 2>/dev/null; then fail "accepted a bad node name"; fi
if "$mk" -d "$tmp" --bogus node1 2>/dev/null; then fail "accepted an unknown option"; fi
echo "mkcerts: all checks passed"
