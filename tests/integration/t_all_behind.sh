#!/bin/bash
# t_all_behind: every copy of an object marked behind - no copy current -
# built on purpose, for a dirdata, a metafile and a dfile, and reconciled
# twice: once by the servers' own catch-up (no job), once by a repair job
# (servers run with --no-catch-up).
#  - the dirdata's copies differ: one lacks an entry made while its server
#    was down (n1), one still holds an entry removed while it was down
#    (f1); the reconciled directory holds f2 and n1, not f1: nothing
#    acknowledged is lost, the removed entry does not come back;
#  - the metafile's and the dfile's copies are at different versions: the
#    newest version that verifies wins on every copy (no version made up);
#  - no copy is left behind, the files read back, a put into the
#    directory works and a scrub is clean.
# The removed file's objects, left on the server that missed the remove,
# go too (their bytes into quarantine).
. "$(dirname "$0")/lib.sh"

# behind_built MODE : a 3-server cluster ${MODE}{a,b,c} in racks r1 r2 r3
# whose /d's dirdata, /d/f2's metafile and its dfile are behind on every
# copy; MODE "cu" runs the servers as usual, "rp" with --no-catch-up.
behind_built() {
	local p=$1 extra=() n
	[ "$p" = rp ] && extra=(--no-catch-up)
	start_cluster "${p}a:r1" "${p}b:r2" "${p}c:r3"
	export OFS_PBJ_DB=$T/$p.db
	ok ofs mkdir /d
	for n in f1 f2; do
		mkrand "$T/$p.$n" 70001
		ok ofs put --replicas 3 --confidence 2 "$T/$p.$n" "/d/$n"
	done
	ok ofs stat --json /d
	DD=$(jq -r '.dirdata[0].oid' "$T/last.out")
	ok ofs stat --json /d/f2
	MF=$(jq -r '.oid' "$T/last.out")
	DF=$(jq -r '.dfiles[0].oid' "$T/last.out")
	V_MF=$(inspect_json "${p}a" "$MF" | jq -r .version)
	V_DF=$(inspect_json "${p}a" "$DF" | jq -r .version)

	log "$p: c misses a create and a remove in /d"
	stop_server "${p}c"
	mkrand "$T/$p.n1" 5000
	ok ofs put --replicas 3 --confidence 2 "$T/$p.n1" /d/n1
	ok ofs rm /d/f1
	stop_server "${p}a"
	stop_server "${p}b"

	log "$p: every copy marked behind, the copies made to differ"
	for n in a b c; do
		for o in "$DD" "$MF" "$DF"; do
			ok ofs_server tool --data "$(srv_data "$p$n")" mark-behind "$o"
		done
	done
	# a lacks n1 too (as if it had missed that create); c holds f1, which
	# a and b removed
	ok ofs_server tool --data "$(srv_data "${p}a")" rm-key "$DD" n1
	# the newest metafile on c, the newest dfile on b
	ok ofs_server tool --data "$(srv_data "${p}c")" set-version "$MF" $((V_MF + 5))
	ok ofs_server tool --data "$(srv_data "${p}b")" set-version "$DF" $((V_DF + 1))
	for n in a b c; do
		restart_same_port "$p$n" "${extra[@]}"
	done
	for n in a b c; do
		wait_until 30 "$p$n to see all three up" sees_up "$p$n" 3
	done
	use_server "${p}a"
}

# no_copy_behind : every server is up with nothing left to catch up.
no_copy_behind() {
	ofs_pbj servers --json >"$T/servers.json" 2>/dev/null &&
		jq -e '[.servers[] | select(.up and .behind == 0 and .recovering == false)] | length == 3' \
			"$T/servers.json" >/dev/null
}

# no_stale_records MODE : no server holds a stale record of DD, MF or DF
# ($T/why says which one still does).
no_stale_records() {
	local n o
	for n in a b c; do
		for o in "$DD" "$MF" "$DF"; do
			inspect_json "$1$n" "$o" | jq -e '.stale_reasons | length == 0' >/dev/null || {
				echo "$1$n's copy of $o still has a stale mark: $(inspect_json "$1$n" "$o" | jq -c .stale_reasons)" >"$T/why"
				return 1
			}
		done
	done
}

