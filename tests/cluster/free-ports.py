#!/usr/bin/env python3
# free-ports.py N: print N distinct TCP ports on 127.0.0.1 that could be
# bound just now, from below the usual ephemeral range (20000-32000),
# separated by spaces.  Shared by tests/cluster/lib-cluster.sh and the
# tests in tests/ops that start peer listeners.
import random, socket, sys

n = int(sys.argv[1])
got = []
while len(got) < n:
    p = random.randint(20000, 32000)
    if p in got:
        continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))
        got.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, got)))
