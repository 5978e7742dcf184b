#!/bin/bash
# t_sigterm: SIGTERM while a 100 MiB put is in flight (streamed from a
# pipe the test holds open, so that it cannot end first: checked running,
# with 8 MiB of it stored, right before the signal) stops the server
# cleanly (exit 0, within a bounded time); the put fails cleanly (`ofs
# put` exits non-zero) and after a restart the path holds the previous
# complete version, or does not exist when there was none. SIGTERM with
# stalled clients connected also ends the server cleanly. A stop held up
# by a request that cannot finish (a disk whose syncs hang) says in the
# log which request it waits for, and ends cleanly once it can.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
BIG=$((100 * MiB))

start_server a
data=$(srv_data a)
mkrand "$T/big" "$BIG"
mkrand "$T/old" $((2 * MiB + 3))

bstream_bytes() {
	find "$data/bstreams" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

# sigterm_during_put PATH PREVIOUS : PREVIOUS is the local copy of what
# PATH holds before the put, or "" when PATH does not exist.
#
# The put streams $T/big from a pipe (`ofs put -`) whose writer, a
# process of the test's, holds it open until the server has exited: the
# put cannot end while the signal is sent - its source has not ended -
# so SIGTERM lands while it is in flight, by construction. Checked: the
# server has stored at least 8 MiB of it, and the put and the pipe's
# writer are both still running, right before SIGTERM; and `ofs put`
# fails (an acknowledged put would mean it was not in flight).
sigterm_during_put() {
	local path=$1 prev=$2 base target put_pid feed_pid put_rc
	base=$(bstream_bytes)
	# In flight: the server has stored at least 8 MiB of the new file.
	target=$((base + 8 * MiB))
	rm -f "$T/put.in" "$T/put.release"
	mkfifo "$T/put.in" "$T/put.release" || fail "mkfifo $T/put.in $T/put.release"
	# (the writer: all of $T/big, then the pipe held open until the test
	# closes its end of put.release, fd 9 - no polling)
	exec 9<>"$T/put.release"
	bg bash -c 'exec 3<"$3" >"$1"; cat "$2" || exit 1; exec cat <&3' feed \
		"$T/put.in" "$T/big" "$T/put.release" 9>&-
	feed_pid=$BG
	bg bash -c 'exec timeout 300 "$1" put - "$2" <"$3"' put "$OFS_CLI" "$path" "$T/put.in" 9>&-
	put_pid=$BG
	stored_enough() { [ "$(bstream_bytes)" -ge "$target" ] || _proc_done "$put_pid"; }
	wait_until 120 "the put of $path to reach the server" stored_enough
	_proc_done "$put_pid" && fail "ofs put $path ended before SIGTERM could be sent (its source still open)"
	_proc_done "$feed_pid" && fail "the writer of $path's pipe ended before SIGTERM was sent"
	log "$path: SIGTERM with $(($(bstream_bytes) - base)) bytes of the put stored and the put still running"
	stop_server a          # SIGTERM; asserts exit 0 within STOP_TIMEOUT
	exec 9>&-              # (the writer's wait ends: the pipe closes)
	wait_pid "$put_pid" 240
	put_rc=$REAP_ST
	[ "$put_rc" != timeout ] || fail "ofs put $path did not end after the server stopped"
	[ "$put_rc" != 124 ] || fail "ofs put $path hung until timeout(1) killed it"
	log "$path: ofs put exited $put_rc after SIGTERM"
	[ "$put_rc" -ne 0 ] ||
		fail "ofs put $path succeeded though the server stopped before its source ended: it was not in flight"
	wait_pid "$feed_pid" 30

	restart_server a
	rm -f "$T/got"
	if [ -n "$prev" ]; then
		ofs get "$path" "$T/got" 2>"$T/last.err" ||
			fail "$path: a failed put lost the previous version: $(cat "$T/last.err")"
		cmp -s "$prev" "$T/got" ||
			fail "$path: ofs put failed ($put_rc) but $path no longer holds the previous version ($(stat -c %s "$T/got") bytes)"
	else
		assert_exit 3 ofs get "$path" "$T/got"
		ofs ls / >"$T/ls" || fail "ofs ls / after restart"
		grep -qE "^${path#/}/?\$" "$T/ls" && fail "$path: a failed put left a visible entry"
	fi
	# Either way the server serves, and the path can be written again.
	ok ofs put "$T/old" "$path"
	ok ofs get "$path" "$T/got2"
	assert_same_file "$T/old" "$T/got2" "$path rewritten after restart"
}

# Replacing an existing file.
ok ofs put "$T/old" /replaced
sigterm_during_put /replaced "$T/old"
# Creating a new one.
sigterm_during_put /created ""

# SIGTERM with clients that hold connections (silent, half a header, half
# a body) still ends the server cleanly in bounded time.
mkfifo "$T/stall.in"
bg sh -c 'exec python3 "$1" "$2" stall --idle 4 --seconds 240 <"$3" >"$4" 2>&1' stall \
	"$ITEST_DIR/rawframe.py" "$OFS_CLUSTER" "$T/stall.in" "$T/stall.out"
exec 9>"$T/stall.in"
stall_ready() { grep -q '^ready' "$T/stall.out"; }
wait_until 30 "the stalling client to connect" stall_ready
stop_server a
exec 9>&-
restart_server a
ok ofs get /created "$T/got3"
assert_same_file "$T/old" "$T/got3" "/created after the last restart"
stop_server a

# A stop held up by a request that cannot finish (its commit waits on a
# disk whose syncs hang: the test build's OFS_SERVER_FAULT=stall-syncs)
# says in the log what it waits for, and ends cleanly once it can.
OFS_SERVER_FAULT=stall-syncs:$T/stall start_server b
touch "$T/stall"
bg sh -c 'OFS_CLUSTER=$1 exec "$2/ofs" put "$3" /held >/dev/null 2>&1' held "$(srv_addr b)" \
	"$OFS_BIN" "$T/old"
commit_waits() { grep -q "test fault: a commit waits" "$T/b.log"; }
await 30 "b's put to reach a commit that waits" commit_waits
b_pid=${SRV_PID[b]}
kill -TERM "$b_pid"
says_where() { grep -q "shutdown:   .*: handling " "$T/b.log"; }
await 60 "b's log to say which request its stop waits for" says_where
grep -q "shutdown: still waiting for [0-9]* connection(s) after" "$T/b.log" ||
	fail "b's stop report does not say how many connections it waits for"
rm -f "$T/stall"
_reap "$b_pid" "$STOP_TIMEOUT"
SRV_PID[b]=""
[ "$REAP_ST" = 0 ] || fail "b did not stop cleanly once its request could finish: $REAP_ST"
exit 0