# reconciled MODE : the outcome both ways must reach.
reconciled() {
	local p=$1 n
	for n in a b c; do
		assert_eq "f2 n1 " "$(ofs_server tool --data "$(srv_data "$p$n")" keys "$DD" | cut -f1 | tr '\n' ' ')" \
			"$p$n's copy of /d's entries"
		assert_eq $((V_MF + 5)) "$(inspect_json "$p$n" "$MF" | jq -r .version)" "$p$n's metafile version"
		assert_eq $((V_DF + 1)) "$(inspect_json "$p$n" "$DF" | jq -r .version)" "$p$n's dfile version"
	done
	# (a server's records of the others' copies go when those copies say
	# they are current, or at its next sweep of them: within seconds)
	await 30 "no server to hold a stale record of /d, /d/f2 or its dfile" no_stale_records "$p"
	ok ofs ls /d
	assert_eq "f2 n1 " "$(tr '\n' ' ' <"$T/last.out")" "ls /d"
	for n in f2 n1; do
		ok ofs get "/d/$n" "$T/back"
		assert_same_file "$T/$p.$n" "$T/back" "/d/$n after the reconcile"
	done
	mkrand "$T/$p.n2" 3000
	ok ofs put --replicas 3 --confidence 2 "$T/$p.n2" /d/n2
	ls "$(srv_data "${p}c")/quarantine/" | grep -q 'removed-elsewhere' ||
		fail "the removed file's bytes on ${p}c did not go to quarantine: $(ls "$(srv_data "${p}c")/quarantine/")"
	ok ofs_pbj submit scrub --wait --json
	assert_eq 0 "$(jq '.findings.total' "$T/last.out")" \
		"findings of the scrub after the reconcile ($(head -c 800 "$T/last.out"))"
}

log "reconciled by catch-up, with no job"
behind_built cu
wait_until 60 "every copy to be caught up" no_copy_behind
for n in a b c; do
	grep -q "reconciled $DD: entries merged" "$T/cu$n.log" && who=$n
done
[ -n "${who:-}" ] || fail "no server says it reconciled /d's entries"
reconciled cu
ok ofs_pbj list --json
assert_eq 0 "$(jq '[.. | objects | select(.type? == "repair")] | length' "$T/last.out")" \
	"repair jobs submitted"
for n in a b c; do stop_server "cu$n"; done

log "reconciled by a repair job (catch-up off)"
behind_built rp
ok ofs_pbj servers --json
[ "$(jq '[.servers[].behind] | add' "$T/last.out")" -ge 9 ] ||
	fail "fewer than 9 copies marked behind before the repair: $(jq -c '[.servers[].behind]' "$T/last.out")"
assert_exit 3 ofs ls /d      # no copy current: not served
# (each server's log as long as it is before the repair: only what
# follows can explain copies behind after it)
declare -A LOG_AT=()
for n in a b c; do LOG_AT[$n]=$(stat -c %s "$T/rp$n.log"); done
ok ofs_pbj submit repair --wait --json
ok ofs_pbj report "$(jq -r .id "$T/last.out")" --json
jq -e '[.findings[] | select((.repair // "") | test("no copy was current"))] | length >= 3' "$T/last.out" >/dev/null ||
	fail "the repair did not reconcile the three objects: $(head -c 1500 "$T/last.out")"
# A copy the repair made current can be marked behind again by a tell on
# its way: a peer tells a returning server which of its copies missed
# changes, and when that tell arrives after the repair installed them,
# the copy is marked behind though current (KNOWN, OPEN: docs/design.md).
# With catch-up off it waits for the next repair: run it, once, and say so.
# Only a tell logged after the repair began explains it: one logged before
# (at the restarts, say) was there before the repair made those copies
# current.
told_since_repair() {
	local n
	for n in a b c; do
		grep -q 'here missed changes (told by' < <(tail -c +$((LOG_AT[$n] + 1)) "$T/rp$n.log") &&
			return 0
	done
	return 1
}
if ! within 15 no_copy_behind; then
	told_since_repair ||
		fail "copies still behind after the repair, and no tell logged since the repair began explains it: $(jq -c '[.servers[] | {sid: .sid[0:8], behind}]' "$T/servers.json" 2>/dev/null)"
	log "KNOWN, OPEN: a tell that arrived after the repair marked copies behind again; one more repair"
	ok ofs_pbj submit repair --wait --json
fi
wait_until 30 "every copy to be current" no_copy_behind
reconciled rp

finish
