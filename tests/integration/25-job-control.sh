#!/bin/bash
# 25-job-control: `dmlock run` as a job of an interactive shell on a
# terminal (a pty; python3 plays the job-control shell).  The command's
# group gets the terminal (it reads a line typed there); ^Z stops the job
# and `fg` gives the terminal back to the command; after ^Z and `bg` the
# shell keeps the terminal, also once the job has ended (dmlock must not
# take the foreground back from the shell then).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

command -v python3 >/dev/null || { echo "# python3 not installed: SKIP"; exit 77; }

start_daemon

# jobshell SCENARIO: fg or bg.  Prints "ok ..." lines, exits non-zero with
# a reason on failure; every wait is bounded.
jobshell()
{
	timeout -k 5 "$WAIT_LIMIT" python3 - "$DMLOCK" "$TEST_DIR" "$1" "$((WAIT_LIMIT - 2))" <<'PY'
import errno, fcntl, os, select, signal, sys, termios, time

dmlock, tdir, scenario, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
deadline = time.monotonic() + limit
fifo = os.path.join(tdir, "go-" + scenario)
pidfile = os.path.join(tdir, "pids", "cmd-" + scenario)
os.mkfifo(fifo)
# The command: read a line from the terminal, wait on the fifo (^Z comes
# here), then (fg only) read a second line from the terminal.
script = '''echo $$ > "$1"; read line; echo "got:$line"; read x < "$2"
if [ "$3" = fg ]; then read line; echo "got2:$line"; fi'''

def die(msg):
    sys.stderr.write("jobshell %s: %s\n" % (scenario, msg))
    os._exit(1)

def shell():
    os.setsid()
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for s in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
        signal.signal(s, signal.SIG_IGN)
    me = os.getpgrp()
    out = bytearray()

    def drain(t=0.02):
        r, _, _ = select.select([master], [], [], t)
        if r:
            try:
                out.extend(os.read(master, 4096))
            except OSError:
                pass

    def wait_for(what, cond):
        while not cond():
            if time.monotonic() > deadline:
                die("timed out waiting for " + what + "; terminal output: " + repr(bytes(out)))
            drain()

    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(slave, os.getpid())
        for s in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
            signal.signal(s, signal.SIG_DFL)
        os.dup2(slave, 0)
        os.dup2(slave, 1)
        os.close(master)
        os.close(slave)
        os.execv(dmlock, [dmlock, "run", "--name", "jc", "--", "sh", "-c", script, "sh",
                          pidfile, fifo, scenario])
    try:
        os.setpgid(job, job)    # (both sides set it, as a shell does)
    except PermissionError:
        pass    # EACCES: the child set it itself and has exec'd already
    os.tcsetpgrp(slave, job)

    status = [None]
    def job_state(flags):
        if status[0] is None:
            pid, st = os.waitpid(job, flags | os.WNOHANG)
            if pid == job:
                status[0] = st
        return status[0]

    def command_group():
        g = os.tcgetpgrp(slave)
        return g if g not in (me, job) else None

    wait_for("the command to start", lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0)
    wait_for("the command's group to get the terminal", lambda: command_group() is not None)
    os.write(master, b"hello\n")
    wait_for("the command to read the terminal", lambda: b"got:hello" in out)
    print("ok the command read a line typed at the terminal")

    # ^Z (on its way to the fifo or waiting there: a stop anywhere will do).
    os.write(master, b"\x1a")
    wait_for("the job to stop", lambda: job_state(os.WUNTRACED) is not None)
    if not os.WIFSTOPPED(status[0]):
        die("dmlock did not stop with its command: status %r" % status[0])
    status[0] = None
    if os.tcgetpgrp(slave) != job:
        die("the stopped job does not hold the terminal (%d)" % os.tcgetpgrp(slave))
    os.tcsetpgrp(slave, me)
    print("ok ^Z stopped the command and dmlock")

    if scenario == "fg":
        os.tcsetpgrp(slave, job)
        os.killpg(job, signal.SIGCONT)
        wait_for("the command's group to get the terminal back", lambda: command_group() is not None)
    else:
        os.killpg(job, signal.SIGCONT)

    # Let the command go on past the fifo.
    while True:
        try:
            w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
            if time.monotonic() > deadline:
                die("nobody opened the fifo")
            drain()
    os.write(w, b"go\n")
    os.close(w)
    if scenario == "fg":
        os.write(master, b"again\n")
        wait_for("the command to read the terminal after fg", lambda: b"got2:again" in out)
        print("ok fg gave the terminal back to the command")

    wait_for("the job to end", lambda: job_state(0) is not None)
    if not os.WIFEXITED(status[0]) or os.WEXITSTATUS(status[0]) != 0:
        die("dmlock ended with status %r" % status[0])
    if scenario == "bg":
        fg = os.tcgetpgrp(slave)
        if fg != me:
            die("the background job took the terminal from the shell (foreground %d, shell %d)" % (fg, me))
        print("ok after bg the shell kept the terminal when the job ended")
    os._exit(0)

child = os.fork()
if child == 0:
    try:
        shell()
    except Exception as e:
        die("%r" % e)
_, st = os.waitpid(child, 0)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 1)
PY
}

jobshell fg >"$TEST_DIR/fg.out" 2>&1 || fail "fg: $(cat "$TEST_DIR/fg.out")"
cat "$TEST_DIR/fg.out"
pass "a job stopped with ^Z and resumed with fg keeps working on the terminal"

jobshell bg >"$TEST_DIR/bg.out" 2>&1 || fail "bg: $(cat "$TEST_DIR/bg.out")"
cat "$TEST_DIR/bg.out"
pass "a job resumed with bg leaves the terminal to the shell"

stop_daemon
