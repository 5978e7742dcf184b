#!/bin/bash
# t_drain_kill: a drain interrupted by SIGKILL of the source server, of a
# target server, and of the scheduler finishes after the restart with
# nothing lost and every object owned once (issue 6).
TEST_NAME=t_drain_kill
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

NFILES=${OFS_DRAIN_KILL_FILES:-80}

# cluster N : a fresh four-server cluster under $T/cN with files on it.
kill_size() { echo $(($1 * 1013 % 150000 + 20000)); }
cluster() { cluster_with_files "$1" "$NFILES" kill_size "3 2 65536"; }

# out_everywhere C : every server of cluster C lists Cb as out
out_everywhere() {
	local i st
	for i in a b c d; do
		st=$("$OFS_PBJ" --cluster "$(srv_addr "$1$i")" servers --json 2>/dev/null |
			jq -r --arg s "$(srv_sid "${1}b")" '.servers[] | select(.sid == $s) | .state')
		[ "$st" = out ] || return 1
	done
}
name_of() { if [ $(($1 % 4)) = 0 ]; then echo "/f/s$1"; else echo "/f/p$1"; fi; }

# moved_some JOB N : the job has moved at least N objects. The drain's
# process ($JOBP) ending first fails the test at once, with its output.
moved_some() {
	local n
	n=$(ofs_pbj status "$1" --json 2>/dev/null | jq '.progress.objects_done // 0' 2>/dev/null)
	[ "${n:-0}" -ge "$2" ] && return 0
	! _proc_done "$JOBP" ||
		fail "the drain (ofs-pbj submit drain --wait) ended before it moved $2 objects: $(head -c 1500 "$T/drainjob.out")"
	return 1
}

# check C : the drained server (Cb) holds nothing, is out, every file reads
# back, and a scrub (orphans, dangling pointers, handles, back references
# on every copy) is clean.
check() {
	local c=$1 i
	assert_eq 0 "$("$OFS_SERVER" tool --data "$(srv_data "${c}b")" list --json | jq '.objects | length')" \
		"objects left on ${c}b"
	wait_until 30 "every server to list ${c}b as out" out_everywhere "$c"
	for i in $(seq 1 "$NFILES"); do
		ofs get "$(name_of "$i")" "$T/$c.got" || { fail "get $(name_of "$i")"; continue; }
		cmp -s "$T/$c.src$i" "$T/$c.got" || fail "$(name_of "$i") reads back different"
	done
	ofs_pbj submit scrub --wait --json >"$T/$c.scrub" 2>&1
	if [ "$(json "$T/$c.scrub" .findings.total)" != 0 ]; then
		fail "scrub findings after the drain: $(ofs_pbj report "$(json "$T/$c.scrub" .id)" | head -c 1500)"
	fi
}

# start_drain C : cluster C with its files, a drain of Cb running in the
# background that has moved some objects; $JOBP is the ofs-pbj process
# that submitted it and runs it (the program itself, not a shell around
# it, so that a SIGKILL to $JOBP kills the scheduler).
start_drain() {
	cluster "$1"
	bg "$OFS_PBJ" submit drain --server "$(srv_sid "${1}b")" --rate 4M --wait --json \
		>"$T/drainjob.out" 2>&1
	JOBP=$BG
	wait_until 60 "the drain to move some objects" moved_some 1 5
}

# kill_and_back C NAME WHAT : SIGKILL server C+NAME, start it again where it
# was; the drain finishes; the cluster is checked and stopped.
kill_and_back() {
	kill_server "$1$2"
	restart_same_port "$1$2"
	wait_pid "$JOBP" 180
	[ "$REAP_ST" = 0 ] || fail "the drain did not finish after the $3 came back (exit $REAP_ST)"
	check "$1"
	stop_cluster "$1"
}

log "SIGKILL of the source server mid-drain"
start_drain k1
kill_and_back k1 b source

log "SIGKILL of a target server mid-drain"
start_drain k2
kill_and_back k2 c target

log "SIGKILL of the scheduler mid-drain"
start_drain k3
[ "$(readlink -f "/proc/$JOBP/exe")" = "$(readlink -f "$OFS_PBJ")" ] ||
	fail "the drain's process $JOBP is $(readlink -f "/proc/$JOBP/exe"), not ofs-pbj: the kill would miss the scheduler"
{ kill -KILL "$JOBP"; } 2>/dev/null
wait_pid "$JOBP" 30
assert_eq 137 "$REAP_ST" "exit status of the killed scheduler (SIGKILL)"
ok ofs_pbj wait 1 --json
assert_eq succeeded "$(json "$T/last.out" .state)" "the drain after the scheduler's restart"
check k3
finish
