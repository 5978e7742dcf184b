#!/bin/bash
# t_crashloop: no acknowledged change is lost when servers die by SIGKILL
# over and over under a mixed workload ("Copies that fell behind",
# "Catch-up", "When no copy is current"). Three servers a:r1 b:r2 c:r3;
# one client writes the whole time into /c1 /c2 /c3, a few names each:
# puts of new files, replacements (a put to a name that holds a file) and
# removals (`ofs rm`), every put `--replicas 3 --confidence 2`, a few KB
# of random bytes. Meanwhile, 25 times, a random server is killed
# (SIGKILL) at a random moment and restarted, at once or after 1-2 more
# of the client's operations, and the next kill waits until both other
# servers list all three up again (never two down at once: one of three
# down leaves confidence 2 reachable). The restarted server is not waited on
# to catch up, so kills land during catch-ups too. Operations a kill made
# fail are allowed (not acknowledged) and logged.
#  - operations are in flight at the kills: at least one began before
#    some SIGKILL was sent and ended after its victim was gone, and at
#    least one acknowledged operation a kill overlapped was checked;
#  - an acknowledged operation that a kill overlapped reads back so as
#    soon as it ends (the writer checks it at once: the put's content, or
#    no such file after an rm), so a loss a later operation would hide
#    is seen too;
# Then, with the writer stopped:
#  - every name reads back as its last acknowledged state: a put's or
#    replacement's content, or, after a removal (or no acknowledged op),
#    absent from `ofs ls`; a later operation that was not acknowledged may
#    have applied or not, so its state is accepted too;
#  - every server catches up by itself (within 90 s): `ofs-pbj servers`
#    shows each one up, .behind == 0 and not recovering;
#  - a scrub is clean (exit 0, no findings) and no repair job exists;
#  - every directory lists the same through a, b and c;
#  - no server died on its own and no client reported a sanitizer error.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

KILLS=${OFS_CRASHLOOP_KILLS:-25}
DIRS=(/c1 /c2 /c3)
PER_DIR=6                       # names n0..n5 in each directory
NAMES=(a b c)

start_cluster a:r1 b:r2 c:r3
export OFS_PBJ_DB=$T/pbj.db
for d in "${DIRS[@]}"; do ok ofs mkdir "$d"; done

# ---- the writer ------------------------------------------------------------
#
# $T/addrs: the addresses the writer contacts (the running servers, kept
# up to date as they restart on new ports); $T/phase: what the test is
# doing, recorded with each operation. $T/writer.log, one line each:
#   B SEQ OP NAME SHA256 PHASE AT .   before the operation (OP: new, rep
#                                     or rm; SHA256 "-" for rm; AT the
#                                     time in ms since the epoch)
#   E SEQ EXIT MS .                   after it (MS: how long it took);
#                                     stderr in $T/op.SEQ.err
#   V SEQ EXIT SEEN .                 an acknowledged operation during
#                                     which a server was killed, checked
#                                     at once: SEEN the content's SHA256
#                                     (`ofs get`), "absent" (`ofs stat`:
#                                     no such file) or the error
# (the trailing "." marks a whole line: the log is read while written)
# $T/kills.log: "K N VICTIM AT" at each kill (before the SIGKILL), "X N
# VICTIM AT" once the victim is gone (reaped), "R N VICTIM AT" once every
# other server lists it up again.


