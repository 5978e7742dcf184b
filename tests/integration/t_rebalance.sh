#!/bin/bash
# t_rebalance: a fifth server joins, rebalance brings every server within
# the threshold moving close to the least bytes (issue 6); then every file
# reads back and a scrub is clean (exit 0, succeeded, no findings).
TEST_NAME=t_rebalance
. "$(dirname "$0")/lib.sh"

NFILES=${OFS_REBALANCE_FILES:-300}
# Small capacities, so that the fractions mean something on one disk.
export EXTRA_RUN_ARGS="--capacity 8M"

start_cluster "a:r1" "b:r1" "c:r2" "d:r3"
export OFS_PBJ_DB=$T/pbj.db
ok ofs mkdir /f
: >"$T/list"
for i in $(seq 1 "$NFILES"); do
	mkrand "$T/src$i" $((i * 97 % 50000 + 1))
	if [ $((i % 5)) = 0 ]; then
		echo "$T/src$i /f/s$i 3 2 4096" >>"$T/list"
	else
		echo "$T/src$i /f/p$i 3 1 1048576" >>"$T/list"
	fi
done
"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/list" || fail "putmany"
name_of() { if [ $(($1 % 5)) = 0 ]; then echo "/f/s$1"; else echo "/f/p$1"; fi; }

log "bad input"
assert_exit 2 ofs_pbj submit rebalance --threshold 0
assert_exit 2 ofs_pbj submit rebalance --threshold 101
assert_exit 2 ofs_pbj submit rebalance --threshold ten
assert_exit 2 ofs_pbj submit rebalance --server "$(srv_sid a)"

log "balanced already: nothing to move"
ok ofs_pbj submit rebalance --wait --json
assert_eq succeeded "$(json "$T/last.out" .state)" "rebalance of a balanced cluster"
assert_eq 0 "$(json "$T/last.out" .progress.bytes_done)" "bytes moved in a balanced cluster"

log "a fifth server joins"
start_server e --attr rack=r4 --peer "$(srv_addr a)"
for s in a b c d e; do
	wait_until 30 "$s to list all 5 servers as up" sees_up "$s" 5
done
ofs_pbj servers --json >"$T/before.json"
# The least bytes any plan must move, from the usage before (plan.h).
MIN=$(jq '[.servers[] | select(.state == "in")] as $s |
	(($s | map(.bytes_used) | add) / ($s | map(.capacity) | add)) as $m |
	([$s[] | .bytes_used - ($m + 0.10) * .capacity | select(. > 0)] | add // 0) as $over |
	([$s[] | ($m - 0.10) * .capacity - .bytes_used | select(. > 0)] | add // 0) as $under |
	[$over, $under] | max | floor' "$T/before.json")
log "the least that must move: $MIN bytes"
[ "$MIN" -gt 1000000 ] || fail "the fifth server should need over 1 MB, the plan says $MIN"

log "dry run: the plan and its bytes, nothing moves"
ok ofs_pbj submit rebalance --dry-run --wait
assert_contains "$(cat "$T/last.out")" "bytes to move:"
assert_contains "$(cat "$T/last.out")" "$(srv_sid e)"
ofs_pbj servers --json >"$T/dry.json"
assert_eq 0 "$(jq --arg s "$(srv_sid e)" '.servers[] | select(.sid == $s) | .bytes_used' "$T/dry.json")" \
	"bytes on e after the dry run"

log "the rebalance, paced: paused, resumed, its scheduler SIGKILLed and restarted"
# (the job's id: one more than the last before it is submitted)
JOB=$(ofs_pbj list --json | jq '[.jobs[].id] | max')
JOB=$((JOB + 1))
bg ofs_pbj submit rebalance --rate 512K --wait --json >"$T/bg.out" 2>&1
SCHED=$BG
moved_some() {
	local n
	n=$(ofs_pbj status "$JOB" --json 2>/dev/null | jq '.progress.bytes_done // 0' 2>/dev/null)
	[ "${n:-0}" -gt 0 ]
}
all_paused() {
	ofs_pbj status "$JOB" --json 2>/dev/null |
		jq -e '[.tasks[] | select(.state != "succeeded")] | length > 0 and all(.state == "paused")' >/dev/null
}
wait_until 60 "the rebalance to move some bytes" moved_some
ok ofs_pbj pause "$JOB"
wait_until 30 "the moving tasks to pause" all_paused
sleep 0.5
B1=$(ofs_pbj status "$JOB" --json | jq .progress.bytes_done)
sleep 1.5
B2=$(ofs_pbj status "$JOB" --json | jq .progress.bytes_done)
assert_eq "$B1" "$B2" "bytes moved while paused"
ok ofs_pbj resume "$JOB"
{ kill -KILL "$SCHED"; } 2>/dev/null
wait_pid "$SCHED" 30
ok ofs_pbj wait "$JOB" --json
cp "$T/last.out" "$T/rebalance.json"
assert_eq succeeded "$(json "$T/rebalance.json" .state)" "rebalance state"
MOVED=$(json "$T/rebalance.json" .progress.bytes_done)
log "moved $MOVED bytes (least: $MIN)"
awk -v m="$MOVED" -v n="$MIN" 'BEGIN { exit !(m >= n && m <= 1.25 * n) }' ||
	fail "moved $MOVED bytes; the least is $MIN (at most 1.25x allowed)"
ofs_pbj servers --json >"$T/after.json"
jq -e '[.servers[] | select(.state == "in")] as $s |
	(($s | map(.bytes_used) | add) / ($s | map(.capacity) | add)) as $m |
	all($s[]; ((.bytes_used / .capacity) - $m) | fabs <= 0.10)' "$T/after.json" >/dev/null ||
	fail "a server is not within 10 points of the mean: $(jq -c '[.servers[] | [.sid[0:6], .bytes_used, .capacity]]' "$T/after.json")"

log "every file reads back, a scrub is clean"
for i in $(seq 1 "$NFILES"); do
	ofs get "$(name_of "$i")" "$T/got" || { fail "get $(name_of "$i") after the rebalance"; continue; }
	cmp -s "$T/src$i" "$T/got" || fail "$(name_of "$i") reads back different after the rebalance"
done
# (exit 0, state succeeded, no findings, and no repair job in the store)
clean_scrub_no_repair "$T/pbj.db"

log "balanced now: a second rebalance moves nothing"
ok ofs_pbj submit rebalance --wait --json
assert_eq 0 "$(json "$T/last.out" .progress.bytes_done)" "bytes moved by a second rebalance"
finish
