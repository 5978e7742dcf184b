#!/bin/bash
# t_repair: `ofs-pbj submit repair` (and `scrub --repair`, `repair --job`)
# on four servers (racks r1 r1 r2 r3) holding 3 copies of files, some
# striped; each case in a fresh cluster. For each damage scrub detects:
# inject it, repair it, assert the finding says repaired and from which
# copy, then a new scrub is clean and every file reads back (ofs get)
# with its original digest. Also:
#  - two copies of three corrupted: repaired from the third;
#  - all three corrupted: reported, left, nothing changed on disk;
#  - --dry-run lists the action and changes nothing;
#  - repair --job of a scrub job: only that job's objects; the scrub's
#    findings then say repaired;
#  - a repair cap: the job stops (paused, exit 1) at the cap and repairs
#    the rest once resumed;
#  - the copy thrown away is kept in the server's quarantine folder;
#  - structure: an orphan goes to /lost+found (named for what and where it
#    was), a dangling entry is removed, a wrong back reference is
#    rewritten from the forward pointer;
#  - copies that missed writes while their server was down (stale records
#    written by the primary) are repaired first, and read back through
#    that server.
. "$(dirname "$0")/lib.sh"
# (orphans are moved at once here; the default grace is 10 minutes)
export EXTRA_RUN_ARGS="--orphan-grace 0"

KiB=1024 MiB=$((1024 * 1024))
NFILES=${OFS_REPAIR_FILES:-24}

# cluster N : a fresh four-server cluster under $T/cN with files on it.
cluster() {
	local c=$1 i
	start_cluster "${c}a:r1" "${c}b:r1" "${c}c:r2" "${c}d:r3"
	export OFS_PBJ_DB=$T/$c.db
	ok ofs mkdir /f
	: >"$T/$c.list"
	for i in $(seq 1 "$NFILES"); do
		if [ $((i % 4)) = 0 ]; then
			mkrand "$T/$c.src$i" $((MiB + i * 1000))
			echo "$T/$c.src$i /f/s$i 3 3 262144" >>"$T/$c.list"
		else
			mkrand "$T/$c.src$i" $((i * 3 * KiB + 1))
			echo "$T/$c.src$i /f/p$i 3 1 1048576" >>"$T/$c.list"
		fi
	done
	"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/$c.list" || fail "putmany"
	CUR=$c
}

stop_cluster() {
	local n
	for n in a b c d; do stop_server "$1$n"; done
}

# every file reads back with its original digest
all_read_back() {
	local src dst _r _s _z
	while read -r src dst _r _s _z; do
		ok ofs get "$dst" "$T/back"
		assert_same_file "$src" "$T/back"
		rm -f "$T/back"
	done <"$T/$CUR.list"
}

# run EXPECTED_EXIT ARGS... : a job to its end; $JOB, status.json, report.json
run() {
	local want=$1
	shift
	assert_exit "$want" ofs_pbj submit "$@" --wait --json
	assert_json "$T/last.out"
	JOB=$(json "$T/last.out" .id)
	cp "$T/last.out" "$T/status.json"
	ok ofs_pbj report "$JOB" --json
	assert_json "$T/last.out"
	cp "$T/last.out" "$T/report.json"
}

clean_scrub() {
	run 0 scrub --no-repair
	assert_eq 0 "$(json "$T/report.json" '.findings | length')" "findings after the repair ($(cat "$T/report.json"))"
}

# pick_copy PATH [N] : the first dfile of PATH, its copy number N (default
# 1, the second). Sets DF, VSID, VICTIM, VPATH, SIDS (all copies).
pick_copy() {
	local path=$1 n=${2:-1} j
	j=$(ofs stat --json "$path") || fail "stat $path"
	DF=$(jq -r '.dfiles[0].oid' <<<"$j")
	SIDS=$(jq -r '.dfiles[0].sids[]' <<<"$j")
	VSID=$(jq -r ".dfiles[0].sids[$n]" <<<"$j")
	VICTIM=$(srv_by_sid "$VSID") || fail "no server with SID $VSID"
	VPATH=$(inspect_json "$VICTIM" "$DF" | jq -r .path)
	[ -f "$VPATH" ] || fail "no byte stream at $VPATH"
}

flip() { printf '\xff' | dd of="$1" bs=1 seek="${2:-5000}" conv=notrunc status=none; }

