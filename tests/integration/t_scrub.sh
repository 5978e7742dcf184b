#!/bin/bash
# t_scrub: `ofs-pbj submit scrub --wait` on four servers (racks r1 r1 r2
# r3) holding 3 copies of files, some striped; each case in a fresh
# cluster, the exact findings asserted from `report --json`:
#  - a clean cluster: exit 0, zero findings, every object of every server
#    visited (status --json progress);
#  - a flipped byte in one copy: exit 1, one checksum_mismatch naming that
#    server, that dfile and that chunk; --path limited to that file, or to
#    its directory, finds it, limited to another file does not;
#  - a truncated byte stream: one size_mismatch; and a flipped byte in a
#    small file's inline value (its bytes kept in the key-value store;
#    ofs-server tool flip-byte): one checksum_mismatch on that chunk;
#  - a deleted byte-stream file, and a lost inline value (tool
#    lose-bytes): one missing_replica each (defined so: the record is
#    there, its bytes are not; see ofs-pbj(8));
#  - one copy's version rolled back (ofs-server tool set-version; the
#    files of this case are small, held inline): one
#    stale_replica on that copy (said by the object's lead copy); then
#    the lead's own copy rolled back too: said once, by itself;
#  - a garbled directory entry on one copy (tool set-key): one
#    record_corrupt, not also a replica_conflict from its siblings;
#  - an entry removed from every copy of its directory: one orphan (the
#    metafile), reported by the metafile's primary;
#  - a metafile removed from every server: a dangling_pointer from its
#    directory, and its dfile an orphan whose owner exists nowhere;
#  - a dfile's back reference rewritten to the wrong stripe (tool
#    set-backref): one backref_mismatch on that copy;
# and the job's status and report documents have ofs-pbj(8)'s shape.
. "$(dirname "$0")/lib.sh"

KiB=1024 MiB=$((1024 * 1024))
NFILES=${OFS_SCRUB_FILES:-48}     # (each case needs a few files of each shape; every one is scrubbed in each of nine clusters)

# cluster N : a fresh four-server cluster under $T/cN with files on it.
scrub_size() { if [ $(($1 % 4)) = 0 ]; then echo $((MiB / 4 + $1 * 1000)); else echo $(($1 * 3 * KiB + 1)); fi; }
cluster() { cluster_with_files "$1" "$NFILES" scrub_size "3 3 65536"; }

# scrub EXPECTED_EXIT : run a scrub to its end; job id in $JOB.
scrub() {
	assert_exit "$1" ofs_pbj submit scrub --wait --json
	assert_json "$T/last.out"
	JOB=$(json "$T/last.out" .id)
	cp "$T/last.out" "$T/status.json"
	assert_eq succeeded "$(json "$T/status.json" .state)" "job state"
	ok ofs_pbj report "$JOB" --json
	assert_json "$T/last.out"
	cp "$T/last.out" "$T/report.json"
}

# a dfile copy to damage: the second file's dfile, its copy on its
# second server. Sets DF (oid), VICTIM (server name), VSID, VPATH.
pick_copy() {
	local path=$1 j
	j=$(ofs stat --json "$path") || fail "stat $path"
	DF=$(jq -r '.dfiles[0].oid' <<<"$j")
	VSID=$(jq -r '.dfiles[0].sids[1]' <<<"$j")
	VICTIM=$(srv_by_sid "$VSID") || fail "no server with SID $VSID"
	VPATH=$(inspect_json "$VICTIM" "$DF" | jq -r .path)
	[ "$VPATH" != null ] || VPATH=              # (held inline: damage_copy)
	[ -z "$VPATH" ] || [ -f "$VPATH" ] || fail "no byte stream at $VPATH"
}

# only_finding KIND : the report has exactly one finding, of KIND, on the
# damaged copy.
findings_are() {
	assert_eq "$1" "$(json "$T/report.json" '[.findings[].kind] | sort | join(" ")')" \
		"finding kinds ($(cat "$T/report.json"))"
}

