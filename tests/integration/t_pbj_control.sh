#!/bin/bash
# t_pbj_control: the scheduler and job control, with scrubs slowed to
# 1 MiB/s per server so that each can be caught mid-way:
#  - one scheduler at a time: a second `ofs-pbj serve` exits 3 and says
#    which one runs;
#  - pause stops every server's task (no bytes read while paused, the
#    cursor kept), resume goes on;
#  - SIGKILL the scheduler mid-job (the job's state `running`, objects
#    left, right before the kill), start it again: the job ends
#    succeeded, and no object was scrubbed twice (the count of objects
#    scrubbed equals the servers' object count);
#  - SIGKILL a server mid-task and restart it: its task is started again
#    from its cursor (retries >= 1) and the job ends succeeded;
#  - a server that stays away: a scrub of it alone ends failed after the
#    bounded retries, with the reason in status; a scrub of every server
#    ends succeeded, exit 1, naming it (the others checked);
#  - cancel ends a job on every server; a `submit --wait` following it
#    exits 3;
#  - two submits at once get two jobs, both run.
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db
ok ofs mkdir /d
for i in 1 2 3 4 5 6; do
	mkrand "$T/f$i" $((MiB + i))
	ok ofs put --replicas 3 "$T/f$i" "/d/f$i"
done
total_objects=$(ofs_pbj servers --json | jq '[.servers[].objects] | add')

