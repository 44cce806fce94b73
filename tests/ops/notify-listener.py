#!/usr/bin/env python3
"""tests/ops/notify-listener.py: a stand-in for systemd's notification socket.

Binds an AF_UNIX datagram socket at argv[1] (what NOTIFY_SOCKET names) and
appends every line of every datagram it receives to the file argv[2],
flushed at once, so a test can wait for "READY=1", "WATCHDOG=1",
"STOPPING=1" to appear.  Datagrams longer than 4096 bytes are truncated.
Exits on SIGTERM/SIGINT.
"""
import os
import signal
import socket
import sys


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: notify-listener.py SOCKET LOGFILE\n")
        return 2
    path, log_path = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    # Write the log file before binding: once the socket exists, both do.
    with open(log_path, "a", encoding="utf-8") as log:
        sock.bind(path)
        try:
            while True:
                data = sock.recv(4096)
                for line in data.decode("utf-8", "replace").splitlines():
                    log.write(line + "\n")
                log.write("--\n")  # datagram boundary
                log.flush()
        finally:
            sock.close()
            os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