only_finding() {
	assert_eq 1 "$(json "$T/report.json" '.findings | length')" "number of findings ($(cat "$T/report.json"))"
	assert_eq "$1" "$(json "$T/report.json" '.findings[0].kind')" "finding kind"
	assert_eq "$VSID" "$(json "$T/report.json" '.findings[0].server')" "finding server"
	assert_eq "$DF" "$(json "$T/report.json" '.findings[0].oid')" "finding oid"
	assert_eq false "$(json "$T/report.json" '.findings[0].repaired')" "finding repaired"
	assert_eq 1 "$(json "$T/status.json" ".findings.by_kind.$1")" "status by_kind.$1"
}

log "a clean cluster: no findings"
cluster c1
scrub 0
assert_eq 0 "$(json "$T/report.json" '.findings | length')" "findings on a clean cluster"
assert_eq "$JOB" "$(json "$T/report.json" .job)" "report's job"
assert_eq 0 "$(json "$T/status.json" .findings.total)" "status findings.total"
assert_eq 4 "$(json "$T/status.json" '.tasks | length')" "one task per server"
for k in id type state priority submitted started finished progress tasks findings; do
	jq -e "has(\"$k\")" "$T/status.json" >/dev/null || fail "status --json lacks \"$k\""
done
for k in objects_done objects_total bytes_done bytes_total rate_bytes_per_s eta_s; do
	jq -e ".progress | has(\"$k\")" "$T/status.json" >/dev/null || fail "status progress lacks \"$k\""
done
assert_eq scrub "$(json "$T/status.json" .type)" "job type"
[ "$(json "$T/status.json" '[.tasks[] | select(.state == "succeeded")] | length')" = 4 ] ||
	fail "not every task succeeded: $(cat "$T/status.json")"
# Every object on every server was visited: the sum of the servers' object
# counts (ofs-pbj servers) is what the tasks did.
objs=$(ofs_pbj servers --json | jq '[.servers[].objects] | add')
assert_eq "$objs" "$(json "$T/status.json" .progress.objects_done)" "objects scrubbed"
[ "$(json "$T/status.json" .progress.bytes_done)" -gt $((NFILES / 4 * MiB / 4 * 3)) ] ||
	fail "too few bytes read: $(json "$T/status.json" .progress.bytes_done)"
ok ofs_pbj list --json
assert_eq "$JOB" "$(json "$T/last.out" '.jobs[0].id')" "list shows the job"
stop_cluster c1

log "a flipped byte in one copy: checksum_mismatch on that chunk"
cluster c2
pick_copy /f/s4
# chunk 0 is bytes 0..1 MiB-1 (the default chunk size): flip byte 5000.
invert_byte "$VPATH" 5000
scrub 1
only_finding checksum_mismatch
assert_match 'chunk 0 ' "$(json "$T/report.json" '.findings[0].detail')" "detail names the chunk"
ok ofs_pbj report "$JOB"
assert_contains "$(cat "$T/last.out")" "checksum_mismatch" "text report"
# --path: only the objects of a suspect file (or of a directory, all
# that is under it).
assert_exit 1 ofs_pbj submit scrub --path /f/s4 --wait --json
assert_eq 1 "$(json "$T/last.out" .findings.by_kind.checksum_mismatch)" "--path on the damaged file"
# 3 copies of its metafile and of each of its 3 dfiles.
assert_eq 12 "$(json "$T/last.out" .progress.objects_done)" "objects scrubbed for one striped file"
assert_exit 0 ofs_pbj submit scrub --path /f/p1 --wait --json
assert_eq 6 "$(json "$T/last.out" .progress.objects_done)" "objects scrubbed for one plain file"
assert_exit 1 ofs_pbj submit scrub --path /f --wait --json
assert_eq 1 "$(json "$T/last.out" .findings.total)" "--path on the directory"
assert_exit 2 ofs_pbj submit scrub --path /nothing/here --wait   # (refused at submit: t_operator)
assert_exit 2 ofs_pbj submit scrub --path relative/path
stop_cluster c2

