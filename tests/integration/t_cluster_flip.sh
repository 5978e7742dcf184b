#!/bin/bash
# t_cluster_flip: a byte flipped in one copy's byte stream on disk. `ofs
# get` still returns the right bytes, from another copy; the server holding
# the bad copy logs the checksum mismatch and the server that served the
# read logs the client's report of the skipped copy and has the bad copy
# mended at once (a suspect: server/suspect.h). With two copies bad the
# third serves and both are mended; with all three bad the get fails
# (exit 3) and writes no local file rather than return wrong bytes.
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a:r1 b:r1 c:r2 d:r3

# flip NAME OID OFFSET : invert one byte of OID's byte stream on NAME's disk.
flip() {
	local path
	path=$(inspect_json "$1" "$2" | jq -r .path)
	[ -f "$path" ] || fail "no byte stream for $2 on $1 at '$path'"
	invert_byte "$path" "$3"
}

mkrand "$T/f" $((3 * MiB + 100))
ok ofs put --replicas 3 "$T/f" /f
ok ofs stat --json /f
assert_json "$T/last.out"
dfile=$(json "$T/last.out" '.dfiles[0].oid')
mapfile -t copies < <(json "$T/last.out" '.dfiles[0].sids[]')
n0=$(srv_by_sid "${copies[0]}")
n1=$(srv_by_sid "${copies[1]}")
n2=$(srv_by_sid "${copies[2]}")

log "one copy bad: the first copy a read tries ($n0)"
flip "$n0" "$dfile" $((MiB + 12345))
ok ofs get /f "$T/back1"
assert_same_file "$T/f" "$T/back1" "read with one bad copy"
wait_until 10 "$n0 to log the checksum mismatch" grep -q "read $dfile .*checksum mismatch" "$T/$n0.log"
wait_until 10 "the serving copy to log the skipped copy" \
	bash -c "cat '$T/$n1.log' '$T/$n2.log' | grep -q 'copy of $dfile on ${copies[0]} skipped: checksum mismatch'"

# mended NAME OID NTH : wait until NAME's copy of OID has been mended as a
# suspect NTH times (server/suspect.h): the server that served the read
# asked for it.
mended() {
	await 20 "$1's copy mended as a suspect ($3)" \
		bash -c "[ \$(cat '$T'/[abcd].log | grep -c 'suspect: copy of $2 on $(srv_sid "$1") .*fetched version') -ge $3 ]"
}
log "the bad copy a reader met is mended at once, no job submitted"
mended "$n0" "$dfile" 1

log "two copies bad: the third serves, and both are mended"
flip "$n0" "$dfile" $((MiB + 77))
flip "$n1" "$dfile" $((MiB + 77))
ok ofs get /f "$T/back2"
assert_same_file "$T/f" "$T/back2" "read with two bad copies"
mended "$n0" "$dfile" 2
mended "$n1" "$dfile" 1

# (All in the same 1 MiB chunk, so no copy can serve it.)
log "all three bad: the get fails and leaves no local file"
flip "$n0" "$dfile" $((MiB + 999))
flip "$n1" "$dfile" $((MiB + 999))
flip "$n2" "$dfile" $((MiB + 999))
assert_exit 3 ofs get /f "$T/back3"
assert_contains "$(cat "$T/last.err")" "checksum" "error of a get with every copy bad"
[ ! -e "$T/back3" ] || fail "a failed get left $T/back3"
ls "$T" | grep -q 'back3.ofs-part' && fail "a failed get left a partial file"

finish
