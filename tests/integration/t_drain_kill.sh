#!/bin/bash
# t_drain_kill: a drain interrupted by SIGKILL of the source server, of a
# target server, and of the scheduler finishes after the restart with
# nothing lost and every object owned once (issue 6).
TEST_NAME=t_drain_kill
. "$(dirname "$0")/lib.sh"

NFILES=${OFS_DRAIN_KILL_FILES:-80}

cluster() {
	local c=$1 i
	start_cluster "${c}a:r1" "${c}b:r1" "${c}c:r2" "${c}d:r3"
	export OFS_PBJ_DB=$T/$c.db
	ok ofs mkdir /f
	: >"$T/$c.list"
	for i in $(seq 1 "$NFILES"); do
		mkrand "$T/$c.src$i" $((i * 1013 % 150000 + 20000))
		if [ $((i % 4)) = 0 ]; then
			echo "$T/$c.src$i /f/s$i 3 2 65536" >>"$T/$c.list"
		else
			echo "$T/$c.src$i /f/p$i 3 1 1048576" >>"$T/$c.list"
		fi
	done
	"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/$c.list" || fail "putmany"
}
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

# moved_some JOB N : the job has moved at least N objects
moved_some() {
	local n
	n=$(ofs_pbj status "$1" --json 2>/dev/null | jq '.progress.objects_done // 0' 2>/dev/null)
	[ "${n:-0}" -ge "$2" ]
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

log "SIGKILL of the source server mid-drain"
cluster k1
B=$(srv_sid k1b)
bg ofs_pbj submit drain --server "$B" --rate 4M --wait --json >"$T/drainjob.out" 2>&1
JOBP=$BG
wait_until 60 "the drain to move some objects" moved_some 1 5
kill_server k1b
sleep 1
restart_same_port k1b
wait_pid "$JOBP" 180
[ "$REAP_ST" = 0 ] || fail "the drain did not finish after the source came back (exit $REAP_ST)"
check k1
stop_cluster k1

log "SIGKILL of a target server mid-drain"
cluster k2
B=$(srv_sid k2b)
bg ofs_pbj submit drain --server "$B" --rate 4M --wait --json >"$T/drainjob.out" 2>&1
JOBP=$BG
wait_until 60 "the drain to move some objects" moved_some 1 5
kill_server k2c
sleep 1
restart_same_port k2c
wait_pid "$JOBP" 180
[ "$REAP_ST" = 0 ] || fail "the drain did not finish after the target came back (exit $REAP_ST)"
check k2
stop_cluster k2

log "SIGKILL of the scheduler mid-drain"
cluster k3
B=$(srv_sid k3b)
bg ofs_pbj submit drain --server "$B" --rate 4M --wait --json >"$T/drainjob.out" 2>&1
JOBP=$BG
wait_until 60 "the drain to move some objects" moved_some 1 5
{ kill -KILL "$JOBP"; } 2>/dev/null
wait_pid "$JOBP" 30
ok ofs_pbj wait 1 --json
assert_eq succeeded "$(json "$T/last.out" .state)" "the drain after the scheduler's restart"
check k3
finish
