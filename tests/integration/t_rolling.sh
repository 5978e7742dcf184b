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
#    stale_replica finding, repaired, for the copies caught up.
. "$(dirname "$0")/lib.sh"

KiB=1024
NAMES=(a b c)
T0=$(now_ms)
say() { log "[$((($(now_ms) - T0) / 1000))s] $*"; }

start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db
# the scheduler records each server's catch-up as a system job
bg "$OFS_PBJ" --db "$T/pbj.db" serve 2>"$T/serve.err"   # (the program itself: its PID is killed on exit)
ok ofs mkdir /roll

# ---- the writer ------------------------------------------------------------
#
# $T/addrs: the addresses the writer contacts (the running servers, kept
# up to date as they restart on new ports); $T/phase: what the test is
# doing, recorded with each put. $T/writer.log, one line a put:
#   B SEQ NAME SHA256 BYTES PHASE .    before the put
#   E SEQ EXIT MS .                    after it (MS: how long it took);
#                                      stderr in $T/put.SEQ.err
# (the trailing "." marks a whole line: the log is read while written)

set_addrs() {
	local n a=""
	for n in "$@"; do a=${a:+$a,}$(srv_addr "$n"); done
	echo "$a" >"$T/addrs.tmp" && mv "$T/addrs.tmp" "$T/addrs"
}
set_phase() { echo "$1" >"$T/phase.tmp" && mv "$T/phase.tmp" "$T/phase"; say "$1"; }

