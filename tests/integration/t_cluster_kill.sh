#!/bin/bash
# t_cluster_kill: one server of four (racks r1 r1 r2 r3) dies by SIGKILL.
# The only r2 server is the victim, so every 3-copy object has a copy on it.
#  - every file written before still reads back whole;
#  - `ofs-pbj servers` shows it down, with the time it was last seen;
#  - puts with --replicas 3 --confidence 2 succeed, and the primary of each
#    new object records the dead server's copy as stale, with a reason,
#    where `ofs-server inspect` shows it;
#  - a put with --confidence 3 fails with a clear error and exit 3, and
#    leaves nothing visible in `ofs ls`;
#  - once the server is back it learns, before it serves, which of its
#    copies missed changes (it asks its peers); read through it while
#    those copies are still behind (its catch-up held back with
#    --no-catch-up, its own copy of a directory's entries marked behind
#    before and after the reads), every file and listing reads back
#    whole: copies that missed their creation or later changes (a
#    directory whose entries live first on it) are skipped, not served;
#  - started again as usual, it catches them up from current copies by
#    itself (no job), and everything still reads back through it;
#  - when every server that saw it fall behind was down too at its
#    restart, they tell it on contact once they are back, and the same
#    holds.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a:r1 b:r1 c:r2 d:r3
victim_sid=$(srv_sid c)

log "write files with 3 copies while all four servers run"
ok ofs mkdir /before
for i in 1 2 3 4 5 6 7 8; do
	mkrand "$T/b$i" $((i * 200000 + 17))
	ok ofs put --replicas 3 "$T/b$i" "/before/b$i"
done
mkrand "$T/striped" $((3 * MiB + 5))
ok ofs put --replicas 3 --stripes 4 --strip-size 64K "$T/striped" /before/striped
# A directory whose entries live first on c (its dirdata's primary): once
# c is back, its copy of those entries is behind and must not be served.
pc=
for i in $(seq 1 40); do
	ok ofs mkdir "/p$i"
	if [ "$(ofs stat --json "/p$i" | jq -r '.dirdata[0].sids[0]')" = "$victim_sid" ]; then
		pc=/p$i
		break
	fi
done
[ -n "$pc" ] || fail "no directory got its dirdata primary on c in 40 tries"
pc_dd=$(ofs stat --json "$pc" | jq -r '.dirdata[0].oid')

log "SIGKILL the only r2 server"
kill_server c

for i in 1 2 3 4 5 6 7 8; do
	ok ofs get "/before/b$i" "$T/back.b$i"
	assert_same_file "$T/b$i" "$T/back.b$i" "b$i read back with one copy dead"
done
ok ofs get /before/striped "$T/back.striped"
assert_same_file "$T/striped" "$T/back.striped" "striped file read back with one copy dead"

log "ofs-pbj servers shows it down, with the time it was last seen"
shows_down() {
	ofs_pbj servers --json >"$T/servers.json" 2>/dev/null &&
		jq -e --arg s "$victim_sid" 'any(.servers[]; .sid == $s and .up == false)' "$T/servers.json" >/dev/null
}
wait_until 30 "the killed server to be shown down" shows_down
assert_match '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' \
	"$(jq -r --arg s "$victim_sid" '.servers[] | select(.sid == $s) | .last_seen' "$T/servers.json")" \
	"last_seen of the down server"
assert_eq 3 "$(jq '[.servers[] | select(.up)] | length' "$T/servers.json")" "servers up"
ok ofs_pbj servers
assert_match "$victim_sid .* DOWN " "$(grep "^$victim_sid" "$T/last.out")" "text listing marks it DOWN"

log "puts with --replicas 3 --confidence 2 succeed and record the stale copy"
ok ofs mkdir /during
for i in 1 2 3 4 5; do
	mkrand "$T/d$i" $((i * 100000 + 3))
	ok ofs put --replicas 3 --confidence 2 "$T/d$i" "/during/d$i"
