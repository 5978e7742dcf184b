#!/bin/bash
# t_drain: drain a server while clients read and write (a client loop's
# puts and gets, each checked, at least one whole round of them made
# while the job store shows the drain running), ok-to-stop, the
# refusals, undrain (issue 6).
TEST_NAME=t_drain
. "$(dirname "$0")/lib.sh"

KiB=1024
NFILES=${OFS_DRAIN_FILES:-300}

start_cluster "a:r1" "b:r1" "c:r2" "d:r3"
export OFS_PBJ_DB=$T/pbj.db
ok ofs mkdir /f
: >"$T/list"
for i in $(seq 1 "$NFILES"); do
	mkrand "$T/src$i" $((i * 97 % 50000 + 1))
	if [ $((i % 5)) = 0 ]; then
		echo "$T/src$i /f/s$i 3 2 4096" >>"$T/list"    # striped
	else
		echo "$T/src$i /f/p$i 3 1 1048576" >>"$T/list"
	fi
done
"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/list" || fail "putmany"
name_of() { if [ $(($1 % 5)) = 0 ]; then echo "/f/s$1"; else echo "/f/p$1"; fi; }

B=$(srv_sid b)
objects_on() { "$OFS_SERVER" tool --data "$(srv_data "$1")" list --json | jq '.objects | length'; }
NB=$(objects_on b)
log "server b holds $NB objects"
[ "$NB" -gt 100 ] || fail "server b holds only $NB objects"

log "bad input"
assert_exit 2 ofs_pbj submit drain
assert_exit 2 ofs_pbj submit drain --server nothex
assert_exit 2 ofs_pbj submit drain --server 0123456789abcdef0123456789abcdef
assert_exit 2 ofs_pbj submit drain --server "$B" --path /f
assert_exit 2 ofs_pbj ok-to-stop
assert_exit 2 ofs_pbj ok-to-stop zzzz

log "ok-to-stop before the drain: 3-copy files need all 3 (write confidence 3)"
assert_exit 1 ofs_pbj ok-to-stop "$B"

log "dry run: the plan, nothing changes"
ok ofs_pbj submit drain --server "$B" --dry-run --wait --json
cp "$T/last.out" "$T/dry.json"
assert_eq succeeded "$(json "$T/dry.json" .state)" "dry run state"
DRY=$(json "$T/dry.json" .id)
ofs_pbj report "$DRY" --json >"$T/dry.report"
assert_eq "$NB" "$(jq '[.findings[] | select(.kind == "move")] | length' "$T/dry.report")" "moves planned"
assert_eq "$NB" "$(objects_on b)" "objects on b after the dry run"
ofs_pbj servers --json >"$T/servers.json"
assert_eq in "$(jq -r --arg s "$B" '.servers[] | select(.sid == $s) | .state' "$T/servers.json")" \
	"b's state after the dry run"

log "the drain, while a client writes and reads back"
ok ofs mkdir /live
# A round of the client loop: a put of /live/x, a get of it and of
# /f/p1, each checked. A round between two looks at the job store that
# both saw a drain job running (`ofs-pbj list`) was made while the drain
# ran: its number goes into $T/live.during.
drain_running() {
	"$OFS_PBJ" list --json 2>/dev/null |
		jq -e '[.jobs[] | select(.type == "drain" and .state == "running")] | length == 1' >/dev/null
}
: >"$T/live.during"
(
	set +e
	n=0
	while [ ! -e "$T/stop-loop" ]; do
		n=$((n + 1))
		before=0
		drain_running && before=1
		echo "version $n $(head -c 3000 /dev/urandom | base64 -w0)" >"$T/live.$n"
		"$OFS_CLI" put "$T/live.$n" /live/x 2>>"$T/loop.err" || { echo "put $n failed" >>"$T/loop.err"; exit 1; }
		"$OFS_CLI" get /live/x "$T/live.got" 2>>"$T/loop.err" || { echo "get $n failed" >>"$T/loop.err"; exit 1; }
		cmp -s "$T/live.$n" "$T/live.got" || { echo "get $n returned other data" >>"$T/loop.err"; exit 1; }
		"$OFS_CLI" get /f/p1 "$T/p1.got" 2>>"$T/loop.err" || { echo "get /f/p1 failed" >>"$T/loop.err"; exit 1; }
		cmp -s "$T/src1" "$T/p1.got" || { echo "/f/p1 read back wrong" >>"$T/loop.err"; exit 1; }
		[ "$before" = 1 ] && drain_running && echo "$n" >>"$T/live.during"
		echo "$n" >"$T/live.last"
		rm -f "$T/live.$((n - 1))"
	done
	exit 0
) &
LOOP=$!
BG_PIDS+=("$LOOP")
ok ofs_pbj submit drain --server "$B" --wait --json
ofs_pbj report 2 >&2
cp "$T/last.out" "$T/drain.json"
assert_eq succeeded "$(json "$T/drain.json" .state)" "drain state"
# (the live directory made since may have put objects there too)
[ "$(json "$T/drain.json" .progress.objects_done)" -ge "$NB" ] ||
	fail "the drain moved $(json "$T/drain.json" .progress.objects_done) objects, b held $NB"
