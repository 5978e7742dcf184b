#!/bin/bash
# t_pbj_schedule: schedules. With OFS_PBJ_CRON_UNIT_S=1 a cron "minute"
# lasts a second (a test knob, documented in ofs-pbj(8)), so
# "* * * * *" is due every second:
#  - `serve` submits the schedule's job when it is due, marked with the
#    schedule's name;
#  - not again while the previous job from the same schedule has not
#    ended (the jobs are slowed to 1 MiB/s: several seconds each);
#  - again once it has;
#  - schedule list shows it, schedule rm removes it, bad input exits 2.
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db OFS_PBJ_CRON_UNIT_S=1
ok ofs mkdir /d
for i in 1 2 3; do
	mkrand "$T/f$i" $((MiB + i))
	ok ofs put --replicas 3 "$T/f$i" "/d/f$i"
done

log "bad schedules are refused"
assert_exit 2 ofs_pbj schedule add x --cron "61 * * * *" -- scrub
assert_exit 2 ofs_pbj schedule add x --cron "* * *" -- scrub
assert_exit 2 ofs_pbj schedule add x --cron "* * * * *" -- frobnicate
assert_exit 2 ofs_pbj schedule add x --cron "* * * * *"
assert_exit 2 ofs_pbj schedule add x --cron "* * * * *" -- scrub --wait
assert_exit 2 ofs_pbj schedule rm nothing

ok ofs_pbj schedule add every --cron "* * * * *" -- scrub --rate 1M
assert_exit 2 ofs_pbj schedule add every --cron "0 3 * * *" -- scrub
ok ofs_pbj schedule list --json
assert_eq every "$(json "$T/last.out" '.schedules[0].name')" "schedule name"
assert_eq '["scrub","--rate","1M"]' "$(json "$T/last.out" '.schedules[0].args | tojson')" "schedule args"

log "serve submits it when due, and not again while its job runs"
bg "$OFS_PBJ" --cluster "$(srv_addr a)" serve 2>"$T/serve.err"
jobs_json() { ofs_pbj list --json 2>/dev/null; }
njobs() { jobs_json | jq '.jobs | length'; }
first_done() { [ "$(jobs_json | jq -r '[.jobs[] | select(.id == 1)][0].state')" = succeeded ]; }
wait_until 30 "the schedule to submit a job" bash -c "[ \$('$OFS_PBJ' list --json | jq '.jobs | length') -ge 1 ]"
# While job 1 has not ended, the schedule is due every second but must
# not submit: watch it over several seconds.
while ! first_done; do
	n=$(jobs_json | jq '[.jobs[] | select(.state != "succeeded")] | length')
	first_done && break
	[ "$n" -le 1 ] || fail "a second job was submitted while the first ran: $(jobs_json)"
	sleep 0.3
done
assert_contains "$(cat "$T/serve.err")" "still runs; not submitting again" "serve says why it skipped"
assert_eq every "$(ofs_pbj status 1 --json | jq -r .schedule)" "the job names its schedule"
log "submitted again once the previous one ended"
wait_until 30 "a second job from the schedule" bash -c "[ \$('$OFS_PBJ' list --json | jq '.jobs | length') -ge 2 ]"

log "schedule rm"
ok ofs_pbj schedule rm every
ok ofs_pbj schedule list --json
assert_eq 0 "$(json "$T/last.out" '.schedules | length')" "schedules left"

finish