done
# has_stale OID SIDS_JSON : some live copy's record lists the victim as
# stale, with a non-empty reason.
has_stale() {
	local oid=$1 s name j
	for s in $(jq -r '.[]' <<<"$2"); do
		[ "$s" = "$victim_sid" ] && continue
		name=$(srv_by_sid "$s") || continue
		j=$(inspect_json "$name" "$oid") || continue
		if jq -e --arg v "$victim_sid" \
			'(.stale | index($v)) != null and ((.stale_reasons[$v] // "") | length) > 0' \
			<<<"$j" >/dev/null; then
			return 0
		fi
	done
	return 1
}
for i in 1 2 3 4 5; do
	ok ofs stat --json "/during/d$i"
	assert_json "$T/last.out"
	cp "$T/last.out" "$T/stat.d$i"
	assert_eq 2 "$(json "$T/stat.d$i" .confidence)" "d$i write confidence"
	for part in . '.dfiles[0]'; do
		what="d$i metafile"
		[ "$part" = . ] || what="d$i dfile"
		sids=$(json "$T/stat.d$i" "$part | .sids")
		oid=$(json "$T/stat.d$i" "$part | .oid")
		assert_contains "$sids" "$victim_sid" "$what: placement still names the down server"
		has_stale "$oid" "$sids" || fail "$what: no live copy records $victim_sid as stale"
	done
	ok ofs get "/during/d$i" "$T/back.d$i"
	assert_same_file "$T/d$i" "$T/back.d$i" "d$i read back"
done
mkrand "$T/x1" 5000
ok ofs put --replicas 3 --confidence 2 "$T/x1" "$pc/x1"

log "a put with --confidence 3 fails with exit 3 and leaves nothing visible"
mkrand "$T/c3" 300000
assert_exit 3 ofs put --replicas 3 --confidence 3 "$T/c3" /during/c3
assert_contains "$(cat "$T/last.err")" "write confidence" "error message of the failed put"
ok ofs ls /during
assert_eq "d1 d2 d3 d4 d5 " "$(tr '\n' ' ' <"$T/last.out")" "ls after the failed put"
assert_exit 3 ofs get /during/c3 "$T/c3.back"
[ ! -e "$T/c3.back" ] || fail "a failed get left a local file"
# Replacing an existing file with too little confidence keeps the old one.
assert_exit 3 ofs put --replicas 3 --confidence 3 "$T/c3" /during/d1
ok ofs get /during/d1 "$T/back.d1"
assert_same_file "$T/d1" "$T/back.d1" "d1 intact after a failed replace"

log "the server comes back, its catch-up held: it learns what it missed, reads through it skip its behind copies"
# (--no-catch-up for this run: its copies stay behind while it is read
# through, as long as the test needs, and the catch-up follows below)
at=$(stat -c %s "$T/c.log")
restart_server c --no-catch-up
grep -q "copies here missed changes while this server was away" < <(tail -c +$((at + 1)) "$T/c.log") ||
	fail "c did not learn at start which of its copies fell behind"
# c_behind : c's own copy of $pc's entries (which lacks x1) is marked
# behind, and `ofs-pbj servers` through c counts copies behind on c.
c_behind() {
	inspect_json c "$pc_dd" | jq -e --arg s "$victim_sid" '(.stale_reasons[$s] // "") != ""' >/dev/null &&
		OFS_CLUSTER=$(srv_addr c) "$OFS_PBJ" servers --json 2>/dev/null |
		jq -e --arg s "$victim_sid" 'any(.servers[]; .sid == $s and .up and .behind > 0)' >/dev/null
}
wait_until 30 "c to show copies behind (its catch-up held)" c_behind
use_server c
ok ofs ls "$pc"
assert_eq "x1" "$(cat "$T/last.out")" "ls $pc through c while c's copy of its entries is behind"
ok ofs get "$pc/x1" "$T/back.x1"
assert_same_file "$T/x1" "$T/back.x1" "$pc/x1 (its entry missing on c's behind copy) read through c"
for i in 1 2 3 4 5; do
	ok ofs get "/during/d$i" "$T/back.d$i"
	assert_same_file "$T/d$i" "$T/back.d$i" "d$i (made while c was down) read through c while c is behind"