# repaired_finding KIND : one finding, of KIND, on the damaged copy,
# repaired from one of the other copies.
repaired_finding() {
	assert_eq 1 "$(json "$T/report.json" '.findings | length')" "number of findings ($(cat "$T/report.json"))"
	assert_eq "$1" "$(json "$T/report.json" '.findings[0].kind')" "finding kind"
	assert_eq "$VSID" "$(json "$T/report.json" '.findings[0].server')" "finding server"
	assert_eq "$DF" "$(json "$T/report.json" '.findings[0].oid')" "finding oid"
	assert_eq true "$(json "$T/report.json" '.findings[0].repaired')" "finding repaired"
	assert_eq repaired "$(json "$T/report.json" '.findings[0].repair_state')" "repair_state"
	src=$(json "$T/report.json" '.findings[0].source')
	[ "$src" != "$VSID" ] && grep -qx "$src" <<<"$SIDS" ||
		fail "repaired from $src, not another copy of $DF ($SIDS)"
	assert_eq 1 "$(json "$T/status.json" .findings.repaired)" "status findings.repaired"
}

log "a flipped byte: repaired from a good copy, the bad one quarantined"
cluster r1
pick_copy /f/s4
flip "$VPATH"
run 0 repair
repaired_finding checksum_mismatch
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "fetched version" "repair says how"
q=$(ls "$(srv_data "$VICTIM")/quarantine/" 2>/dev/null | grep -c "^$DF\.")
assert_eq 1 "$q" "the bad copy kept in quarantine"
clean_scrub
all_read_back
stop_cluster r1

log "a truncated byte stream: size_mismatch repaired"
cluster r2
pick_copy /f/s8
truncate -s 1000 "$VPATH"
run 0 scrub --repair
repaired_finding size_mismatch
clean_scrub
all_read_back
stop_cluster r2

log "a deleted byte-stream file: missing_replica repaired"
cluster r3
pick_copy /f/p5
rm -f "$VPATH"
run 0 repair
repaired_finding missing_replica
[ -f "$VPATH" ] || fail "the byte stream was not recreated at $VPATH"
clean_scrub
all_read_back
stop_cluster r3

log "one copy's version rolled back: stale_replica repaired"
cluster r4
pick_copy /f/p6
stop_server "$VICTIM"
v=$(inspect_json "$VICTIM" "$DF" | jq -r .version)
ok ofs_server tool --data "$(srv_data "$VICTIM")" set-version "$DF" $((v - 1))
restart_same_port "$VICTIM"
use_server r4a
for n in a b c d; do wait_until 30 "r4$n to see all four up" sees_up "r4$n" 4; done
run 0 repair
repaired_finding stale_replica
assert_eq "$v" "$(inspect_json "$VICTIM" "$DF" | jq -r .version)" "version after the repair"
clean_scrub
all_read_back
stop_cluster r4

log "a garbled directory entry on one copy: record_corrupt repaired"
cluster r5
j=$(ofs stat --json /f)
DF=$(jq -r '.dirdata[0].oid' <<<"$j")
SIDS=$(jq -r '.dirdata[0].sids[]' <<<"$j")
VSID=$(jq -r '.dirdata[0].sids[1]' <<<"$j")
VICTIM=$(srv_by_sid "$VSID")
stop_server "$VICTIM"
printf 'not a dirent' | ofs_server tool --data "$(srv_data "$VICTIM")" set-key "$DF" p5 ||
	fail "tool set-key"
restart_same_port "$VICTIM"
use_server r5a
for n in a b c d; do wait_until 30 "r5$n to see all four up" sees_up "r5$n" 4; done
run 0 repair
repaired_finding record_corrupt
clean_scrub
all_read_back
stop_cluster r5

log "two copies of three corrupted: repaired from the third"
cluster r6
pick_copy /f/s12 0
P0=$VPATH S0=$VSID
pick_copy /f/s12 1
flip "$P0" 7000
flip "$VPATH" 9000
run 0 repair
assert_eq 2 "$(json "$T/report.json" '.findings | length')" "two findings ($(cat "$T/report.json"))"
assert_eq 2 "$(json "$T/report.json" '[.findings[] | select(.repaired)] | length')" "both repaired"
# The first repaired copy comes from the third; the second from the third
# or from the copy just repaired (it verifies by then).
third=$(grep -vx -e "$S0" -e "$VSID" <<<"$SIDS")
assert_eq "$third" "$(json "$T/report.json" '.findings[0].source')" "the first from the third copy"
assert_eq 0 "$(json "$T/report.json" '[.findings[] | select(.source == .server)] | length')" "none from itself"
clean_scrub
all_read_back
stop_cluster r6

