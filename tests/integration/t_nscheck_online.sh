#!/bin/bash
# t_nscheck_online: the namespace check runs while clients create,
# rename, replace and remove files, and reports nothing that is not
# broken. Three servers (racks r1 r2 r3, the default orphan grace); one
# nsload process makes 10 000 namespace changes (creates, overwrites,
# renames within and across directories and onto existing names,
# removes, mkdir and rmdir) through four clients, while scrubs run one
# after another - metadata-only and full, alternating - each with --wait. Every
# scrub must end succeeded with zero findings; nsload must see no error
# and find its tree as it left it; a last scrub after the load is clean.
# Every metadata-only scrub is a join (scrubber/scrub_join.c) on every
# server: what changes under it meets no partner and is checked the old
# way, with its settling, so the join adds no finding.
. "$(dirname "$0")/lib.sh"

OPS=${OFS_NSLOAD_OPS:-10000}
start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db
ok ofs mkdir /load

bg "$OFS_ITEST_BIN/nsload" "$OFS_CLUSTER" --dir /load --ops "$OPS" --threads 4
LOAD=$BG
scrubs=0
meta=0
until _proc_done "$LOAD"; do
	if [ $((scrubs % 2)) = 0 ]; then
		mode=--metadata-only
		meta=$((meta + 1))
	else
		mode=
	fi
	assert_exit_in "0 1" ofs_pbj submit scrub $mode --wait --json    # (1: findings, shown below)
	assert_json "$T/last.out"
	JOB=$(json "$T/last.out" .id)
	assert_eq succeeded "$(json "$T/last.out" .state)" "scrub $JOB ($mode) state"
	assert_eq 0 "$(json "$T/last.out" .findings.total)" "scrub $JOB ($mode) during the load: findings $(ofs_pbj report "$JOB" --json)"
	scrubs=$((scrubs + 1))
	sleep 1        # (room for the load on two cores; the scrubs still overlap it throughout)
done
wait_pid "$LOAD" 600
assert_eq 0 "$REAP_ST" "nsload exit status"
log "$scrubs scrubs ($meta metadata-only) ran during $OPS namespace changes, no finding"
[ "$scrubs" -ge 2 ] || fail "only $scrubs scrubs ran during the load"
# Each metadata-only scrub was a join on each of the three servers (what
# changed under it was checked the old way, settling included).
joins=$(cat "$T"/a.log "$T"/b.log "$T"/c.log | grep -c "join: .* objects walked")
[ "$joins" -ge $((meta * 3)) ] || fail "$joins joins logged for $meta metadata-only scrubs on 3 servers"
log "the joins: $(cat "$T"/a.log "$T"/b.log "$T"/c.log | sed -n 's/.*join: //p' |
	awk '{ w += $1; m += $4; r += $7 } END { printf "%d objects walked, %d pointers met, %d checked the old way", w, m, r }')"
assert_exit 0 ofs_pbj submit scrub --wait --json
assert_eq 0 "$(json "$T/last.out" .findings.total)" "the scrub after the load"
finish