log "a truncated byte stream: size_mismatch; a flipped byte in an inline value: checksum_mismatch"
cluster c3
pick_copy /f/s8
truncate -s 1000 "$VPATH"
pick_copy /f/p9
[ -z "$VPATH" ] || fail "expected /f/p9 held inline, not at $VPATH"
damage_copy "$VICTIM" "$DF" flip 7000
scrub 1
findings_are "checksum_mismatch size_mismatch"
assert_eq "$DF" "$(json "$T/report.json" '.findings[] | select(.kind == "checksum_mismatch") | .oid')" \
	"the inline copy's finding"
assert_match 'chunk 0 ' "$(json "$T/report.json" '.findings[] | select(.kind == "checksum_mismatch") | .detail')" \
	"detail names the chunk"
stop_cluster c3

log "a deleted byte-stream file and a lost inline value: missing_replica each"
cluster c4
pick_copy /f/p25
rm -f "$VPATH"
pick_copy /f/p5
[ -z "$VPATH" ] || fail "expected /f/p5 held inline, not at $VPATH"
damage_copy "$VICTIM" "$DF" lose
scrub 1
findings_are "missing_replica missing_replica"
stop_cluster c4

log "one copy's version rolled back: stale_replica, reported by that copy"
cluster c5
pick_copy /f/p6
stop_server "$VICTIM"
v=$(inspect_json "$VICTIM" "$DF" | jq -r .version)
ok ofs_server tool --data "$(srv_data "$VICTIM")" set-version "$DF" $((v - 1))
restart_same_port "$VICTIM"
use_server c5a
for n in a b c d; do wait_until 30 "c5$n to see all four up" sees_up "c5$n" 4; done
scrub 1
only_finding stale_replica
assert_match "version $((v - 1)) here, $v on " "$(json "$T/report.json" '.findings[0].detail')" "stale detail"
# (that copy is not its object's lead, which compares and says it for
# it; now the lead's own copy, which says it itself)
VSID=$(ofs stat --json /f/p5 | jq -r '.dfiles[0].sids[0]')
DF=$(ofs stat --json /f/p5 | jq -r '.dfiles[0].oid')
VICTIM=$(srv_by_sid "$VSID") || fail "no server with SID $VSID"
stop_server "$VICTIM"
v=$(inspect_json "$VICTIM" "$DF" | jq -r .version)
ok ofs_server tool --data "$(srv_data "$VICTIM")" set-version "$DF" $((v - 1))
restart_same_port "$VICTIM"
for n in a b c d; do wait_until 30 "c5$n to see all four up" sees_up "c5$n" 4; done
scrub 1
assert_eq 2 "$(json "$T/report.json" '[.findings[] | select(.kind == "stale_replica")] | length')" \
	"both stale copies ($(cat "$T/report.json"))"