# status_of JOB FILTER : jq FILTER on `status JOB --json`.
status_of() { ofs_pbj status "$1" --json 2>/dev/null | jq -r "$2"; }
job_is() { [ "$(status_of "$1" .state)" = "$2" ]; }
bytes_over() { [ "$(status_of "$1" .progress.bytes_done)" -gt "$2" ]; }
all_tasks() { [ "$(status_of "$1" "[.tasks[] | select(.state == \"$2\")] | length")" = "$3" ]; }

NSERVE=0
start_serve() {
	NSERVE=$((NSERVE + 1))
	bg "$OFS_PBJ" --cluster "$(srv_addr a)" serve 2>"$T/serve.$NSERVE.err"
	SERVE=$BG
	wait_until 30 "the scheduler to take the lease" \
		grep -q "scheduler running" "$T/serve.$NSERVE.err"
}

log "one scheduler at a time"
start_serve
assert_exit 3 ofs_pbj serve
assert_contains "$(cat "$T/last.err")" "another scheduler runs" "second serve's message"

log "pause and resume"
ok ofs_pbj submit scrub --rate 1M
JOB=$(cat "$T/last.out")
wait_until 30 "job $JOB to read some bytes" bytes_over "$JOB" 0
ok ofs_pbj pause "$JOB"
wait_until 10 "every task of job $JOB to pause" all_tasks "$JOB" paused 3
b1=$(status_of "$JOB" .progress.bytes_done)
c1=$(status_of "$JOB" '[.tasks[].cursor] | sort | join(",")')
# Several polls' time, paused: nothing read, cursors kept.
sleep 1.6
assert_eq "$b1" "$(status_of "$JOB" .progress.bytes_done)" "bytes read while paused"
assert_eq "$c1" "$(status_of "$JOB" '[.tasks[].cursor] | sort | join(",")')" "cursors while paused"
assert_eq paused "$(status_of "$JOB" .state)" "job state"
ok ofs_pbj resume "$JOB"
wait_until 20 "job $JOB to read on after resume" bytes_over "$JOB" "$b1"

log "SIGKILL the scheduler mid-job, start it again"
# (mid-job: still running, with objects left to scrub, right before the kill)
assert_eq running "$(status_of "$JOB" .state)" "job $JOB's state right before the scheduler's SIGKILL"
[ "$(status_of "$JOB" .progress.objects_done)" -lt "$total_objects" ] ||
	fail "job $JOB had scrubbed every object before the scheduler's SIGKILL: not mid-job"
{ kill -KILL "$SERVE"; wait_pid "$SERVE" 10; } 2>/dev/null
start_serve          # (takes over once the dead one's lease has expired)
wait_until 120 "job $JOB to end" job_is "$JOB" succeeded
assert_eq "$total_objects" "$(status_of "$JOB" .progress.objects_done)" "objects scrubbed (none twice)"
assert_eq 0 "$(status_of "$JOB" .findings.total)" "findings"

log "SIGKILL a server mid-task and restart it"
ok ofs_pbj submit scrub --rate 1M
JOB=$(cat "$T/last.out")
wait_until 30 "job $JOB to read some bytes" bytes_over "$JOB" 0
bsid=$(srv_sid b)
kill_server b
b_retried() { [ "$(status_of "$JOB" ".tasks[] | select(.server == \"$bsid\") | .retries")" -ge 1 ]; }
wait_until 30 "the scheduler to meet the dead server (b's task retried)" b_retried
restart_same_port b
wait_until 120 "job $JOB to end" job_is "$JOB" succeeded
[ "$(status_of "$JOB" ".tasks[] | select(.server == \"$bsid\") | .retries")" -ge 1 ] ||
	fail "b's task was not retried: $(ofs_pbj status "$JOB" --json)"
assert_eq "$total_objects" "$(status_of "$JOB" .progress.objects_done)" "objects scrubbed"

log "cancel reaches every server; submit --wait following it exits 3"
"$OFS_PBJ" submit scrub --rate 1M --wait >"$T/w.out" 2>"$T/w.err" &
W=$!
BG_PIDS+=("$W")
newest() { ofs_pbj list --json | jq -r '.jobs[0].id'; }
wait_until 30 "a new job to start" bash -c "[ \"\$('$OFS_PBJ' list --json | jq -r '.jobs[0].state')\" = running ]"
JOB=$(newest)
wait_until 30 "job $JOB to read some bytes" bytes_over "$JOB" 0
ok ofs_pbj cancel "$JOB"
wait_until 10 "job $JOB to be cancelled" job_is "$JOB" cancelled
wait_until 10 "every task of job $JOB to be cancelled" all_tasks "$JOB" cancelled 3
wait_pid "$W" 30
assert_eq 3 "$REAP_ST" "exit status of the submit --wait that followed the cancelled job"
assert_exit 2 ofs_pbj resume "$JOB"
assert_exit 2 ofs_pbj cancel "$JOB"

log "two submits at once"
"$OFS_PBJ" submit scrub >"$T/s1.out" 2>&1 &
p1=$!
"$OFS_PBJ" submit scrub >"$T/s2.out" 2>&1 &
p2=$!
wait_pid "$p1" 30
[ "$REAP_ST" = 0 ] || fail "first submit: $REAP_ST $(cat "$T/s1.out")"
wait_pid "$p2" 30
[ "$REAP_ST" = 0 ] || fail "second submit: $REAP_ST $(cat "$T/s2.out")"
j1=$(cat "$T/s1.out")
j2=$(cat "$T/s2.out")
[ "$j1" != "$j2" ] || fail "two submits got the same job id $j1"
wait_until 120 "job $j1 to end" job_is "$j1" succeeded
wait_until 120 "job $j2 to end" job_is "$j2" succeeded

log "submit --wait while the scheduler runs it: follows, exit 0"
assert_exit 0 ofs_pbj submit scrub --wait --json
assert_eq succeeded "$(json "$T/last.out" .state)" "followed job's state"

log "a server that stays away: a scrub of it alone fails after bounded retries"
{ kill -TERM "$SERVE"; wait_pid "$SERVE" 30; } 2>/dev/null
kill_server c
export OFS_PBJ_MAX_RETRIES=3
assert_exit 3 ofs_pbj --cluster "$(srv_addr a)" submit scrub --server "$(srv_sid c)" --wait --json
assert_eq failed "$(json "$T/last.out" .state)" "job state"
assert_contains "$(json "$T/last.out" .reason)" "$(srv_sid c)" "the reason names the server"

log "a server down is not a failed scrub: the rest is checked, the server named, exit 1"
assert_exit 1 ofs_pbj --cluster "$(srv_addr a)" submit scrub --wait --json
assert_eq succeeded "$(json "$T/last.out" .state)" "a scrub with one server down"
assert_contains "$(json "$T/last.out" .reason)" "not every server answered: 1 server did not answer" \
	"the warning"
assert_contains "$(json "$T/last.out" .reason)" "$(srv_sid c) (since " "the warning names the server"
assert_eq 0 "$(json "$T/last.out" .findings.total)" "findings of the servers that answered"
assert_eq 2 "$(jq '[.tasks[] | select(.state == "succeeded")] | length' "$T/last.out")" \
	"tasks of the servers that answered, done"

finish