done
c_behind || fail "c's copies were no longer behind after the reads through it: they were not read while behind"
use_server a

log "c again with its catch-up: it brings those copies up to date by itself"
at=$(stat -c %s "$T/c.log")
restart_server c
# ... and catches those copies up by itself, with no job submitted: the
# mark on its copy of $pc's entries goes, and `ofs-pbj servers` says so.
caught_up_c() {
	ofs_pbj servers --json >"$T/servers.json" 2>/dev/null &&
		jq -e --arg s "$victim_sid" \
			'any(.servers[]; .sid == $s and .up and .behind == 0 and .recovering == false and .caught_up > 0)' \
			"$T/servers.json" >/dev/null
}
wait_until 60 "c to catch up the copies it missed" caught_up_c
inspect_json c "$pc_dd" | jq -e --arg s "$victim_sid" '(.stale_reasons[$s] // "") == ""' >/dev/null ||
	fail "c's copy of $pc's entries is still marked behind after its catch-up"
grep -q "catch-up: [0-9]* cop[a-z]* brought up to date" < <(tail -c +$((at + 1)) "$T/c.log") ||
	fail "c's log does not say it caught copies up"
use_server c
ok ofs get "$pc/x1" "$T/back.x1"
assert_same_file "$T/x1" "$T/back.x1" "$pc/x1 read through c after its catch-up"
ok ofs ls "$pc"
assert_eq "x1" "$(cat "$T/last.out")" "ls $pc through c after its catch-up"
use_server a
wait_until 30 "a to list all 4 servers as up" sees_up a 4
for i in 1 2 3 4 5 6 7 8; do
	ok ofs get "/before/b$i" "$T/back.b$i"
	assert_same_file "$T/b$i" "$T/back.b$i" "b$i after the restart"
done
for i in 1 2 3 4 5; do
	ok ofs get "/during/d$i" "$T/back.d$i"
	assert_same_file "$T/d$i" "$T/back.d$i" "d$i after the restart"
done

log "copies that fell behind while the servers that saw it were down too"
# c dies, files are written, then every other server dies as well: when
# c starts again nobody can tell it what it missed, so it must be told
# once they are back (gossip contact), before it serves those copies.
kill_server c
use_server a
ok ofs mkdir /late
for i in 1 2 3; do
	mkrand "$T/e$i" $((i * 70000 + 9))
	ok ofs put --replicas 3 --confidence 2 "$T/e$i" "/late/e$i"
done
ok ofs put --replicas 3 --confidence 2 "$T/e1" /during/d2   # a replaced file
cp "$T/e1" "$T/d2"
mkrand "$T/y1" 7000
ok ofs put --replicas 3 --confidence 2 "$T/y1" "$pc/y1"
for n in a b d; do kill_server "$n"; done
restart_same_port c
for n in a b d; do restart_same_port "$n"; done
for n in a b c d; do
	wait_until 30 "$n to list all 4 servers as up" sees_up "$n" 4
done
wait_until 30 "c to be told that its copy of $pc's entries missed changes" \
	grep -q "copy of $pc_dd here missed changes (told by" "$T/c.log"
use_server c
for f in "$pc/y1:y1" "$pc/x1:x1" /late/e1:e1 /late/e2:e2 /late/e3:e3 /during/d2:d2 /during/d1:d1 /before/b1:b1 /before/striped:striped; do
	ok ofs get "${f%%:*}" "$T/back.x"
	assert_same_file "$T/${f#*:}" "$T/back.x" "${f%%:*} read through c after the restarts"
done
ok ofs ls /late
assert_eq "e1 e2 e3 " "$(tr '\n' ' ' <"$T/last.out")" "ls /late through c"
ok ofs ls "$pc"
assert_eq "x1 y1 " "$(tr '\n' ' ' <"$T/last.out")" "ls $pc through c"

finish