assert_eq 1 "$(json "$T/report.json" "[.findings[] | select(.server == \"$VSID\" and .oid == \"$DF\")] | length")" \
	"the lead's own copy, reported once"
assert_match "version $((v - 1)) here, $v on " \
	"$(json "$T/report.json" ".findings[] | select(.server == \"$VSID\" and .oid == \"$DF\") | .detail")" "its detail"
stop_cluster c5

log "a garbled directory entry on one copy: record_corrupt, reported once"
cluster c6
j=$(ofs stat --json /f)
DF=$(jq -r '.dirdata[0].oid' <<<"$j")
VSID=$(jq -r '.dirdata[0].sids[1]' <<<"$j")
VICTIM=$(srv_by_sid "$VSID")
stop_server "$VICTIM"
printf 'not a dirent' | ofs_server tool --data "$(srv_data "$VICTIM")" set-key "$DF" p5 ||
	fail "tool set-key"
ok ofs_server tool --data "$(srv_data "$VICTIM")" keys "$DF" --json
assert_contains "$(cat "$T/last.out")" '"p5"' "tool keys lists the entry"
restart_same_port "$VICTIM"
use_server c6a
for n in a b c d; do wait_until 30 "c6$n to see all four up" sees_up "c6$n" 4; done
scrub 1
only_finding record_corrupt
assert_contains "$(json "$T/report.json" '.findings[0].detail')" "'p5'" "record_corrupt names the entry"
stop_cluster c6

# findings_are "KIND KIND..." : the report's kinds, sorted, are exactly these.

log "an entry removed from every copy of its directory: orphan"
cluster c7
j=$(ofs stat --json /f)
DD=$(jq -r '.dirdata[0].oid' <<<"$j")
MF=$(ofs stat --json /f/p5 | jq -r .oid)
MPRI=$(ofs stat --json /f/p5 | jq -r '.sids[0]')
on_all_copies "$(jq -r '.dirdata[0].sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" rm-key "$1" p5' "$OFS_SERVER" "$DD"
use_server c7a
all_up c7
scrub 1
findings_are "orphan"
assert_eq "$MF" "$(json "$T/report.json" '.findings[0].oid')" "orphan oid"
assert_eq "$MPRI" "$(json "$T/report.json" '.findings[0].server')" "reported by the metafile's primary"
assert_contains "$(json "$T/report.json" '.findings[0].detail')" "does not point at it" "orphan detail"
stop_cluster c7

log "a metafile removed from every server: dangling_pointer (and its dfile orphaned)"
cluster c8
j=$(ofs stat --json /f/p6)
MF=$(jq -r .oid <<<"$j")
DF=$(jq -r '.dfiles[0].oid' <<<"$j")
on_all_copies "$(jq -r '.sids[]' <<<"$j")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$MF"
use_server c8a
all_up c8
scrub 1
findings_are "dangling_pointer orphan"
ok ofs_pbj report "$JOB" --kind orphan --json
assert_eq "orphan" "$(json "$T/last.out" '[.findings[].kind] | join(" ")')" "report --kind"
ok ofs_pbj report "$JOB" --oid "$DF" --json
assert_eq 1 "$(json "$T/last.out" '.findings | length')" "report --oid"
ok ofs_pbj report "$JOB" --server ffffffffffffffffffffffffffffffff --json
assert_eq 0 "$(json "$T/last.out" '.findings | length')" "report --server of no finding"
assert_exit 2 ofs_pbj report "$JOB" --kind
assert_exit 2 ofs_pbj report "$JOB" --kind bit_rot     # not a finding kind
assert_eq "$(ofs stat --json /f | jq -r '.dirdata[0].oid')" \
	"$(json "$T/report.json" '.findings[] | select(.kind == "dangling_pointer") | .oid')" "dangling owner"
assert_contains "$(json "$T/report.json" '.findings[] | select(.kind == "dangling_pointer") | .detail')" \
	"$MF" "dangling detail names the metafile"
assert_eq "$DF" "$(json "$T/report.json" '.findings[] | select(.kind == "orphan") | .oid')" "orphaned dfile"
assert_contains "$(json "$T/report.json" '.findings[] | select(.kind == "orphan") | .detail')" \
	"exists nowhere" "orphan detail"
stop_cluster c8

log "a back reference rewritten to the wrong stripe: backref_mismatch"
cluster c9
wrong_stripe
use_server c9a
all_up c9
scrub 1
findings_are "backref_mismatch"
assert_eq "$DF" "$(json "$T/report.json" '.findings[0].oid')" "mismatched dfile"
assert_eq "$VSID" "$(json "$T/report.json" '.findings[0].server')" "the copy with the wrong back reference"
assert_contains "$(json "$T/report.json" '.findings[0].detail')" "stripe 2" "detail"
stop_cluster c9

log "bad input"
assert_exit 2 ofs_pbj submit scrub --rate 0
assert_exit 2 ofs_pbj submit scrub --server nothex
assert_exit 2 ofs_pbj submit frobnicate
assert_exit 2 ofs_pbj status 999999
assert_exit 2 ofs_pbj status notanumber
head -c 4096 /dev/urandom >"$T/foreign.db"
cp "$T/foreign.db" "$T/foreign.copy"
assert_exit 3 ofs_pbj --db "$T/foreign.db" list
assert_contains "$(cat "$T/last.err")" "not an ofs-pbj job database" "foreign database message"
cmp -s "$T/foreign.db" "$T/foreign.copy" || fail "a foreign database file was changed"

finish