log "all three copies corrupted: reported, nothing changed"
cluster r7
pick_copy /f/p7
for s in $SIDS; do
	p=$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r .path)
	flip "$p" 100
	sha "$p" >"$T/r7.$s.sha"
done
run 1 repair
assert_eq 3 "$(json "$T/report.json" '.findings | length')" "three findings ($(cat "$T/report.json"))"
assert_eq 0 "$(json "$T/report.json" '[.findings[] | select(.repaired)] | length')" "none repaired"
assert_eq 3 "$(json "$T/report.json" '[.findings[] | select(.repair_state == "left")] | length')" "all left"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "no copy verifies" "why it was left"
for s in $SIDS; do
	p=$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r .path)
	assert_eq "$(cat "$T/r7.$s.sha")" "$(sha "$p")" "copy on $s unchanged"
done
stop_cluster r7

log "--dry-run lists the action and changes nothing; repair --job repairs what a scrub found"
cluster r8
pick_copy /f/s16
flip "$VPATH"
before=$(sha "$VPATH")
run 1 scrub --no-repair
SCRUB=$JOB
run 1 repair --job "$SCRUB" --dry-run
assert_eq would "$(json "$T/report.json" '.findings[0].repair_state')" "dry run: would"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "would" "dry run action"
assert_eq "$before" "$(sha "$VPATH")" "dry run changed nothing"
run 0 repair --job "$SCRUB"
repaired_finding checksum_mismatch
assert_eq 1 "$(json "$T/status.json" .progress.objects_done)" "repair --job revisits only the copy at fault"
ok ofs_pbj report "$SCRUB" --json
assert_eq true "$(json "$T/last.out" '.findings[0].repaired')" "the scrub's finding says repaired"
clean_scrub
all_read_back
stop_cluster r8

log "a repair cap: the job stops at it, a human resumes; auto-repair as a site setting"
cluster r9
for f in /f/p1 /f/p2 /f/p3; do
	pick_copy "$f"
	flip "$VPATH" 10
done
assert_exit 1 ofs_pbj submit repair --max-repairs 2 --wait --json
JOB=$(json "$T/last.out" .id)
assert_eq paused "$(json "$T/last.out" .state)" "job state at the cap"
assert_contains "$(json "$T/last.out" .reason)" "repair cap reached" "reason"
assert_eq 2 "$(json "$T/last.out" .findings.repaired)" "repaired up to the cap"
ok ofs_pbj resume "$JOB"
ok ofs_pbj wait "$JOB" --json
assert_eq succeeded "$(json "$T/last.out" .state)" "resumed job state"
assert_eq 3 "$(json "$T/last.out" .findings.repaired)" "all repaired after the resume"
clean_scrub
pick_copy /f/p9
flip "$VPATH" 10
assert_exit 2 ofs_pbj config set scrub.auto_repair maybe
assert_exit 2 ofs_pbj config set no.such.setting 1
ok ofs_pbj config set scrub.auto_repair true
ok ofs_pbj config get scrub.auto_repair
assert_eq true "$(cat "$T/last.out")" "config get"
run 0 scrub
repaired_finding checksum_mismatch
ok ofs_pbj config unset scrub.auto_repair
all_read_back
stop_cluster r9

all_up() {
	local c=$1 n
	for n in a b c d; do wait_until 30 "$c$n to see all four up" sees_up "$c$n" 4; done
}
# on_all_copies "SIDS" CMD... : stop each server of SIDS, run CMD with
# $DATA set to its data dir, start it again where it was.
on_all_copies() {
	local sids=$1 s n
	shift
	for s in $sids; do
		n=$(srv_by_sid "$s")
		stop_server "$n"
		DATA=$(srv_data "$n") "$@" || fail "$* on $n"
		restart_same_port "$n"
	done
}
# the files of the list except those named
read_back_except() {
	local src dst _r _s _z
	while read -r src dst _r _s _z; do
		case " $* " in *" $dst "*) continue ;; esac
		ok ofs get "$dst" "$T/back"
		assert_same_file "$src" "$T/back"
		rm -f "$T/back"
	done <"$T/$CUR.list"
}

