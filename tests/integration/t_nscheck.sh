#!/bin/bash
# t_nscheck: the namespace and layout check, case by case (after Lustre's
# sanity-lfsck and Ceph's scrub tests). Each case breaks one thing in a
# four-server cluster (racks r1 r1 r2 r3, six files in /f: p1 p2 p3 p5 p6
# with 3 copies, s4 striped over 3 dfiles), then:
#   repair --dry-run --metadata-only
#                      finds exactly the expected findings (the check as
#                      a join, scrubber/scrub_join.c), says what it would
#                      do, and changes nothing;
#   repair             finds them again and mends them;
#   scrub              is clean, and the files read back.
# The cases run in four clusters, one after another in each: a case starts
# where the one before it left the cluster - mended, its scrub clean and
# every file read back - so it finds only its own damage. (A fresh
# cluster per case cost more than the cases.) The order keeps what a case
# asserts about the namespace true: the root's only entry is /f until /g is
# made, /f holds only the six files where a case counts them, and a case
# that leaves something behind - a stripe lost for good, a file renamed or
# holding another's bytes, /f gone - ends its cluster.
# Cases: a stripe that exists nowhere (reported with the byte ranges
# lost, left); a dfile's back reference deleted; a directory's entry
# deleted on every copy (it comes back with its contents); an entry
# deleted on one copy, added on one copy, changed on one copy
# (keyval_mismatch, the majority wins); a dirdata lost on every copy (its
# files come back from their back references); a metafile lost on one
# copy; the root's dirdata damaged on one copy; two directories naming
# one file (multiple_owners); two files sharing one stripe (the second
# gets its own copy); two directories sharing one dirdata (the second
# gets a new, empty one); an entry whose type is wrong; a directory
# whose parent is gone (to /lost+found with its contents); a back
# reference naming the wrong entry; a garbled entry on one copy; a
# metafile's stripe pointer broken (its dfile takes the stripe back); a
# rename killed between its steps, both ways.
. "$(dirname "$0")/lib.sh"
export OFS_REPAIR_FILES=6
. "$(dirname "$0")/repair_lib.sh"

ZERO=00000000000000000000000000000000

