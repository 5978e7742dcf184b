#!/bin/bash
# t_rolling: the cluster stays available through a rolling restart
# ("stay available through restarts"). Three servers a:r1 b:r2 c:r3; a
# client writes the whole time into /roll (`ofs put --replicas 3
# --confidence 2`, a few KB each, every fourth ~200 KB, every fifth put
# replacing a file already written) while each server in turn is stopped
# and started again, two rounds: SIGTERM, then SIGKILL. Each time:
#  - the server is stopped only once the cluster says it is safe:
#    `ofs-pbj ok-to-stop` exits 0 (asked through a server that stays up)
#    and every server is up and none is recovering (`ofs-pbj servers
#    --json`: .up, .recovering; a missing .recovering counts as false);
#  - with it down the client goes on: at least 5 more puts are
#    acknowledged, and every file acknowledged so far reads back, through
#    a surviving server, as the last version acknowledged for its name;
#  - it starts again (on a new port) and every server lists all three up.
# Then:
#  - no put was refused during the whole run;
#  - every acknowledged file reads back, its last acknowledged version,
#    through each of the three servers;
#  - once no server has copies left behind (.behind == 0, .recovering
#    false), a scrub is clean (exit 0, no findings) and no repair job was
#    ever submitted;
#  - the scheduler (`ofs-pbj serve`, running throughout) recorded the
#    catch-ups as system jobs of type catch-up, all ended, with a
#    stale_replica finding, repaired, for the copies caught up, and at
#    least one copy (a dirdata of /roll) was caught up by the changes it
#    missed rather than fetched whole.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"
PW_DIR=/roll PW_BIG=1 PW_TIMEOUT=60
. "$(dirname "$0")/putwriter.sh"

NAMES=(a b c)

start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db
# the scheduler records each server's catch-up as a system job
bg "$OFS_PBJ" --db "$T/pbj.db" serve 2>"$T/serve.err"   # (the program itself: its PID is killed on exit)
ok ofs mkdir /roll

# cluster_settled VIA [more jq] : VIA's table lists three servers, every
# one up and not recovering (and the jq condition given).
cluster_settled() {
	local via=$1 extra=${2:-true}
	OFS_CLUSTER=$(srv_addr "$via") "$OFS_PBJ" servers --json >"$T/servers.json" 2>"$T/servers.err" || {
		cat "$T/servers.err" >"$T/why"
		return 1
	}
	jq -c '[.servers[] | {address, up, recovering, behind}]' "$T/servers.json" >"$T/why" 2>&1
	jq -e "(.servers | length) == 3 and all(.servers[]; .up == true and (.recovering // false) == false and ($extra))" \
		"$T/servers.json" >/dev/null
}

# safe_to_stop NAME VIA : ok-to-stop NAME (asked through VIA) and all settled.
safe_to_stop() {
	cluster_settled "$2" || return 1
	OFS_CLUSTER=$(srv_addr "$2") "$OFS_PBJ" ok-to-stop "$(srv_sid "$1")" >"$T/okstop.out" 2>&1 || {
		{ echo "ok-to-stop $1:"; head -c 800 "$T/okstop.out"; } >"$T/why"
		return 1
	}
}

# ---- the rolling restart -----------------------------------------------------

set_addrs a b c
phase start
: >"$T/writer.log"
bg writer
WRITER=$BG
await 60 "the writer's first 5 acknowledged puts" acked_at_least 5

for round in 1 2; do
	if [ "$round" = 1 ]; then how=SIGTERM; else how=SIGKILL; fi
	for i in 0 1 2; do
		n=${NAMES[$i]}
		via=${NAMES[$(((i + 1) % 3))]}
		others=()
		for m in "${NAMES[@]}"; do [ "$m" = "$n" ] || others+=("$m"); done
		phase "round$round:wait-safe-$n"
		await 60 "ok-to-stop $n and every server up, none recovering (through $via, round $round)" \
			safe_to_stop "$n" "$via"
		set_addrs "${others[@]}"
		phase "round$round:$n-down-$how"
		if [ "$round" = 1 ]; then stop_server "$n"; else kill_server "$n"; fi
		say "$n stopped"
		base=$(acked)
		await 60 "5 more acknowledged puts with $n down ($how, round $round; $base before)" \
			acked_at_least $((base + 5))
		say "5 more puts acknowledged with $n down"
		check_all "with $n down ($how, round $round)" "$via"
		phase "round$round:$n-restart"
		restart_server "$n"
		for m in "${NAMES[@]}"; do
			wait_until 30 "$m to list all 3 servers up after $n restarted (round $round)" sees_up "$m" 3
		done
		set_addrs a b c
	done
done

phase end
touch "$T/stop-writer"
wait_pid "$WRITER" 90
[ "$REAP_ST" = 0 ] || fail "the writer did not end within 90s of its stop file (status $REAP_ST)"
say "writer: $(writer_summary)"

# ---- the end -----------------------------------------------------------------

await 60 "every server up with no copies behind and none recovering" \
	cluster_settled a '(.behind // 0) == 0'
keep_going

nbad=$(grep -c '^E [0-9]* [1-9][0-9]* [0-9]* \.$' "$T/writer.log")
[ "$nbad" = 0 ] || fail "expected no put refused during the rolling restart, saw: $(writer_summary)"

for n in "${NAMES[@]}"; do check_all "at the end" "$n"; done

clean_scrub_no_repair "$T/pbj.db"

# Every catch-up is in the job store, as a system job that ended, with a
# finding for each copy caught up.
catchups_ended() {
	ofs_pbj --db "$T/pbj.db" list --json >"$T/jobs.json" 2>/dev/null &&
		jq -e '[.jobs[] | select(.type == "catch-up")] | length > 0 and all(.state == "succeeded")' \
			"$T/jobs.json" >/dev/null
}
await 30 "the catch-up jobs to be recorded and ended" catchups_ended
caught=0 bychanges=0
for id in $(jq -r '.jobs[] | select(.type == "catch-up") | .id' "$T/jobs.json"); do
	ok ofs_pbj --db "$T/pbj.db" report "$id" --json
	caught=$((caught + $(jq '[.findings[] | select(.kind == "stale_replica" and .repaired)] | length' "$T/last.out")))
	bychanges=$((bychanges + $(jq '[.findings[] | select(.kind == "stale_replica" and .repaired and ((.repair // "") | startswith("caught up by the")))] | length' "$T/last.out")))
	jq -r '.findings[] | "  \(.repair // "")"' "$T/last.out" >>"$T/actions"
done
[ "$caught" -gt 0 ] || fail "no copy caught up is recorded in the catch-up jobs ($(jq -c '.jobs' "$T/jobs.json"))"
# /roll's dirdata copy on each stopped server missed entries only: it is
# caught up by the changes it missed, not fetched whole.
[ "$bychanges" -gt 0 ] || fail "no copy was caught up by the changes it missed; actions: $(sort "$T/actions" | uniq -c | sort -rn | head -c 1500)"
say "catch-up jobs: $(jq '[.jobs[] | select(.type == "catch-up")] | length' "$T/jobs.json"), copies caught up: $caught, by their changes: $bychanges"
say "done"
finish