writer() {
	local n=0 name op sha rc t kills
	# what the writer believes of each name: 1 present (its last op was an
	# acknowledged put), else absent or unknown (then it puts, never rm)
	declare -A have=()
	while [ ! -e "$T/stop-writer" ]; do
		n=$((n + 1))
		name=${DIRS[RANDOM % ${#DIRS[@]}]}/n$((RANDOM % PER_DIR))
		if [ "${have[$name]:-0}" = 1 ]; then
			if [ $((RANDOM % 3)) = 0 ]; then op="rm"; else op="rep"; fi
		else
			op=new
		fi
		sha=-
		if [ "$op" != rm ]; then
			head -c $((1024 + RANDOM % 6144)) /dev/urandom >"$T/w.src"
			sha=$(sha256sum "$T/w.src" | cut -d' ' -f1)
		fi
		t=$(now_ms)
		kills=$(grep -c '^K' "$T/kills.log")
		echo "B $n $op $name $sha $(cat "$T/phase") $t ." >>"$T/writer.log"
		if [ "$op" = rm ]; then
			OFS_CLUSTER=$(cat "$T/addrs") timeout 60 "$OFS_CLI" rm "$name" 2>"$T/op.$n.err"
		else
			OFS_CLUSTER=$(cat "$T/addrs") timeout 60 "$OFS_CLI" put --replicas 3 --confidence 2 \
				"$T/w.src" "$name" 2>"$T/op.$n.err"
		fi
		rc=$?
		echo "E $n $rc $(($(now_ms) - t)) ." >>"$T/writer.log"
		[ -s "$T/op.$n.err" ] || rm -f "$T/op.$n.err"
		if [ "$rc" = 0 ] && [ "$(grep -c '^K' "$T/kills.log")" != "$kills" ]; then
			verify_now "$n" "$op" "$name"
		fi
		if [ "$rc" = 0 ] && [ "$op" != rm ]; then have[$name]=1; else have[$name]=0; fi
	done
	exit 0
}

# verify_now SEQ OP NAME : right after an acknowledged operation that a
# kill overlapped, NAME reads back as it left it (a "V" line; without the
# leak check at exit, as the other reads).
verify_now() {
	local seen rc
	if [ "$2" = rm ]; then
		OFS_CLUSTER=$(cat "$T/addrs") timeout 30 \
			"$OFS_CLI" stat "$3" >/dev/null 2>"$T/v.err"
		rc=$?
		if [ "$rc" = 0 ]; then
			seen=present
		elif grep -qi 'no such file' "$T/v.err"; then
			seen=absent
		else
			seen=$(head -c 200 "$T/v.err" | tr '\n ' '__')
		fi
	else
		OFS_CLUSTER=$(cat "$T/addrs") timeout 30 \
			"$OFS_CLI" get "$3" "$T/v.out" 2>"$T/v.err"
		rc=$?
		if [ "$rc" = 0 ]; then
			seen=$(sha256sum "$T/v.out" | cut -d' ' -f1)
		else
			seen=$(head -c 200 "$T/v.err" | tr '\n ' '__')
		fi
		rm -f "$T/v.out"
	fi
	echo "V $1 $rc $seen ." >>"$T/writer.log"
}

ops_done() { grep -c '^E .* \.$' "$T/writer.log"; }
ops_at_least() { [ "$(ops_done)" -ge "$1" ]; }

# writer_summary : operations made, acknowledged and failed, by kind, and
# the failures' messages counted.
writer_summary() {
	awk '
	$1 == "B" && $NF == "." { op[$2] = $3; n++ }
	$1 == "E" && $NF == "." { if ($4 > slow) slow = $4; if ($3 == 0) ok[op[$2]]++; else bad[op[$2]]++ }
	END {
		printf "%d operations (new %d/%d, rep %d/%d, rm %d/%d acknowledged/failed), the slowest %d ms",
			n, ok["new"], bad["new"], ok["rep"], bad["rep"], ok["rm"], bad["rm"], slow
	}' "$T/writer.log"
	local msgs
	msgs=$(awk '$1 == "E" && $NF == "." && $3 != 0 { print $2 }' "$T/writer.log" |
		while read -r s; do echo "exit $(awk -v s="$s" '$1 == "E" && $2 == s { print $3 }' "$T/writer.log"): $(head -c 200 "$T/op.$s.err" 2>/dev/null | tr '\n' ' ')"; done |
		sed 's|/c[0-9]/n[0-9]*|/cK/nJ|g' | sort | uniq -c | sort -rn | head -n 5 | tr -s ' \n' ' ')
	[ -z "$msgs" ] || printf '; failures by message (count, text): %s' "$msgs"
}

# cluster_settled VIA [more jq] : VIA's table lists three servers, every
# one up and not recovering (and the jq condition given).
cluster_settled() {
	local via=$1 extra=${2:-true}
	OFS_CLUSTER=$(srv_addr "$via") "$OFS_PBJ" servers --json >"$T/servers.json" 2>"$T/servers.err" || {
		cat "$T/servers.err" >"$T/why"
		return 1
	}
	jq -c '[.servers[] | {address, up, recovering, behind, caught_up}]' "$T/servers.json" >"$T/why" 2>&1
	jq -e "(.servers | length) == 3 and all(.servers[]; .up == true and .recovering == false and ($extra))" \
		"$T/servers.json" >/dev/null
}

# alive NAME : its process is still running (a server that died on its
# own - a crash, a sanitizer report - fails the test, its stderr shown).
alive() {
	server_alive "$1" ||
		fail "server $1 died on its own (expected it running): $(tail -n 20 "$T/$1.err" | tr '\n' ' ' | head -c 1500)"
}

# ---- the crash loop ------------------------------------------------------------

set_addrs a b c
set_phase start
: >"$T/writer.log"
: >"$T/kills.log"
bg writer
WRITER=$BG
await 60 "the writer's first 3 operations" ops_at_least 3
say "writer running; $KILLS kills to go"

for k in $(seq 1 "$KILLS"); do
	victim=${NAMES[RANDOM % 3]}
	others=()
	for m in "${NAMES[@]}"; do [ "$m" = "$victim" ] || others+=("$m"); done
	# a random moment: 0-1 more operations of the writer, then 0-0.3 s
	# more (only to spread the kills over the operations' phases; nothing
	# waits on it)
	await 30 "the writer's next operation before kill $k" ops_at_least $(($(ops_done) + RANDOM % 2))
	sleep "0.$(printf '%03d' $((RANDOM % 300)))"
	for m in "${NAMES[@]}"; do alive "$m"; done
	set_addrs "${others[@]}"
	set_phase "k$k:$victim-down"
	echo "K $k $victim $(now_ms)" >>"$T/kills.log"
	kill_server "$victim"
	echo "X $k $victim $(now_ms)" >>"$T/kills.log"
	down_ops=$((RANDOM % 3))
	if [ "$down_ops" -gt 0 ]; then
		await 30 "$down_ops more operations of the writer with $victim down (kill $k)" \
			ops_at_least $(($(ops_done) + down_ops))
	fi
	set_phase "k$k:$victim-restart"
	restart_server "$victim"
	for m in "${others[@]}"; do
		wait_until 30 "$m to list all 3 servers up after $victim restarted (kill $k)" sees_up "$m" 3
	done
	echo "R $k $victim $(now_ms)" >>"$T/kills.log"
	set_addrs a b c
	set_phase "k$k:$victim-back"
	[ $((k % 5)) = 0 ] && say "kill $k done ($(ops_done) operations so far)"
done

set_phase end
touch "$T/stop-writer"
wait_pid "$WRITER" 90
[ "$REAP_ST" = 0 ] || fail "the writer did not end within 90s of its stop file (status $REAP_ST)"
for m in "${NAMES[@]}"; do alive "$m"; done
say "writer: $(writer_summary)"
keep_going

# ---- what a kill overlapped, checked at once ------------------------------------
awk '
$1 == "B" && $NF == "." { op[$2] = $3; nm[$2] = $4; sh[$2] = $5; ph[$2] = $6 }
$1 == "V" && $NF == "." {
	n++
	want = (op[$2] == "rm") ? "absent" : sh[$2]
	if ($4 != want) printf "op %s (%s %s during %s): expected %s, saw %s (exit %s); ", $2, op[$2], nm[$2], ph[$2], want, $4, $3
}
END { print n + 0 > "'"$T/nverified"'" }' "$T/writer.log" >"$T/vbad"
say "checked $(cat "$T/nverified") acknowledged operations a kill overlapped right after they ended"
[ ! -s "$T/vbad" ] ||
	fail "expected every acknowledged operation that a kill overlapped to read back so right after it: $(head -c 1500 "$T/vbad")writer: $(writer_summary)"
# The loop is about crashes during operations: some operation must have
# been in flight at some kill - begun before its SIGKILL was sent (K) and
# ended after its victim was gone (X) - and some acknowledged one checked
# right after it (a V line), or nothing above was about a crash at all.
awk '
kills && $1 == "K" { k[$2] = $4 }
kills && $1 == "X" { x[$2] = $4 }
!kills && $1 == "B" && $NF == "." { b[$2] = $7 }
!kills && $1 == "E" && $NF == "." { e[$2] = b[$2] + $4; rc[$2] = $3 }
END {
	for (s in e) for (j in x) if (b[s] <= k[j] && e[s] >= x[j]) {
		n++; if (rc[s] == 0) acked++
		break
	}
	printf "%d %d\n", n, acked
}' kills=1 "$T/kills.log" kills=0 "$T/writer.log" >"$T/overlap"
read -r n_overlap n_overlap_acked <"$T/overlap"
say "$n_overlap operations were in flight at a kill ($n_overlap_acked of them acknowledged)"
[ "$n_overlap" -ge 1 ] ||
	fail "expected at least one operation in flight at some kill (begun before its SIGKILL, ended after); none was over $KILLS kills: writer: $(writer_summary)"
[ "$(cat "$T/nverified")" -ge 1 ] ||
	fail "expected at least one acknowledged operation that a kill overlapped to be checked right after it; none was: writer: $(writer_summary)"

# ---- every name as last acknowledged -------------------------------------------
#
# $T/accept, a line a name ever written: "NAME LAST ALT..." - LAST its
# last acknowledged state, "SEQ:SHA" or "SEQ:absent" (SEQ 0: never
# acknowledged, absent), then the states of the later operations that
# were not acknowledged ("SEQ:SHA", "SEQ:absent" for an rm), any of which
# may have applied.
awk '
$1 == "B" && $NF == "." { st[$2] = ($3 == "rm") ? "absent" : $5; seqs[$4] = seqs[$4] " " $2 }
$1 == "E" && $NF == "." { rc[$2] = $3 }
END {
	for (name in seqs) {
		k = split(substr(seqs[name], 2), s, " ")
		last = 0
		for (i = 1; i <= k; i++) if ((s[i] in rc) && rc[s[i]] == 0) last = i
		line = name " " (last ? s[last] ":" st[s[last]] : "0:absent")
		for (i = last + 1; i <= k; i++) line = line " " s[i] ":" st[s[i]]
		print line
	}
}' "$T/writer.log" | sort >"$T/accept"


# what each name is right after the loop: listed or not (through a), and
# the content of every listed name and of every name expected to hold a
# file (read through a, b and c in turn)
: >"$T/listed"
for d in "${DIRS[@]}"; do
	OFS_CLUSTER=$(srv_addr a) "$OFS_CLI" ls "$d" >"$T/ls.after" 2>"$T/ls.err" ||
		fail "expected ls $d through a to succeed right after the loop; it failed: $(head -c 300 "$T/ls.err")"
	sed "s|^|$d/|" "$T/ls.after" >>"$T/listed"
done
{
	cat "$T/listed"
	awk '$2 !~ /:absent$/ { print $1 }' "$T/accept"
} | sort -u | awk -v a="$(srv_addr a)" -v b="$(srv_addr b)" -v c="$(srv_addr c)" \
	'{ print $1, (NR % 3 == 0) ? a : (NR % 3 == 1) ? b : c }' >"$T/toread"
: >"$T/got"
for addr in $(cut -d' ' -f2 "$T/toread" | sort -u); do
	awk -v a="$addr" '$2 == a { print $1 }' "$T/toread" | readmany "$addr" >>"$T/got" ||
		fail "the files could not be read back through $addr"
done
declare -A LISTED=() GOT_RC=() GOT=()
while read -r name; do LISTED[$name]=1; done <"$T/listed"
while read -r name rc ms_or_sha rest; do     # (readmany's line: see lib.sh)
	GOT_RC[$name]=$rc
	if [ "$rc" = 0 ]; then GOT[$name]=$ms_or_sha; else GOT[$name]=$rest; fi
done <"$T/got"

bad=()
nnames=0
nalt=0
while read -r name last alts; do
	nnames=$((nnames + 1))
	if [ -n "${LISTED[$name]:-}" ]; then
		if [ "${GOT_RC[$name]:-none}" != 0 ]; then
			seen="listed but its get exited ${GOT_RC[$name]:-none}: ${GOT[$name]:-}"
		else
			seen=${GOT[$name]}
		fi
	else
		seen=absent
	fi
	if [ "$seen" = "${last#*:}" ]; then continue; fi
	okalt=
	for a in $alts; do [ "$seen" = "${a#*:}" ] && okalt=$a; done
	if [ -n "$okalt" ]; then
		nalt=$((nalt + 1))
		continue
	fi
	seq=${last%%:*}
	how="never acknowledged"
	[ "$seq" = 0 ] || how="its last acknowledged op $seq ($(awk -v s="$seq" '$1 == "B" && $2 == s && $NF == "." { print $3 " during " $6 " at " $7 }' "$T/writer.log"))"
	bad+=("$name: expected ${last#*:} by $how${alts:+ or one of the unacknowledged later ops $alts}, saw $seen")
done <"$T/accept"
say "read back $nnames names right after the loop ($nalt as an unacknowledged later op left them, ${#bad[@]} wrong)"
[ "${#bad[@]}" = 0 ] ||
	fail "${#bad[@]} of $nnames names did not read back as last acknowledged right after the loop: $(printf '%s; ' "${bad[@]:0:6}")writer: $(writer_summary)"
# (a name listed that the writer never wrote)
for name in "${!LISTED[@]}"; do
	grep -q "^$name " "$T/accept" || fail "expected only the writer's names in ${name%/*}, saw $name"
done

# ---- catch-up, scrub, listings ---------------------------------------------------

await 90 "every server up with no copies behind and none recovering (through a)" \
	cluster_settled a '.behind == 0'
say "every server caught up: $(head -c 400 "$T/why")"

use_server a
clean_scrub_no_repair "$T/pbj.db"

for d in "${DIRS[@]}"; do
	for m in "${NAMES[@]}"; do
		OFS_CLUSTER=$(srv_addr "$m") "$OFS_CLI" ls "$d" >"$T/ls.$m" 2>"$T/ls.err" ||
			fail "expected ls $d through $m to succeed at the end; it failed: $(head -c 300 "$T/ls.err")"
	done
	for m in b c; do
		cmp -s "$T/ls.a" "$T/ls.$m" ||
			fail "expected ls $d to be the same through a and $m; a: $(tr '\n' ' ' <"$T/ls.a"); $m: $(tr '\n' ' ' <"$T/ls.$m")"
	done
done

# ---- no sanitizer report from any client -------------------------------------------
san=$(grep -l -e 'Sanitizer' -e 'runtime error' "$T"/op.*.err 2>/dev/null | head -n 1)
[ -z "$san" ] || fail "expected no sanitizer report from the writer's clients, saw in $san: $(head -c 800 "$san")"
for m in "${NAMES[@]}"; do alive "$m"; done
say "done: $KILLS kills, writer: $(writer_summary)"
finish