kinds() { json "$T/report.json" '[.findings[].kind] | sort | join(" ")'; }
actions() { json "$T/report.json" '[.findings[].repair] | join(" | ")'; }
# facts : in F, from one jq run on the report: its kinds, how many
# findings would not be repaired, how many were not, and its actions
facts() {
	mapfile -t F < <(jq -r '([.findings[].kind] | sort | join(" ")),
		([.findings[] | select(.repair_state != "would")] | length),
		([.findings[] | select(.repaired | not)] | length),
		([.findings[].repair] | join(" | ") | gsub("\n"; " "))' "$T/report.json")
	[ ${#F[@]} = 4 ] || fail "cannot read the report: $(head -c 400 "$T/report.json")"
}

# mend "KINDS" "DRY-RUN ACTION" "ACTION" : the three jobs of a case.
mend() {
	run 1 repair --dry-run --metadata-only
	facts
	assert_eq "$1" "${F[0]}" "dry run finds ($(cat "$T/report.json"))"
	assert_eq 0 "${F[1]}" "dry run: every finding would be repaired (${F[3]})"
	assert_contains "${F[3]}" "$2" "dry run says what it would do"
	run 0 repair
	facts
	assert_eq "$1" "${F[0]}" "repair finds ($(cat "$T/report.json"))"
	assert_eq 0 "${F[2]}" "every finding repaired (${F[3]})"
	assert_contains "${F[3]}" "$3" "what repair did"
	cp "$T/report.json" "$T/repaired.json"
	clean_scrub
}

# case_start NAME : a fresh cluster; case_next: the next case in the same
# one (the case before left it clean); case_ready: its servers up again
case_start() { cluster "$1"; }
case_next() { use_server "${CUR}a"; }
case_ready() { use_server "${CUR}a"; all_up "$CUR"; }

dirdata_of() { ofs stat --json "$1" | jq -r '.dirdata[0].oid'; }
dirdata_sids() { ofs stat --json "$1" | jq -r '.dirdata[0].sids[]'; }
# one copy of /f's dirdata that is not its primary
f_second() { ofs stat --json /f | jq -r '.dirdata[0].sids[1]'; }
# drop_dirdata DIRDATA : (for on_all_copies) its entries, then itself
drop_dirdata() {
	bash -c 'for k in $("$0" tool --data "$DATA" keys "$1" --json | jq -r ".keys[].key"); do
			"$0" tool --data "$DATA" rm-key "$1" "$k" || exit 1
		done
		exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$1"
}
keys_on() { "$OFS_SERVER" tool --data "$(srv_data "$1")" keys "$2" --json | jq -r '[.keys[].key] | sort | join(" ")'; }

log "a dfile's back reference deleted: written again from its metafile"
case_start c1
j=$(ofs stat --json /f/s4)
MF=$(jq -r .oid <<<"$j")
DF=$(jq -r '.dfiles[2].oid' <<<"$j")
on_all_copies "$(jq -r '.dfiles[2].sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" set-backref "$1" "$2" 0' "$OFS_SERVER" "$DF" "$ZERO"
case_ready
mend backref_mismatch "would rewrite its back reference" "back reference rewritten"
for s in $(jq -r '.dfiles[2].sids[]' <<<"$j"); do
	assert_eq "$MF 2" "$(inspect_json "$(srv_by_sid "$s")" "$DF" | jq -r '"\(.backref.owner) \(.backref.stripe)"')" \
		"back reference on $s"
done
all_read_back

log "an entry deleted on one copy: keyval_mismatch, the majority's copy wins"
case_next
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" rm-key "$DD" p1 || fail "tool rm-key"
restart_same_port "$V"
case_ready
mend keyval_mismatch "would" "fetched"
assert_contains " $(keys_on "$V" "$DD") " " p1 " "the entry is back on that copy"
all_read_back

log "an extra entry on one copy: keyval_mismatch, the majority's copy wins"
case_next
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" get-key "$DD" p1 >"$T/p1.ent" || fail "tool get-key"
ofs_server tool --data "$(srv_data "$V")" set-key "$DD" extra <"$T/p1.ent" || fail "tool set-key"
restart_same_port "$V"
case_ready
mend keyval_mismatch "would" "fetched"
assert_not_contains " $(keys_on "$V" "$DD") " " extra " "the extra entry is gone"
assert_exit 3 ofs stat /f/extra
all_read_back

log "the root directory's copy damaged (an entry lost on one copy): mended from the others"
case_next
RD=$(dirdata_of /)
V=$(srv_by_sid "$(ofs stat --json / | jq -r '.dirdata[0].sids[1]')")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" rm-key "$RD" f || fail "tool rm-key"
restart_same_port "$V"
case_ready
mend keyval_mismatch "would" "fetched"
assert_eq f "$(keys_on "$V" "$RD")" "the root's entry is back on that copy"
all_read_back

log "two directories name one file: multiple_owners, the back reference's owner keeps it"
case_next
ok ofs mkdir /g
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" get-key "$DD" p1 >"$T/p1.ent" || fail "tool get-key"
restart_same_port "$V"
case_ready
on_all_copies "$(dirdata_sids /g)" \
	bash -c 'exec "$0" tool --data "$DATA" set-key "$1" p1 <"$2"' "$OFS_SERVER" "$(dirdata_of /g)" "$T/p1.ent"
case_ready
mend multiple_owners "would be: entry 'p1' removed" "entry 'p1' removed from this directory"
assert_contains "$(json "$T/repaired.json" '.findings[0].detail')" "both point at it" "both owners named"
assert_exit 3 ofs stat /g/p1
all_read_back

log "a stripe that exists nowhere: reported with the byte ranges lost, never truncated"
case_next
j=$(ofs stat --json /f/s4)
DF=$(jq -r '.dfiles[1].oid' <<<"$j")
on_all_copies "$(jq -r '.dfiles[1].sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$DF"
case_ready
run 1 repair --metadata-only
assert_eq dangling_pointer "$(kinds)" "the dangling stripe"
# 1052576 bytes in strips of 262144 over 3 dfiles: stripe 1 held these
assert_contains "$(json "$T/report.json" '.findings[0].detail')" \
	"bytes lost: 262144-524287 1048576-1052575 (266144 bytes in all)" "the lost ranges"
assert_eq left "$(json "$T/report.json" '.findings[0].repair_state')" "left for a human"
assert_eq 1052576 "$(ofs stat --json /f/s4 | jq -r .size)" "the file is not truncated"
run 1 scrub --no-repair
assert_eq dangling_pointer "$(kinds)" "still reported"
read_back_except /f/s4
stop_cluster c1

log "an entry changed on one copy: keyval_mismatch, the majority's copy wins"
case_start c2
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" get-key "$DD" p2 >"$T/p2.ent" || fail "tool get-key"
ofs_server tool --data "$(srv_data "$V")" set-key "$DD" p1 <"$T/p2.ent" || fail "tool set-key"
restart_same_port "$V"
case_ready
mend keyval_mismatch "would" "fetched"
ofs_server tool --data "$(srv_data "$V")" get-key "$DD" p1 >"$T/p1.now" || fail "tool get-key"
assert_not_same_file "$T/p2.ent" "$T/p1.now" "p1 no longer names p2's file there"
all_read_back

log "a dirdata lost on every copy: made again, its files come back from their back references"
case_next
DD=$(dirdata_of /f)
on_all_copies "$(dirdata_sids /f)" drop_dirdata "$DD"
case_ready
run 1 repair --dry-run --metadata-only
assert_eq "dangling_pointer orphan orphan orphan orphan orphan orphan" "$(kinds)" "dry run finds"
assert_contains "$(actions)" "would be: dirdata $DD made again, empty" "dry run: the dirdata"
assert_contains "$(actions)" "would have its entry 'p1'" "dry run: the files"
run 0 repair
# (the first file relinked may make the dirdata again before its
# directory's check looks, which then finds nothing dangling)
assert_match "^(dangling_pointer )?orphan orphan orphan orphan orphan orphan$" "$(kinds)" "repair finds"
assert_eq 0 "$(json "$T/report.json" '[.findings[] | select(.repaired | not)] | length')" \
	"every finding repaired ($(actions))"
clean_scrub
assert_eq "$DD" "$(dirdata_of /f)" "the same dirdata"
ok ofs ls /f
assert_eq "p1 p2 p3 p5 p6 s4" "$(sort "$T/last.out" | tr '\n' ' ' | sed 's/ $//')" "every file is back"
all_read_back

log "a metafile lost on one copy: fetched again"
case_next
j=$(ofs stat --json /f/p2)
MF=$(jq -r .oid <<<"$j")
V=$(srv_by_sid "$(jq -r '.sids[1]' <<<"$j")")
on_all_copies "$(jq -r '.sids[1]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$MF"
case_ready
mend missing_replica "would" "fetched"
ok inspect_json "$V" "$MF"
all_read_back

log "an entry whose type is wrong: rewritten from the object's own record"
case_next
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
ofs_server tool --data "$(srv_data "$V")" get-key "$DD" p1 >"$T/p1.ent" || fail "tool get-key"
restart_same_port "$V"
{ printf '\003'; tail -c +2 "$T/p1.ent"; } >"$T/p1.dir"
case_ready
on_all_copies "$(dirdata_sids /f)" \
	bash -c 'exec "$0" tool --data "$DATA" set-key "$1" p1 <"$2"' "$OFS_SERVER" "$DD" "$T/p1.dir"
case_ready
mend backref_mismatch "would be: entry 'p1' rewritten as a metafile" "rewritten as a metafile"
assert_contains "$(json "$T/repaired.json" '.findings[0].detail')" "says directory" "the evidence"
all_read_back

log "two directories share one dirdata: multiple_owners, the second gets a new, empty one"
case_next
ok ofs mkdir /g
jg=$(ofs stat --json /g)
G=$(jq -r .oid <<<"$jg")
OLDG=$(jq -r '.dirdata[0].oid' <<<"$jg")
DDF=$(dirdata_of /f)
on_all_copies "$(jq -r '.dirdata[0].sids[]' <<<"$jg")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$OLDG"
on_all_copies "$(jq -r '.sids[]' <<<"$jg")" \
	bash -c 'exec "$0" tool --data "$DATA" set-part "$1" 0 "$2"' "$OFS_SERVER" "$G" "$DDF"
case_ready
mend multiple_owners "would be: dirdata 0 of this directory made anew, empty" \
	"dirdata 0 of this directory made anew, empty"
NEWG=$(ofs stat --json /g | jq -r '.dirdata[0].oid')
[ "$NEWG" != "$DDF" ] && [ "$NEWG" != "$OLDG" ] || fail "/g's dirdata 0 is $NEWG: not a new one"
assert_eq "$DDF" "$(dirdata_of /f)" "/f keeps its dirdata"
ok ofs ls /g
assert_eq "" "$(cat "$T/last.out")" "/g is empty"
echo "a file in the mended directory" >"$T/g1"
ok ofs put "$T/g1" /g/g1
ok ofs get /g/g1 "$T/back"
assert_same_file "$T/g1" "$T/back" "a file put in /g afterwards"
all_read_back

log "a directory whose parent is gone: to /lost+found with its contents"
case_next
ok ofs mkdir /f/sub
echo "inside the orphaned directory" >"$T/x"
ok ofs put "$T/x" /f/sub/x
j=$(ofs stat --json /f)
F=$(jq -r .oid <<<"$j")
on_all_copies "$(jq -r '.dirdata[0].sids[]' <<<"$j")" drop_dirdata "$(jq -r '.dirdata[0].oid' <<<"$j")"
on_all_copies "$(jq -r '.sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$F"
case_ready
mend "dangling_pointer orphan orphan orphan orphan orphan orphan orphan" \
	"would move it to /lost+found/sub." "moved to /lost+found/sub."
ok ofs ls /lost+found
assert_eq 7 "$(wc -l <"$T/last.out")" "the directory and the six files in /lost+found"
SUBNAME=$(grep '^sub\.' "$T/last.out")
ok ofs get "/lost+found/$SUBNAME/x" "$T/back"
assert_same_file "$T/x" "$T/back" "the directory's file"
assert_exit 3 ofs stat /f
stop_cluster c2

log "a metafile's stripe pointer broken: the dfile it lost takes its stripe back"
case_start c3
j=$(ofs stat --json /f/s4)
MF=$(jq -r .oid <<<"$j")
DF=$(jq -r '.dfiles[1].oid' <<<"$j")
on_all_copies "$(jq -r '.sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" set-part "$1" 1 0123456789abcdef0123456789abcdef' \
	"$OFS_SERVER" "$MF"
case_ready
run 1 repair --dry-run --metadata-only
assert_eq "dangling_pointer orphan" "$(kinds)" "dry run finds"
assert_contains "$(actions)" "would be stripe 1 of $MF again" "dry run: the dfile"
# (the stripe that exists nowhere is left, unless the dfile took it back
# before the metafile's check looked)
assert_exit_in "0 1" ofs_pbj submit repair --wait --json
JOB=$(json "$T/last.out" .id)
ok ofs_pbj report "$JOB" --json
cp "$T/last.out" "$T/report.json"
assert_contains "$(json "$T/report.json" '.findings[] | select(.kind == "orphan") | .repair')" \
	"stripe 1 of $MF again" "the dfile re-attached"
assert_eq "$DF" "$(ofs stat --json /f/s4 | jq -r '.dfiles[1].oid')" "the metafile names it again"
clean_scrub
all_read_back

log "a directory's entry deleted on every copy: the directory comes back, contents and all"
case_next
ok ofs mkdir /f/sub
echo "inside the lost directory" >"$T/x"
ok ofs put "$T/x" /f/sub/x
SUB=$(ofs stat --json /f/sub | jq -r .oid)
on_all_copies "$(dirdata_sids /f)" \
	bash -c 'exec "$0" tool --data "$DATA" rm-key "$1" sub' "$OFS_SERVER" "$(dirdata_of /f)"
case_ready
assert_exit 3 ofs stat /f/sub
mend orphan "would have its entry 'sub'" "entry 'sub' in directory"
assert_eq "$SUB" "$(ofs stat --json /f/sub | jq -r .oid)" "the same directory"
ok ofs get /f/sub/x "$T/back"
assert_same_file "$T/x" "$T/back" "its file"
all_read_back

log "a rename killed after its new entry: two owners, rolled back to the old name"
case_next
ok ofs mkdir /g
MF=$(ofs stat --json /f/p1 | jq -r .oid)
OFS_FAULT=rename-entry-made ofs mv /f/p1 /g/q
assert_eq "$MF $MF" "$(ofs stat --json /f/p1 | jq -r .oid) $(ofs stat --json /g/q | jq -r .oid)" \
	"the kill left both entries"
mend multiple_owners "would be: entry 'q' removed" "entry 'q' removed"
assert_exit 3 ofs stat /g/q
all_read_back

log "two files share one stripe: multiple_owners, the second file gets its own copy"
case_next
j2=$(ofs stat --json /f/p2)
j3=$(ofs stat --json /f/p3)
MF2=$(jq -r .oid <<<"$j2")
OLD2=$(jq -r '.dfiles[0].oid' <<<"$j2")
DF3=$(jq -r '.dfiles[0].oid' <<<"$j3")
on_all_copies "$(jq -r '.dfiles[0].sids[]' <<<"$j2")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$OLD2"
on_all_copies "$(jq -r '.sids[]' <<<"$j2")" \
	bash -c 'exec "$0" tool --data "$DATA" set-part "$1" 0 "$2"' "$OFS_SERVER" "$MF2" "$DF3"
case_ready
mend multiple_owners "would be: stripe 0 of this file given its own copy of $DF3's 9217 bytes" \
	"stripe 0 of this file given its own copy of $DF3 (9217 bytes)"
assert_contains "$(json "$T/repaired.json" '.findings[0].detail')" "both point at it" "both owners named"
j2=$(ofs stat --json /f/p2)
NEW2=$(jq -r '.dfiles[0].oid' <<<"$j2")
[ "$NEW2" != "$DF3" ] && [ "$NEW2" != "$OLD2" ] || fail "p2's stripe 0 is $NEW2: not a new dfile"
assert_eq 3 "$(jq -r '.dfiles[0].sids | length' <<<"$j2")" "the copy has as many copies"
for s in $(jq -r '.dfiles[0].sids[]' <<<"$j2"); do
	assert_eq "$MF2 0" "$(inspect_json "$(srv_by_sid "$s")" "$NEW2" | jq -r '"\(.backref.owner) \(.backref.stripe)"')" \
		"the copy's back reference on $s"
done
assert_eq "$DF3" "$(ofs stat --json /f/p3 | jq -r '.dfiles[0].oid')" "p3 keeps its dfile"
SRC3=$(awk '$2 == "/f/p3" { print $1 }' "$T/$CUR.list")
ok ofs get /f/p2 "$T/back"
head -c "$(jq -r .size <<<"$j2")" "$SRC3" >"$T/want2"
assert_same_file "$T/want2" "$T/back" "p2 now holds p3's bytes, its own copy"
read_back_except /f/p2
stop_cluster c3

log "a back reference naming the wrong entry: written again from the entry"
case_start c4
MF=$(ofs stat --json /f/p2 | jq -r .oid)
F=$(ofs stat --json /f | jq -r .oid)
on_all_copies "$(ofs stat --json /f/p2 | jq -r '.sids[]')" \
	bash -c 'exec "$0" tool --data "$DATA" set-backref "$1" "$2" 0 wrongname' "$OFS_SERVER" "$MF" "$F"
case_ready
mend backref_mismatch "would rewrite its back reference" "name 'p2'"
for s in $(ofs stat --json /f/p2 | jq -r '.sids[]'); do
	assert_eq p2 "$(inspect_json "$(srv_by_sid "$s")" "$MF" | jq -r .backref.name)" "back reference on $s"
done
all_read_back

log "a garbled entry on one copy: record_corrupt, rebuilt from a good copy"
case_next
DD=$(dirdata_of /f)
V=$(srv_by_sid "$(f_second)")
stop_server "$V"
printf 'not a dirent' | ofs_server tool --data "$(srv_data "$V")" set-key "$DD" p1 || fail "tool set-key"
restart_same_port "$V"
case_ready
mend record_corrupt "would" "fetched"
all_read_back

log "a rename killed after its back reference: two owners, rolled forward to the new name"
case_next
ok ofs mkdir /g
MF=$(ofs stat --json /f/p1 | jq -r .oid)
OFS_FAULT=rename-backref-set ofs mv /f/p1 /g/q
assert_eq "$MF $MF" "$(ofs stat --json /f/p1 | jq -r .oid) $(ofs stat --json /g/q | jq -r .oid)" \
	"the kill left both entries"
mend multiple_owners "would be: entry 'p1' removed" "entry 'p1' removed"
assert_exit 3 ofs stat /f/p1
ok ofs get /g/q "$T/back"
assert_same_file "$T/$CUR.src1" "$T/back" "the file under its new name"
read_back_except /f/p1
stop_cluster c4

finish