log "an entry removed from every copy of its directory: the file goes to /lost+found"
cluster r11
j=$(ofs stat --json /f)
DD=$(jq -r '.dirdata[0].oid' <<<"$j")
MF=$(ofs stat --json /f/p5 | jq -r .oid)
on_all_copies "$(jq -r '.dirdata[0].sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" rm-key "$1" p5' "$OFS_SERVER" "$DD"
use_server r11a
all_up r11
run 1 repair --dry-run
assert_eq orphan "$(json "$T/report.json" '[.findings[].kind] | join(" ")')" "dry run finds the orphan"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "would move it to /lost+found/p5.$MF" "dry run action"
assert_exit 3 ofs stat /lost+found
run 0 repair
assert_eq orphan "$(json "$T/report.json" '[.findings[].kind] | join(" ")')" "the orphan"
assert_eq true "$(json "$T/report.json" '.findings[0].repaired')" "orphan repaired"
ok ofs ls /lost+found
name=$(cat "$T/last.out")
assert_match "^p5\.$MF\.in-" "$name" "lost+found name says what and where"
ok ofs get "/lost+found/$name" "$T/back"
assert_same_file "$T/r11.src5" "$T/back" "the orphaned file's data"
LF=$(ofs stat --json /lost+found | jq -r .oid)
for sid in $(ofs stat --json "/lost+found/$name" | jq -r '.sids[]'); do
	assert_eq "$LF" "$(inspect_json "$(srv_by_sid "$sid")" "$MF" | jq -r .backref.owner)" \
		"back reference on $sid names /lost+found"
	assert_eq "$name" "$(inspect_json "$(srv_by_sid "$sid")" "$MF" | jq -r .backref.name)" \
		"back reference on $sid names the entry"
done
clean_scrub
read_back_except /f/p5
stop_cluster r11

log "a metafile removed everywhere: the dangling entry is removed, its dfile goes to /lost+found"
cluster r12
j=$(ofs stat --json /f/p6)
MF=$(jq -r .oid <<<"$j")
DF=$(jq -r '.dfiles[0].oid' <<<"$j")
on_all_copies "$(jq -r '.sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$MF"
use_server r12a
all_up r12
run 0 repair
assert_eq "dangling_pointer orphan" "$(json "$T/report.json" '[.findings[].kind] | sort | join(" ")')" "findings"
assert_eq 2 "$(json "$T/report.json" '[.findings[] | select(.repaired)] | length')" "both repaired"
assert_contains "$(json "$T/report.json" '.findings[] | select(.kind == "dangling_pointer") | .repair')" \
	"entry 'p6' removed" "dangling entry removed"
assert_exit 3 ofs stat /f/p6
ok ofs ls /lost+found
assert_match "^stripe0\.$DF\.of-$MF$" "$(cat "$T/last.out")" "the dfile's new name"
ok ofs get "/lost+found/$(cat "$T/last.out")" "$T/back"
assert_same_file "$T/r12.src6" "$T/back" "the dfile's bytes, readable again"
clean_scrub
read_back_except /f/p6
stop_cluster r12

log "a back reference rewritten to the wrong stripe: rewritten from the forward pointer"
cluster r13
j=$(ofs stat --json /f/s8)
MF=$(jq -r .oid <<<"$j")
DF=$(jq -r '.dfiles[1].oid' <<<"$j")
VSID=$(jq -r '.dfiles[1].sids[0]' <<<"$j")
on_all_copies "$VSID" \
	bash -c 'exec "$0" tool --data "$DATA" set-backref "$1" "$2" 2' "$OFS_SERVER" "$DF" "$MF"
use_server r13a
all_up r13
# (through repair --job: the scrub's finding names the owner, which is
# where the mismatch is seen)
run 1 scrub --no-repair
run 0 repair --job "$JOB"
assert_eq backref_mismatch "$(json "$T/report.json" '[.findings[].kind] | join(" ")')" "the mismatch"
assert_eq true "$(json "$T/report.json" '.findings[0].repaired')" "repaired"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "stripe 1" "rewritten to stripe 1"
for s in $(jq -r '.dfiles[1].sids[]' <<<"$j"); do
	assert_eq 1 "$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r .backref.stripe)" "stripe on $s"
done
clean_scrub
all_read_back
stop_cluster r13

log "copies that missed writes while their server was down: repaired first"
cluster r14
kill_server r14c
use_server r14a
ok ofs mkdir /late
for i in 1 2 3; do
	mkrand "$T/late$i" $((i * 50000 + 7))
	ok ofs put --replicas 3 --confidence 2 "$T/late$i" "/late/l$i"
