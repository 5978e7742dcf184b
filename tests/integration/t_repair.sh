#!/bin/bash
# t_repair: `ofs-pbj submit repair` (and `scrub --repair`, `repair --job`)
# on four servers (racks r1 r1 r2 r3) holding 3 copies of files, some
# striped; the cases one after another in one cluster, each damaging
# files no case before it touched, and each (but the last, whose damage is
# left) starting where the one before left the cluster: mended, its scrub
# clean, every file read back. For each damage scrub detects:
# inject it, repair it, assert the finding says repaired and from which
# copy, then a new scrub is clean and every file reads back (ofs get)
# with its original digest. Small files (up to 64 KiB) keep their bytes
# inline, in the servers' key-value stores: a lost inline value and a
# flipped inline byte (made with the object tool, the server stopped) are
# repaired like a stream's, and a repaired small copy is inline again.
# Also:
#  - two copies of three corrupted: repaired from the third;
#  - all three corrupted: reported, left, nothing changed on disk;
#  - --dry-run lists the action and changes nothing;
#  - repair --job of a scrub job: only that job's objects; the scrub's
#    findings then say repaired;
#  - a repair cap: the job stops (paused, exit 1) at the cap and repairs
#    the rest once resumed;
#  - the copy thrown away is kept in the server's quarantine folder;
#  - auto-repair as a site setting; bad input.
# Structure, placement and crashes: t_repair_structure.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/repair_lib.sh"

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

log "a truncated byte stream: size_mismatch repaired"
use_server r1a   # (the case before left it clean)
pick_copy /f/s8
truncate -s 1000 "$VPATH"
run 0 scrub --repair
repaired_finding size_mismatch
clean_scrub
all_read_back

log "a deleted byte-stream file: missing_replica repaired"
use_server r1a   # (the case before left it clean)
pick_copy /f/p22
rm -f "$VPATH"
run 0 repair
repaired_finding missing_replica
[ -f "$VPATH" ] || fail "the byte stream was not recreated at $VPATH"
clean_scrub
all_read_back

log "a lost inline value (a small file's bytes kept in the key-value store): missing_replica repaired"
pick_copy /f/p5
[ -z "$VPATH" ] || fail "expected /f/p5 ($(stat -c %s "$T/r1.src5") bytes) held inline, not at $VPATH"
damage_copy "$VICTIM" "$DF" lose
run 0 repair
repaired_finding missing_replica
assert_eq inline "$(inspect_json "$VICTIM" "$DF" | jq -r .stored)" "the repaired copy's bytes"
clean_scrub
all_read_back

log "one copy's version rolled back: stale_replica repaired"
use_server r1a   # (the case before left it clean)
pick_copy /f/p6
stop_server "$VICTIM"
v=$(inspect_json "$VICTIM" "$DF" | jq -r .version)
ok ofs_server tool --data "$(srv_data "$VICTIM")" set-version "$DF" $((v - 1))
restart_same_port "$VICTIM"
use_server r1a
for n in a b c d; do wait_until 30 "r1$n to see all four up" sees_up "r1$n" 4; done
run 0 repair
repaired_finding stale_replica
assert_eq "$v" "$(inspect_json "$VICTIM" "$DF" | jq -r .version)" "version after the repair"
clean_scrub
all_read_back

log "a garbled directory entry on one copy: record_corrupt repaired"
use_server r1a   # (the case before left it clean)
j=$(ofs stat --json /f)
DF=$(jq -r '.dirdata[0].oid' <<<"$j")
SIDS=$(jq -r '.dirdata[0].sids[]' <<<"$j")
VSID=$(jq -r '.dirdata[0].sids[1]' <<<"$j")
VICTIM=$(srv_by_sid "$VSID")
stop_server "$VICTIM"
printf 'not a dirent' | ofs_server tool --data "$(srv_data "$VICTIM")" set-key "$DF" p5 ||
	fail "tool set-key"
restart_same_port "$VICTIM"
use_server r1a
for n in a b c d; do wait_until 30 "r1$n to see all four up" sees_up "r1$n" 4; done
run 0 repair
repaired_finding record_corrupt
clean_scrub
all_read_back

log "two copies of three corrupted: repaired from the third"
use_server r1a   # (the case before left it clean)
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

log "--dry-run lists the action and changes nothing; repair --job repairs what a scrub found"
use_server r1a   # (the case before left it clean)
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

log "a repair cap: the job stops at it, a human resumes; auto-repair as a site setting"
use_server r1a   # (the case before left it clean)
for f in /f/p23 /f/s20 /f/p1; do                 # (p1 inline: with the tool)
	pick_copy "$f"
	damage_copy "$VICTIM" "$DF" flip 10
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
pick_copy /f/p9                                  # (a flipped inline byte)
damage_copy "$VICTIM" "$DF" flip 10
assert_exit 2 ofs_pbj config set scrub.auto_repair maybe
assert_exit 2 ofs_pbj config set no.such.setting 1
ok ofs_pbj config set scrub.auto_repair true
ok ofs_pbj config get scrub.auto_repair
assert_eq true "$(cat "$T/last.out")" "config get"
run 0 scrub
repaired_finding checksum_mismatch
ok ofs_pbj config unset scrub.auto_repair
all_read_back

log "bad input"
use_server r1a   # (the case before left it clean)
assert_exit 2 ofs_pbj submit repair --job 999
assert_exit 2 ofs_pbj submit repair --job nope
assert_exit 2 ofs_pbj submit repair --repair
assert_exit 2 ofs_pbj submit scrub --max-repairs 5
assert_exit 2 ofs_pbj submit repair --max-repairs -1
assert_exit 2 ofs_pbj wait 12345

log "all three copies corrupted: reported, nothing changed"
use_server r1a   # (the case before left it clean)
pick_copy /f/s24
for s in $SIDS; do
	p=$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r .path)
	flip "$p" 100
	sha "$p" >"$T/r1.$s.sha"
done
run 1 repair
assert_eq 3 "$(json "$T/report.json" '.findings | length')" "three findings ($(cat "$T/report.json"))"
assert_eq 0 "$(json "$T/report.json" '[.findings[] | select(.repaired)] | length')" "none repaired"
assert_eq 3 "$(json "$T/report.json" '[.findings[] | select(.repair_state == "left")] | length')" "all left"
assert_contains "$(json "$T/report.json" '.findings[0].repair')" "no copy verifies" "why it was left"
for s in $SIDS; do
	p=$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r .path)
	assert_eq "$(cat "$T/r1.$s.sha")" "$(sha "$p")" "copy on $s unchanged"
done
assert_exit 3 ofs get /f/s24 "$T/back"
rm -f "$T/back"
read_back_except /f/s24
stop_cluster r1

finish