touch "$T/stop-loop"
wait_pid "$LOOP" 60
[ "$REAP_ST" = 0 ] || { cat "$T/loop.err" >&2; fail "the client loop saw an error during the drain ($REAP_ST)"; }
[ -s "$T/live.last" ] || fail "the client loop did not finish one round"
LAST=$(cat "$T/live.last")
DURING=$(wc -l <"$T/live.during")
log "the client loop ran $LAST rounds, $DURING of them wholly while the drain ran"
[ "$DURING" -ge 1 ] ||
	fail "no round of the client loop (a put and two gets) was made while the drain ran: the job store showed no drain running both before and after any of its $LAST rounds"
ok ofs get /live/x "$T/live.final"
assert_same_file "$T/live.$LAST" "$T/live.final"

ofs_pbj servers --json >"$T/servers.json"
assert_eq out "$(jq -r --arg s "$B" '.servers[] | select(.sid == $s) | .state' "$T/servers.json")" \
	"b's state after the drain"
assert_eq 0 "$(objects_on b)" "objects left on b"
ok ofs_pbj ok-to-stop "$B"

log "b stopped: every file reads back, a scrub is clean"
stop_server b
for i in $(seq 1 "$NFILES"); do
	ofs get "$(name_of "$i")" "$T/got" || { fail "get $(name_of "$i") after the drain"; continue; }
	cmp -s "$T/src$i" "$T/got" || fail "$(name_of "$i") reads back different after the drain"
done
assert_exit 0 ofs_pbj submit scrub --wait --json
cp "$T/last.out" "$T/scrub.json"
assert_eq 0 "$(json "$T/scrub.json" .findings.total)" "findings of the scrub after the drain"
ofs stat --json /f/p2 >"$T/stat.json"
if jq -r '.sids[], .dfiles[].sids[]' "$T/stat.json" | grep -qx "$B"; then
	fail "a handle still names the drained server"
fi

log "ok-to-stop names the only copy of a file"
mkrand "$T/one" 5000
ok ofs put --replicas 1 "$T/one" /one
ONE_DF=$(ofs stat --json /one | jq -r '.dfiles[0].oid')
ONE_SID=$(ofs stat --json /one | jq -r '.dfiles[0].sids[0]')
assert_exit 1 ofs_pbj ok-to-stop "$ONE_SID"
cp "$T/last.out" "$T/okstop.out"
assert_contains "$(cat "$T/okstop.out")" "$ONE_DF"
assert_contains "$(cat "$T/okstop.out")" "not ok to stop"
ofs_pbj ok-to-stop "$ONE_SID" --json >"$T/okstop.json"
assert_eq false "$(json "$T/okstop.json" .ok)" "ok-to-stop --json ok"
jq -e --arg o "$ONE_DF" '.first[] | select(.oid == $o)' "$T/okstop.json" >/dev/null ||
	fail "ok-to-stop --json does not name $ONE_DF"

log "a drain that cannot keep 3 copies is refused"
C=$(srv_sid c)
assert_exit 2 ofs_pbj submit drain --server "$C"
cat "$T/last.out" "$T/last.err" >"$T/refused.out"
assert_contains "$(cat "$T/refused.out")" "refused"
ofs_pbj servers --json >"$T/servers.json"
assert_eq in "$(jq -r --arg s "$C" '.servers[] | select(.sid == $s) | .state' "$T/servers.json")" \
	"c's state after the refusal"

log "a drain the others have no room for is refused"
# A cluster of its own whose servers may hold 2 MiB each, all full.
EXTRA_RUN_ARGS="--capacity 2M"
OFS_PBJ_DB=$T/space.db
start_cluster "sa:r1" "sb:r1" "sc:r2" "sd:r3"
ok ofs mkdir /g
mkrand "$T/half" $((512 * 1024))
# (16 files, 3 copies: every server holds about 6 MiB, so none has room)
for i in $(seq 1 16); do ok ofs put --replicas 3 "$T/half" "/g/h$i"; done
SB=$(srv_sid sb)
assert_exit 2 ofs_pbj submit drain --server "$SB"
assert_contains "$(cat "$T/last.out" "$T/last.err")" "bytes free"
ofs_pbj servers --json >"$T/space.json"
assert_eq in "$(jq -r --arg s "$SB" '.servers[] | select(.sid == $s) | .state' "$T/space.json")" \
	"sb's state after the refusal"
stop_cluster s
EXTRA_RUN_ARGS=""
OFS_PBJ_DB=$T/pbj.db
use_server a

log "undrain: b back in service"
restart_server b
ok ofs_pbj server set "$B" --state in
ofs_pbj servers --json >"$T/servers.json"
assert_eq in "$(jq -r --arg s "$B" '.servers[] | select(.sid == $s) | .state' "$T/servers.json")" \
	"b's state after server set --state in"
finish
