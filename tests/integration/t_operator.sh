#!/bin/bash
# t_operator: what a submit accepts, it can do, and states say what is
# true (ofs-pbj(8), submit and schedule):
#  - a --path that names nothing is refused at submit, naming it, and
#    nothing is queued; a --server prefix is made the full SID;
#  - a schedule refuses, when it is added, a job type it could never run;
#  - a dry run is waited for, never left queued; list and status say
#    dry_run and what the job was asked (a drain names its server); a
#    rebalance dry run with nothing to move queues nothing;
#  - a queued job paused and resumed with no scheduler is queued, not
#    running;
#  - report takes a prefix of one of the job's servers, and says "no
#    findings" for a clean job.
. "$(dirname "$0")/lib.sh"
keep_going

start_cluster a b c d
export OFS_PBJ_DB=$T/pbj.db
A=$(srv_sid a)
ok ofs mkdir /d
mkrand "$T/f" 100000
ok ofs put --replicas 2 "$T/f" /d/f

nqueued() { ofs_pbj list --state queued --json | jq '.jobs | length'; }
njobs() { ofs_pbj list --json | jq '.jobs | length'; }

log "a --path that names nothing is refused at submit, naming it"
assert_exit 2 ofs_pbj submit scrub --path /d/nothing
assert_contains "$(cat "$T/last.err")" "--path /d/nothing: No such file or directory" "the path named"
assert_exit 2 ofs_pbj submit repair --path /d/f/under-a-file
assert_eq 0 "$(njobs)" "jobs made by refused submits"

log "a --server prefix is made the full SID at submit"
ok ofs_pbj submit scrub --server "${A:0:6}" --path /d --wait --json
assert_eq "[\"$A\"]" "$(jq -c .asked.servers "$T/last.out")" "the scrub's servers"
assert_eq succeeded "$(jq -r .state "$T/last.out")" "the scrub"
SCRUB=$(jq -r .id "$T/last.out")
assert_exit 2 ofs_pbj submit scrub --server 0000
assert_contains "$(cat "$T/last.err")" "--server 0000: no such server" "an unknown prefix"

log "a clean scrub waited for says so in one line"
ok ofs_pbj submit scrub --path /d --wait
assert_eq 1 "$(wc -l <"$T/last.out")" "lines of a clean scrub's --wait"
assert_match '^job [0-9]+: scrub succeeded, no findings: [0-9]+ objects, [0-9]+ bytes' \
	"$(cat "$T/last.out")" "a clean scrub's line"

log "each log line of a server carries its short SID"
assert_match "Z \[${A:0:8}\] INFO serving $A" "$(grep 'INFO serving' "$T/a.log")" "a's ready log line"

log "report: a prefix of one of the job's servers; a clean job says so"
ok ofs_pbj report "$SCRUB" --server "${A:0:5}"
assert_eq "job $SCRUB: no findings match" "$(cat "$T/last.out")" "report of a clean server"
ok ofs_pbj report "$SCRUB"
assert_eq "job $SCRUB: no findings" "$(cat "$T/last.out")" "report of a clean job"
assert_exit 2 ofs_pbj report "$SCRUB" --server ffff0000ffff
assert_contains "$(cat "$T/last.err")" "among the job's servers" "a prefix of no server of the job"

log "a schedule refuses what it could never run"
assert_exit 2 ofs_pbj schedule add d --cron "0 3 * * *" -- drain --server "$A"
assert_contains "$(cat "$T/last.err")" "a schedule submits scrubs" "why"
ok ofs_pbj schedule list --json
assert_eq 0 "$(jq '.schedules | length' "$T/last.out")" "schedules after the refusal"

log "a dry run is waited for and says so; nothing is left queued"
before=$(njobs)
assert_exit_in "0 1" ofs_pbj submit repair --job "$SCRUB" --dry-run
assert_contains "$(cat "$T/last.out")" "job " "a dry run prints its status"
assert_contains "$(cat "$T/last.out")" "dry run, repair, findings of job $SCRUB" "what it was asked"
assert_eq 0 "$(nqueued)" "queued jobs after a dry run"
assert_eq $((before + 1)) "$(njobs)" "a dry run is recorded"
DRY=$(ofs_pbj list --json | jq -r '.jobs | max_by(.id) | .id')
assert_eq true "$(ofs_pbj list --json | jq -r ".jobs[] | select(.id == $DRY) | .dry_run")" "list --json dry_run"
assert_eq true "$(ofs_pbj status "$DRY" --json | jq -r .dry_run)" "status --json dry_run"

log "a dry-run drain names its server"
assert_exit_in "0 1" ofs_pbj submit drain --server "${A:0:8}" --dry-run --json
assert_eq "[\"$A\"]" "$(jq -c .asked.servers "$T/last.out")" "the drain's server"
assert_eq true "$(jq -r .dry_run "$T/last.out")" "the drain's dry_run"
ok ofs_pbj list
assert_contains "$(grep " drain " "$T/last.out")" "dry run, server $A" "list names the drain's server"
assert_eq 0 "$(nqueued)" "queued jobs after a dry-run drain"

log "a rebalance dry run with nothing to move queues nothing"
before=$(njobs)
ok ofs_pbj submit rebalance --dry-run --threshold 100
assert_contains "$(cat "$T/last.out")" "nothing to move" "the plan"
assert_eq "$before" "$(njobs)" "jobs after a dry run with nothing to move"

log "a queued job paused and resumed with no scheduler is queued"
ok ofs_pbj submit scrub
Q=$(cat "$T/last.out")
ok ofs_pbj pause "$Q"
assert_eq paused "$(ofs_pbj status "$Q" --json | jq -r .state)" "paused"
ok ofs_pbj resume "$Q"
assert_eq queued "$(ofs_pbj status "$Q" --json | jq -r .state)" "resumed before it started"
ok ofs_pbj wait "$Q"
assert_eq succeeded "$(ofs_pbj status "$Q" --json | jq -r .state)" "it then runs"

finish
