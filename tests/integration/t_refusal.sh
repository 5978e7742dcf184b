#!/bin/bash
# t_refusal: a refusal ends the attempt; nothing spins on one.
# A scheduler (`ofs-pbj serve`) whose admin certificate was revoked after
# it queued a job and added a schedule must fail each job at once, with
# the reason in the job's status, and go on idling - not take the same
# job again and again. Its output and the servers' logs hold a bounded
# number of refusal lines however long it runs: counted over a wait that
# ends on events (jobs failed, the catch-up poll refused several times),
# not over a time. `submit --wait` as the revoked admin fails its job the
# same way and exits 3.
. "$(dirname "$0")/lib.sh"

start_cluster a:r1 b:r2
export OFS_PBJ_DB=$T/pbj.db OFS_PBJ_CRON_UNIT_S=1
echo "some bytes" >"$T/f"
ok ofs put --replicas 2 "$T/f" /f

issue_identity ops --admin ops
ops() { ofs_pbj --identity "$T/id/ops" "$@"; }
ok ops submit scrub --json
Q=$(json "$T/last.out" .id)
ok ops schedule add every --cron "* * * * *" -- scrub
ok ofs_pbj ca revoke "$CA" "$T/id/ops/cert.pem"

# state JOB: the job's state, read from the job store as the other admin
state() { ofs_pbj status "$1" --json 2>/dev/null | jq -r .state; }
failed_with() {
	[ "$(state "$1")" = failed ] &&
		ofs_pbj status "$1" --json | jq -e '.reason | test("certificate revoked")' >/dev/null
}
# (the schedule's first job: the first after job $Q, which only it submits)
sched_job() { ofs_pbj list --json | jq -r --argjson q "$Q" '[.jobs[].id | select(. > $q)] | min // empty'; }
sched_failed() { local s; s=$(sched_job) && [ -n "$s" ] && failed_with "$s"; }
# refusals FILE...: the lines that say a certificate was revoked
refusals() { cat "$@" 2>/dev/null | grep -ci 'certificate revoked'; }

log "serve as the revoked admin: the queued job fails at once, with the reason"
bg "$OFS_PBJ" --identity "$T/id/ops" serve 2>"$T/serve.err"
SERVE=$BG
wait_until 30 "job $Q to end failed with the reason (it is $(state "$Q"))" failed_with "$Q"
wait_until 30 "the schedule's job to end failed with the reason" sched_failed
assert_eq every "$(ofs_pbj status "$(sched_job)" --json | jq -r .schedule)" "the schedule's job"
ok ofs_pbj schedule rm every
log "serve goes on: a job queued later fails too, and the catch-up poll is refused and waits"
ok ofs_pbj submit scrub --json
L=$(json "$T/last.out" .id)
wait_until 30 "job $L to end failed with the reason (it is $(state "$L"))" failed_with "$L"
# (the catch-up poll, backing off, says each time it is refused: wait
# for the second time, an event)
catchup_again() { grep -q 'catch-up: .*certificate revoked (refused [2-9] times' "$T/serve.err"; }
wait_until 60 "serve to say the catch-up poll was refused again" catchup_again
kill -TERM "$SERVE"
wait_pid "$SERVE" 30
assert_eq 0 "$REAP_ST" "serve's exit status after SIGTERM"
n=$(refusals "$T/serve.err")
[ "$n" -ge 3 ] || fail "serve said 'certificate revoked' $n times, expected one per failed job at least: $(head -c 600 "$T/serve.err")"
[ "$n" -lt 20 ] || fail "serve said 'certificate revoked' $n times: $(sort "$T/serve.err" | uniq -c | sort -rn | head -5)"
assert_eq 0 "$(ofs_pbj list --json | jq '[.jobs[] | select(.state == "queued")] | length')" \
	"jobs left queued"

log "a client refused again and again: the server writes it once in a while, with a count"
refused_again() {
	! "$OFS_CLI" --identity "$T/id/ops" ls / >/dev/null 2>&1 &&
		grep -q 'certificate revoked (and [0-9]* more like it in the last' "$T/a.log"
}
wait_until 60 "a's log to count the refusals it did not write" refused_again
n=$(refusals "$T/a.log" "$T/b.log")
[ "$n" -lt 20 ] || fail "the servers logged $n refusals: $(grep -hi 'revoked' "$T/a.log" "$T/b.log" | tail -5)"
k=$(grep -o 'certificate revoked (and [0-9]* more' "$T/a.log" | awk '{ s += $4 } END { print s + 0 }')
[ "$k" -ge 3 ] || fail "a's log counts $k refusals it did not write, expected several"

log "submit --wait as the revoked admin: the job fails at once, exit 3"
assert_exit 3 ops submit scrub --wait --json
W=$(ofs_pbj list --json | jq -r '[.jobs[].id] | max')
failed_with "$W" || fail "job $W (submit --wait) is $(state "$W"), expected failed with the reason"
assert_contains "$(cat "$T/last.err" "$T/last.out")" "certificate revoked" "submit --wait says why"

finish
