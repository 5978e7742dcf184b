#!/bin/bash
# t_health: `ofs-pbj health` names each check it plants (pbj/health.h):
#  - a healthy cluster: "ok", no checks, exit 0, and no job database made;
#  - a byte flipped in a copy no reader touches, a scrub: the scrub's
#    finding not repaired is a warning (findings_unrepaired, exit 1),
#    gone once a repair of that job mended it;
#  - a job queued with no scheduler for a minute (its time set back in
#    the database) is stuck, with why (jobs_stuck);
#  - a server killed: servers_down names it, an error (exit 3);
#  - --json is the document the contract gives, --detail lists items.
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a b c
export OFS_PBJ_DB=$T/pbj.db
mkrand "$T/f" $((MiB + 5))
ok ofs put --replicas 3 "$T/f" /f

log "a healthy cluster"
ok ofs_pbj health
assert_eq "health: ok" "$(cat "$T/last.out")" "health of a healthy cluster"
[ -e "$OFS_PBJ_DB" ] && fail "health made a job database"
ok ofs_pbj health --json
assert_eq '{"status":"ok","checks":[]}' "$(jq -c . "$T/last.out")" "health --json"

log "a finding not repaired is a warning, until a repair mends it"
DF=$(ofs stat --json /f | jq -r '.dfiles[0].oid')
SECOND=$(srv_by_sid "$(ofs stat --json /f | jq -r '.dfiles[0].sids[1]')")
damage_copy "$SECOND" "$DF" flip 4321
assert_exit 1 ofs_pbj submit scrub --wait --json
SCRUB=$(jq .id "$T/last.out")
assert_exit 1 ofs_pbj health --json
assert_eq warn "$(jq -r .status "$T/last.out")" "status with a finding"
assert_eq "findings_unrepaired 1 $DF" \
	"$(jq -r '.checks[] | select(.name == "findings_unrepaired") | "\(.name) \(.count) \(.items[0].oid)"' "$T/last.out")" \
	"the check names the finding"
assert_exit 1 ofs_pbj health --detail
assert_contains "$(cat "$T/last.out")" "ofs-pbj submit repair --job $SCRUB" "the warning says what to do"
assert_contains "$(cat "$T/last.out")" "\"oid\":\"$DF\"" "--detail lists the finding"
ok ofs_pbj submit repair --job "$SCRUB" --wait
ok ofs_pbj health
assert_eq "health: ok" "$(cat "$T/last.out")" "health once repaired"

log "a job queued a minute with no scheduler is stuck"
ok ofs_pbj submit scrub
Q=$(cat "$T/last.out")
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE jobs SET submitted = submitted - 120000000000 WHERE id = ?", (int(sys.argv[2]),))
db.commit()' "$OFS_PBJ_DB" "$Q" || fail "cannot set job $Q's time back"
assert_exit 1 ofs_pbj health --json
assert_contains "$(jq -r '.checks[] | select(.name == "jobs_stuck") | .items[0].why' "$T/last.out")" \
	"no scheduler runs" "why the job is stuck"
ok ofs_pbj cancel "$Q"

log "a server down is an error, named"
kill_server c
assert_exit 3 ofs_pbj health --json
assert_eq error "$(jq -r .status "$T/last.out")" "status with a server down"
assert_eq "$(srv_sid c)" "$(jq -r '.checks[] | select(.name == "servers_down") | .items[0].sid' "$T/last.out")" \
	"the server down"
assert_exit 3 ofs_pbj health
assert_match "error servers_down: 1 server in service does not answer: $(srv_sid c)" \
	"$(cat "$T/last.out")" "the text form"
finish
