#!/usr/bin/env python3
"""tests/ops/fd-clients.py: hold many connections open against a daemon.

usage: fd-clients.py unix PATH N RELEASE-FILE
       fd-clients.py tcp HOST:PORT N RELEASE-FILE
       fd-clients.py greet PATH
       fd-clients.py unix-greet PATH N RELEASE-FILE
       fd-clients.py knock HOST:PORT

The first two open N connections (non-blocking connects: the ones the
daemon has not accepted wait in its backlog), print "opened N", then poll
every 20 ms (at most 120 s) for RELEASE-FILE to exist, close them all and
exit 0.  "greet" connects once and prints the daemon's greeting line
(exit 1 if there is none within 5 s): the daemon serves.  "unix-greet"
opens N connections one after the other, reads the first line of each
(10 s at most), keeps the greeted ones open and prints "greeted G refused
R" and the first refusal line, then waits for RELEASE-FILE as above.
"knock" opens one TCP connection (2 s at most) and closes it: exit 0 if
the connection was established, 1 if not.
"""
import os
import socket
import sys
import time


def open_many(kind, where, n):
    socks = []
    for _ in range(n):
        if kind == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            target = where
        else:
            host, port = where.rsplit(":", 1)
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            target = (host, int(port))
        try:
            s.connect(target)
        except (BlockingIOError, InterruptedError):
            pass
        socks.append(s)
    return socks


def wait_release(release):
    deadline = time.monotonic() + 120
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.02)


def greet_many(path, n, release):
    kept, refused, first_refusal = [], 0, ""
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(path)
        line = s.makefile("r").readline().strip()
        if line.startswith("DMLOCK "):
            kept.append(s)
        else:
            refused += 1
            first_refusal = first_refusal or line
            s.close()
    print("greeted %d refused %d" % (len(kept), refused))
    print(first_refusal, flush=True)
    wait_release(release)
    for s in kept:
        s.close()
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "greet":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(sys.argv[2])
            line = s.makefile("r").readline()
        except OSError as e:
            print("no greeting: %s" % e)
            return 1
        print(line.strip())
        return 0 if line.startswith("DMLOCK ") else 1
    if len(sys.argv) == 3 and sys.argv[1] == "knock":
        host, port = sys.argv[2].rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=2).close()
        except OSError:
            return 1
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "unix-greet":
        return greet_many(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    if len(sys.argv) != 5 or sys.argv[1] not in ("unix", "tcp"):
        sys.stderr.write(__doc__)
        return 2
    kind, where, n, release = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    socks = open_many(kind, where, n)
    print("opened %d" % len(socks), flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.02)
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