done
restart_server r14c
all_up r14
run 0 repair
first=$(json "$T/report.json" '.findings[0]')
assert_eq stale_replica "$(jq -r .kind <<<"$first")" "the first finding"
assert_contains "$(jq -r .detail <<<"$first")" "recorded at write time" "from a stale record"
assert_eq 0 "$(json "$T/report.json" '[.findings[] | select(.repaired | not)] | length')" "all repaired"
use_server r14c
for i in 1 2 3; do
	ok ofs get "/late/l$i" "$T/back"
	assert_same_file "$T/late$i" "$T/back" "/late/l$i through the server that missed it"
done
use_server r14a
clean_scrub
all_read_back
stop_cluster r14

log "the server receiving a copy is killed mid-fetch: the job resumes, no half copy is served"
cluster r15
mkrand "$T/big" $((12 * MiB + 5))
ok ofs put --replicas 3 "$T/big" /f/big
echo "$T/big /f/big 3 1 1048576" >>"$T/r15.list"
pick_copy /f/big
flip "$VPATH" $((11 * MiB))
bg ofs_pbj submit repair --path /f/big --rate 2M --wait --json >"$T/rep.out" 2>"$T/rep.err"
REP=$BG
incoming() { ls "$(srv_data "$VICTIM")/incoming/" 2>/dev/null | grep -q .; }
wait_until 60 "the fetch to start writing on $VICTIM" incoming
kill_server "$VICTIM"
restart_same_port "$VICTIM"
assert_eq "" "$(ls "$(srv_data "$VICTIM")/incoming/")" "the half-fetched copy dropped at start"
grep -q "dropping an unfinished incoming copy" "$T/$VICTIM.log" || fail "no log of the dropped copy"
use_server r15a
all_up r15
wait_pid "$REP" 120
assert_eq 0 "$REAP_ST" "the repair job's exit status after the restart ($(cat "$T/rep.out" 2>/dev/null | head -c 600))"
ok ofs_pbj report 1 --json
assert_eq 0 "$(json "$T/last.out" '[.findings[] | select(.repaired | not)] | length')" "every finding repaired"
use_server "$VICTIM"
ok ofs get /f/big "$T/back"
assert_same_file "$T/big" "$T/back" "/f/big through the restarted server"
use_server r15a
clean_scrub
all_read_back
stop_cluster r15

log "a server taken out of service: its copies recreated by placement, handles rewritten"
cluster r16
# (the root directory's copies are not moved in this release: take out
# the one server that holds none of them)
root_sids=$(ofs stat --json / | jq -r '.sids[]')
X=""
for n in a b c d; do grep -qx "$(srv_sid "r16$n")" <<<"$root_sids" || X=r16$n; done
[ -n "$X" ] || fail "every server holds a copy of the root"
XS=$(srv_sid "$X")
use_server r16a
[ "$X" = r16a ] && use_server r16b
ok ofs_pbj server set "$XS" --state out
stop_server "$X"
sees_out() { ofs_pbj --cluster "$(srv_addr "$1")" servers --json 2>/dev/null |
	jq -e --arg s "$XS" 'any(.servers[]; .sid == $s and .state == "out")' >/dev/null; }
for n in a b c d; do
	[ "r16$n" = "$X" ] || wait_until 30 "r16$n to see $X out" sees_out "r16$n"
done
handles_naming_x() {
	local src dst _r _s _z
	while read -r src dst _r _s _z; do
		ofs stat --json "$dst" | jq -r '.sids[], .dfiles[].sids[]'
	done <"$T/r16.list"
	ofs stat --json /f | jq -r '.sids[], .dirdata[].sids[]'
}
before=$(handles_naming_x | grep -cx "$XS")
[ "$before" -gt 0 ] || fail "no handle names $X to begin with"
run 0 repair
assert_eq "$before" "$(json "$T/report.json" '[.findings[] | select(.kind == "missing_replica" and .repaired)] | length')" \
	"one repaired missing_replica per copy on $X ($(json "$T/report.json" '[.findings[] | select(.repaired | not)]'))"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "recreated on" "the move says where"
assert_eq 0 "$(handles_naming_x | grep -cx "$XS")" "handles naming $X after the repair"
all_read_back
clean_scrub
for n in a b c d; do [ "r16$n" = "$X" ] || stop_server "r16$n"; done

log "bad input"
cluster r10
assert_exit 2 ofs_pbj submit repair --job 999
assert_exit 2 ofs_pbj submit repair --job nope
assert_exit 2 ofs_pbj submit repair --repair
assert_exit 2 ofs_pbj submit scrub --max-repairs 5
assert_exit 2 ofs_pbj submit repair --max-repairs -1
assert_exit 2 ofs_pbj wait 12345
stop_cluster r10

finish
