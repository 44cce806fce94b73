#!/bin/bash
# 22-pipelined-answers: a client that pipelines thousands of requests and
# reads its answers slowly gets every answer exactly once and in order.
# The daemon sends an answer at once when nothing is queued before it and
# queues it otherwise; it stops reading a client whose unread answers pile
# up (64 KiB queued) and reads on once they drain.  A slow reader exercises
# all of it (the daemon's debug log must show the pause and the resume):
# the answers' ids must come back in request order, tokens strictly
# increasing.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

start_daemon --log-level debug

timeout -k 5 "$WAIT_LIMIT" python3 - "$DMLOCK_SOCKET" "$TEST_DIR/dmlockd.log" \
	>"$TEST_DIR/client.out" 2>&1 <<'EOF'
import select, socket, sys, time

def daemon_paused():
    with open(sys.argv[2], "rb") as log:
        return b"pausing its requests" in log.read()

ROUNDS = 3000
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
sock.setblocking(False)

# Each round: take lock p, ask for a status block (bulk output), release.
out = bytearray()
expect = []
for i in range(ROUNDS):
    out += b"ACQUIRE a%d p ex try\n" % i
    expect.append(("GRANTED", "a%d" % i))
    out += b"STATUS\n"
    expect.append(("END", None))
    out += b"RELEASE a%d\n" % i
    expect.append(("RELEASED", "a%d" % i))

inbuf = b""
received = 0
got = []
last_token = 0
deadline = time.monotonic() + 15
# Read nothing until the daemon says it paused this client (its answers
# fill the socket, then 64 KiB queue up); then read slowly.
reading = False
while len(got) < len(expect):
    if time.monotonic() > deadline:
        sys.exit("timed out: %d of %d answers, %d bytes unsent, paused seen: %s"
                 % (len(got), len(expect), len(out), reading))
    want_w = [sock] if out else []
    r, w, _ = select.select([sock] if reading else [], want_w, [], 0.02)
    if not reading and not w:
        reading = daemon_paused()
    if w:
        try:
            n = sock.send(out[:65536])
            del out[:n]
        except BlockingIOError:
            pass
    if r:
        data = sock.recv(700)    # a slow reader: small reads only
        if not data:
            sys.exit("daemon closed the connection after %d answers" % len(got))
        inbuf += data
        received += len(data)
        *lines, inbuf = inbuf.split(b"\n")
        for line in lines:
            f = line.decode().split(" ")
            if f[0] in ("GRANTED", "RELEASED"):
                got.append((f[0], f[1]))
                if f[0] == "GRANTED":
                    token = int(f[2])
                    if token <= last_token:
                        sys.exit("token %d after %d" % (token, last_token))
                    last_token = token
            elif f[0] == "END":
                got.append(("END", None))
            elif f[0] in ("DENIED", "ERROR", "LOST"):
                sys.exit("unexpected answer: %s" % line.decode())

for k, (g, e) in enumerate(zip(got, expect)):
    if g != e:
        sys.exit("answer %d is %s %s, expected %s %s (out of order)" % (k, g[0], g[1], e[0], e[1]))
if len(got) != len(expect):
    sys.exit("%d answers, expected %d" % (len(got), len(expect)))
print("answers in order:", len(got), "bytes:", received)
EOF
rc=$?
[ "$rc" -eq 0 ] || fail "pipelined client: $(cat "$TEST_DIR/client.out")"
read -r _ _ _ answers _ bytes <"$TEST_DIR/client.out"
[ "$answers" = 9000 ] || fail "unexpected client output: $(cat "$TEST_DIR/client.out")"
grep -q 'bytes of answers unread, pausing its requests' "$TEST_DIR/dmlockd.log" ||
	fail "the daemon never paused the slow reader ($bytes bytes of answers): the test did not test backpressure"
grep -q 'answers drained, reading its requests again' "$TEST_DIR/dmlockd.log" ||
	fail "the daemon never resumed reading the slow reader"
pass "3,000 pipelined acquire/status/release rounds ($bytes bytes) answered once each, in order"

# The daemon still serves others afterwards.
expect_status 0 "run after the pipelined client" "$DMLOCK" run -n --name p -- true
pass "the daemon serves the next client"
