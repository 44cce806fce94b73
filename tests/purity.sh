#!/bin/bash
# tests/purity.sh: the engine boundary.  dmlockd/engine must not include
# event2/, openssl/, systemd/ or sys/socket.h, and its objects must not call
# clocks, randomness, sockets or printf/syslog (nm -u).  If this ever needs
# an exception, the boundary has leaked.
set -u
src=${top_srcdir:-$(dirname "$0")/..}
build=${top_builddir:-.}
fail=0

bad_includes=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](event2/|openssl/|systemd/|sys/socket\.h)' \
	"$src"/dmlockd/engine/*.[ch] 2>/dev/null)
if [ -n "$bad_includes" ]; then
	echo "purity: forbidden include in dmlockd/engine:"
	echo "$bad_includes"
	fail=1
fi

shopt -s nullglob
objs=("$build"/dmlockd/engine/.libs/*.o)
[ ${#objs[@]} -gt 0 ] || objs=("$build"/dmlockd/engine/*.o)
if [ ${#objs[@]} -eq 0 ]; then
	echo "purity: no engine objects under $build/dmlockd/engine (build libdmengine.la first)"
	exit 1
fi
forbidden='^(clock_gettime|gettimeofday|time|rand|random|srand|srandom|socket|send|sendto|sendmsg|recv|recvfrom|recvmsg|printf|fprintf|vprintf|syslog|vsyslog|getrandom|arc4random)(@.*)?$'
bad_syms=$(nm -u "${objs[@]}" 2>/dev/null | awk '{print $NF}' | grep -E "$forbidden" | sort -u)
if [ -n "$bad_syms" ]; then
	echo "purity: engine objects call forbidden functions:"
	echo "$bad_syms"
	fail=1
fi
# The check above must be able to fail: a call to time() would be found.
if ! printf 'U time\n' | awk '{print $NF}' | grep -qE "$forbidden"; then
	echo "purity: self-test of the symbol pattern failed"
	fail=1
fi
[ $fail -eq 0 ] && echo "purity: ${#objs[@]} engine objects clean"
exit $fail