writer() {
	local n=0 name size sha rc t names=()
	while [ ! -e "$T/stop-writer" ]; do
		n=$((n + 1))
		if [ $((n % 5)) = 0 ] && [ ${#names[@]} -gt 0 ]; then
			name=${names[RANDOM % ${#names[@]}]}     # a replacement
		else
			name=/roll/f$n
		fi
		if [ $((n % 4)) = 0 ]; then
			size=$((200 * KiB + RANDOM % 4096))
		else
			size=$((2 * KiB + RANDOM % (6 * KiB)))
		fi
		head -c "$size" /dev/urandom >"$T/w.src"
		sha=$(sha256sum "$T/w.src" | cut -d' ' -f1)
		echo "B $n $name $sha $size $(cat "$T/phase") ." >>"$T/writer.log"
		t=$(now_ms)
		OFS_CLUSTER=$(cat "$T/addrs") timeout 60 "$OFS_CLI" put --replicas 3 --confidence 2 \
			"$T/w.src" "$name" 2>"$T/put.$n.err"
		rc=$?
		echo "E $n $rc $(($(now_ms) - t)) ." >>"$T/writer.log"
		[ -s "$T/put.$n.err" ] || rm -f "$T/put.$n.err"
		if [ "$rc" = 0 ] && [ "$name" = "/roll/f$n" ]; then names+=("$name"); fi
	done
	exit 0
}

acked() { grep -c '^E [0-9]* 0 [0-9]* \.$' "$T/writer.log"; }
acked_at_least() { [ "$(acked)" -ge "$1" ]; }

# writer_summary : puts made, acknowledged, refused, and the first refusal.
writer_summary() {
	awk '
	$1 == "B" && $NF == "." { nm[$2] = $3; ph[$2] = $6; puts++ }
	$1 == "E" && $NF == "." { if ($4 > slow) slow = $4; if ($3 == 0) ok++; else { bad++; if (!first) { first = $2; frc = $3 } } }
	END {
		printf "%d puts, %d acknowledged, %d refused, the slowest %d ms", puts, ok, bad, slow
		if (first) printf "; the first refused: put %d of %s during \"%s\", exit %d", first, nm[first], ph[first], frc
		if (first) print first > "'"$T/first.bad"'"
	}' "$T/writer.log"
	if [ -s "$T/first.bad" ]; then
		printf ': %s' "$(head -c 500 "$T/put.$(cat "$T/first.bad").err" 2>/dev/null | tr '\n' ' ')"
		rm -f "$T/first.bad"
		# (all the refusals' messages, each on one line, counted)
		printf '; refusals by message (count, text): %s' "$(
			awk '$1 == "E" && $NF == "." && $3 != 0 { print $2 }' "$T/writer.log" |
			while read -r s; do head -c 300 "$T/put.$s.err" 2>/dev/null | tr '\n' ' '; echo; done |
			sed 's|/roll/f[0-9]*|/roll/fN|g' | sort | uniq -c | sort -rn | head -n 4 | tr -s ' \n' ' ')"
	fi
}

# expected LOG : for each name acknowledged in LOG, "NAME SHA SEQ": the
# content (and put) of its last acknowledged version.
expected() {
	awk '
	$1 == "B" && $NF == "." { nm[$2] = $3; sh[$2] = $4 }
	$1 == "E" && $NF == "." && $3 == 0 { last[nm[$2]] = sh[$2]; seq[nm[$2]] = $2 }
	END { for (n in last) print n, last[n], seq[n] }' "$1" | sort
}

# version_of NAME SHA : the puts of NAME with that content, "SEQ STATE"
# a line (STATE: acked, refused:EXIT or running), from the log as it is now.
version_of() {
	awk -v n="$1" -v s="$2" '
	$1 == "B" && $NF == "." && $3 == n && $4 == s { want[$2] = 1; order[++k] = $2 }
	$1 == "E" && $NF == "." && ($2 in want) { st[$2] = ($3 == 0) ? "acked" : "refused:" $3 }
	END { for (i = 1; i <= k; i++) print order[i], (order[i] in st) ? st[order[i]] : "running" }' "$T/writer.log"
}

# readone NAME ADDR : get NAME through ADDR, print "NAME 0 SHA" or
# "NAME EXIT STDERR" (run by xargs, several at once). (Without the leak
# check at exit: it is a third of a get's time under the sanitizers, the
# read-backs are most of this test's time, and every other test's gets
# keep it.)
readone() {
	local f rc
	f=$(mktemp "$T/rb.XXXXXX")
	ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 OFS_CLUSTER=$2 timeout 30 "$OFS_CLI" get "$1" "$f" 2>"$f.err"
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "$1 0 $(sha256sum "$f" | cut -d' ' -f1)"
	else
		echo "$1 $rc $(head -c 300 "$f.err" | tr '\n' ' ')"
	fi
	rm -f "$f" "$f.err"
}
export -f readone
export T OFS_CLI

# check_all WHEN SERVER : every file acknowledged so far reads back through
# SERVER as its last acknowledged version. A newer version of the name is
# accepted too when that put was acknowledged or is still running (the
# writer goes on while the check runs); an older or a refused one is not.
check_all() {
	local when=$1 via=$2 name sha seq rc got n=0 newer=0 bad=() v
	cp "$T/writer.log" "$T/snap.log"
	expected "$T/snap.log" >"$T/exp"
	: >"$T/got"
	cut -d' ' -f1 "$T/exp" |
		xargs -P 3 -I{} bash -c 'readone "$1" "$2" >>"$T/got"' _ {} "$(srv_addr "$via")"
	declare -A GOT_RC=() GOT=()
	while read -r name rc got; do GOT_RC[$name]=$rc; GOT[$name]=$got; done <"$T/got"
	while read -r name sha seq; do
		n=$((n + 1))
		rc=${GOT_RC[$name]:-none}
		got=${GOT[$name]:-}
		if [ "$rc" != 0 ]; then
			bad+=("get $name exited $rc (expected its put $seq, sha ${sha:0:12}): $got")
		elif [ "$got" != "$sha" ]; then
			v=$(version_of "$name" "$got")
			if [ -n "$v" ] && [ "${v%% *}" -gt "$seq" ] && [[ "${v#* }" =~ ^(acked|running)$ ]]; then
				newer=$((newer + 1))
			else
				bad+=("$name read back as ${got:0:12} (${v:-no version put}), expected its last acknowledged put $seq, ${sha:0:12}")
			fi
		fi
	done <"$T/exp"
	say "read back $n files through $via $when ($newer replaced meanwhile, ${#bad[@]} wrong)"
	[ "${#bad[@]}" = 0 ] ||
		fail "$when: ${#bad[@]} of $n acknowledged files did not read back through $via: $(printf '%s; ' "${bad[@]:0:5}")writer: $(writer_summary)"
}

# await SECONDS WHAT CMD... : wait_until, the failure message with the
# writer's account and $T/why (what the last try saw).
await() {
	local secs=$1 what=$2 deadline
	shift 2
	: >"$T/why"
	deadline=$(($(date +%s%N) + secs * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] ||
			fail "timed out after ${secs}s waiting for $what; last seen: $(head -c 1200 "$T/why" | tr '\n' ' '); writer: $(writer_summary)"
		sleep 0.05
	done
}

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
set_phase start
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
		set_phase "round$round:wait-safe-$n"
		await 60 "ok-to-stop $n and every server up, none recovering (through $via, round $round)" \
			safe_to_stop "$n" "$via"
		set_addrs "${others[@]}"
		set_phase "round$round:$n-down-$how"
		if [ "$round" = 1 ]; then stop_server "$n"; else kill_server "$n"; fi
		say "$n stopped"
		base=$(acked)
		await 60 "5 more acknowledged puts with $n down ($how, round $round; $base before)" \
			acked_at_least $((base + 5))
		say "5 more puts acknowledged with $n down"
		check_all "with $n down ($how, round $round)" "$via"
		set_phase "round$round:$n-restart"
		restart_server "$n"
		for m in "${NAMES[@]}"; do
			wait_until 30 "$m to list all 3 servers up after $n restarted (round $round)" sees_up "$m" 3
		done
		set_addrs a b c
	done
done

set_phase end
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

if ofs_pbj --db "$T/pbj.db" submit scrub --wait --json >"$T/scrub.json" 2>"$T/scrub.err"; then
	assert_json "$T/scrub.json"
	assert_eq 0 "$(json "$T/scrub.json" .findings.total)" "findings of the scrub at the end"
	assert_eq succeeded "$(json "$T/scrub.json" .state)" "state of the scrub at the end"
else
	ofs_pbj --db "$T/pbj.db" report "$(jq -r .id "$T/scrub.json" 2>/dev/null)" >"$T/scrub.report" 2>&1
	fail "expected the scrub at the end to exit 0 with no findings; it exited non-zero: $(jq -c '{state, findings}' "$T/scrub.json" 2>/dev/null) $(head -c 300 "$T/scrub.err"); findings: $(head -n 8 "$T/scrub.report" | tr '\n' ';')"
fi

ok ofs_pbj --db "$T/pbj.db" list --json
assert_eq 0 "$(jq '[.jobs[] | select(.type == "repair")] | length' "$T/last.out")" \
	"repair jobs submitted ($(jq -c '[.jobs[] | {id, type, state}]' "$T/last.out"))"

# Every catch-up is in the job store, as a system job that ended, with a
# finding for each copy caught up.
catchups_ended() {
	ofs_pbj --db "$T/pbj.db" list --json >"$T/jobs.json" 2>/dev/null &&
		jq -e '[.jobs[] | select(.type == "catch-up")] | length > 0 and all(.state == "succeeded")' \
			"$T/jobs.json" >/dev/null
}
await 30 "the catch-up jobs to be recorded and ended" catchups_ended
caught=0
for id in $(jq -r '.jobs[] | select(.type == "catch-up") | .id' "$T/jobs.json"); do
	ok ofs_pbj --db "$T/pbj.db" report "$id" --json
	caught=$((caught + $(jq '[.findings[] | select(.kind == "stale_replica" and .repaired)] | length' "$T/last.out")))
done
[ "$caught" -gt 0 ] || fail "no copy caught up is recorded in the catch-up jobs ($(jq -c '.jobs' "$T/jobs.json"))"
say "catch-up jobs: $(jq '[.jobs[] | select(.type == "catch-up")] | length' "$T/jobs.json"), copies caught up: $caught"
say "done"
finish
