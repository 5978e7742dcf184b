#!/bin/bash
# t_badinput: malformed frames and invalid requests sent by hand
# (rawframe.py) are refused - an error reply or a closed connection - and
# never hurt the server or its data. After each one a fresh connection's
# PING and an `ofs ls /` succeed; after all of them nothing stored has
# changed: listings, byte streams and object records are as before.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py

# (a capability lives 10 minutes here, not 2 s: the sparse file's section
# uses one it was granted across several steps - expiry is t_access's)
start_server a --cap-ttl 600
data=$(srv_data a)
mkrand "$T/f" $((200 * 1024 + 77))
ok ofs put "$T/f" /f
ok ofs mkdir /d
mkrand "$T/g" 4096
ok ofs put "$T/g" /d/g

# snapshot FILE : everything a rejected request must not change.
snapshot() {
	local out=$1 o
	{
		echo "== ls -l /"
		ofs ls -l / || echo "ls / failed"
		echo "== ls -l /d"
		ofs ls -l /d || echo "ls /d failed"
		echo "== bstreams tree"
		(cd "$data/bstreams" && find . -printf '%y %P %s\n' | LC_ALL=C sort)
		echo "== bstreams contents"
		(cd "$data/bstreams" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
		echo "== objects"
		for o in $(jq -r '.oid, .dirdata[].oid' "$T/root.json") \
			$(jq -r '.oid, .dfiles[].oid' "$T/f.json") $(jq -r '.oid, .dirdata[].oid' "$T/d.json") \
			$(jq -r '.oid, .dfiles[].oid' "$T/g.json"); do
			ofs_server inspect --data "$data" "$o" --json || echo "inspect $o failed"
		done
	} >"$out" 2>&1
}

ofs stat / --json >"$T/root.json" || fail "ofs stat / --json"
ofs stat /f --json >"$T/f.json" || fail "ofs stat /f --json"
ofs stat /d --json >"$T/d.json" || fail "ofs stat /d --json"
ofs stat /d/g --json >"$T/g.json" || fail "ofs stat /d/g --json"
assert_json "$T/root.json"
assert_json "$T/f.json"
assert_json "$T/d.json"
assert_json "$T/g.json"
snapshot "$T/before"
grep -q 'failed' "$T/before" && fail "snapshot before: $(grep failed "$T/before")"
# The snapshot sees what it guards: 1 byte stream (/f's; /d/g, 4 KiB, is
# held inline, its bytes checked by the get at the end); 8 objects (root,
# its dirdata, /d and its dirdata, the metafiles and dfiles of /f and
# /d/g).
assert_eq 1 "$(grep -c '^f ' "$T/before")" "byte streams in the snapshot"
assert_eq 1 "$(grep -c '"stored": "inline"' "$T/before")" "inline dfiles in the snapshot"
assert_eq 8 "$(grep -c '^  "oid"' "$T/before")" "objects in the snapshot"

ok python3 "$RAW" "$OFS_CLUSTER" ping
python3 "$RAW" "$OFS_CLUSTER" cases >"$T/cases" || fail "rawframe.py cases"
[ "$(wc -l <"$T/cases")" -ge 10 ] || fail "rawframe.py lists too few cases"

while read -r c; do
	timeout 150 python3 "$RAW" "$OFS_CLUSTER" case "$c" --file f --local "$T/f" \
		>"$T/case.out" 2>"$T/case.err" </dev/null
	rc=$?
	[ "$rc" -eq 0 ] || fail "bad input '$c': $(cat "$T/case.err") (exit $rc)"
	server_alive a || fail "server died after bad input '$c'"
	timeout 60 python3 "$RAW" "$OFS_CLUSTER" ping >"$T/last.out" 2>"$T/last.err" </dev/null ||
		fail "PING on a fresh connection failed after bad input '$c': $(cat "$T/last.err")"
	timeout 60 "$OFS_CLI" ls / >"$T/last.out" 2>"$T/last.err" </dev/null ||
		fail "ofs ls / failed after bad input '$c': $(cat "$T/last.err")"
	log "bad input '$c': refused, server fine"
done <"$T/cases"

snapshot "$T/after"
cmp -s "$T/before" "$T/after" ||
	fail "rejected requests changed stored state: $(diff "$T/before" "$T/after" | head -n 20)"

# Both files still read back.
ok ofs get /f "$T/f.got"
assert_same_file "$T/f" "$T/f.got" "/f after the bad input"
ok ofs get /d/g "$T/g.got"
assert_same_file "$T/g" "$T/g.got" "/d/g after the bad input"

# ---- a write far past the end: a hole, read and scrubbed as zeros ----------------------
# (docs/design.md, "Holes"; the largest offset a byte may have is 2^40 - 1:
# a dfile holds at most 1 TiB, STORE_MAX_STREAM)
say "a user's write of one byte at 1 TiB - 1: a hole, not records"
TIB=$((1 << 40)) EFBIG=-27 ECHECKSUM=-10001     # lib/ofs_error.h
export OFS_PBJ_DB=$T/jobs.db
issue_identity una --user una --uid 1020 --gid 1020
ok ofs mkdir /u
ok ofs chown 1020:1020 /u
printf 'xy' >"$T/xy"
ok ofs --identity "$T/id/una" put "$T/xy" /u/sparse
ofs stat --json /u/sparse >"$T/sparse.json" || fail "ofs stat /u/sparse"
SMF=$(jq -r .oid "$T/sparse.json")
SDF=$(jq -r '.dfiles[0].oid' "$T/sparse.json")
raw() { OFS_IDENTITY=$T/id/una python3 "$RAW" "$OFS_CLUSTER" "$@"; }
read -r st CAP <<<"$(raw capget "$SMF")"
assert_eq 0 "$st" "una's GETATTR of her file"
assert_eq "ofs-data 1" "$(cat "$data/format")" "the data dir's format before any hole"
used_before=$(du -sk "$data" | cut -f1)
assert_eq 0 "$(raw capwrite "$SDF" "$CAP" $((TIB - 1)) 5a)" "WRITE of 1 byte at 1 TiB - 1"
assert_eq "ofs-data 2" "$(cat "$data/format")" "the data dir's format once it holds a hole"
assert_eq $EFBIG "$(raw capwrite "$SDF" "$CAP" $TIB 5a)" "WRITE of 1 byte at 1 TiB"
assert_eq $EFBIG "$(raw capwrite "$SDF" "$CAP" $((TIB - 1)) 5a5a)" "WRITE of 2 bytes at 1 TiB - 1"
inspect_json a "$SDF" >"$T/sparse.inspect" || fail "inspect $SDF"
assert_eq $TIB "$(jq .size "$T/sparse.inspect")" "size of the dfile"
# records: the old last chunk (it grew by zeros) and the written one
assert_eq 2 "$(jq '.chunks | length' "$T/sparse.inspect")" "chunk records of the dfile"
assert_eq $((TIB / $(jq .chunk_size "$T/sparse.inspect") - 2)) "$(jq .holes "$T/sparse.inspect")" \
	"hole chunks of the dfile"
SPATH=$(jq -r .path "$T/sparse.inspect")
assert_eq $TIB "$(stat -c %s "$SPATH")" "length of its byte stream"
used_after=$(du -sk "$data" | cut -f1)
[ $((used_after - used_before)) -lt 1024 ] ||
	fail "the data dir grew by $((used_after - used_before)) KiB for one byte"
assert_eq "0 $(printf '0%.0s' $(seq 32))" "$(raw capread "$SDF" "$CAP" $((TIB / 2)) 16)" \
	"READ of 16 bytes in the hole"
assert_eq "0 00005a" "$(raw capread "$SDF" "$CAP" $((TIB - 3)) 100)" "READ of the last 3 bytes"
assert_eq "0 7879" "$(raw capread "$SDF" "$CAP" 0 2)" "READ of the first 2 bytes"
assert_exit 0 ofs_pbj submit scrub --wait --json
assert_eq 0 "$(json "$T/last.out" .findings.total)" "findings of a scrub with the hole"
# A byte that is not zero, put in the hole on disk: reads and the scrub find it.
printf '\001' | dd of="$SPATH" bs=1 seek=$((TIB / 2 + 5)) conv=notrunc status=none ||
	fail "dd into $SPATH"
assert_eq "$ECHECKSUM -" "$(raw capread "$SDF" "$CAP" $((TIB / 2)) 16)" "READ of the damaged hole"
assert_exit 1 ofs_pbj submit scrub --wait --json
assert_eq 1 "$(json "$T/last.out" .findings.total)" "findings of a scrub with a damaged hole"
ok ofs_pbj report "$(json "$T/last.out" .id)" --json
assert_eq "checksum_mismatch $SDF" "$(json "$T/last.out" '.findings[0] | "\(.kind) \(.oid)"')" \
	"the finding"
json "$T/last.out" '.findings[0].detail' | grep -q hole ||
	fail "the finding does not say it is in a hole: $(json "$T/last.out" '.findings[0]')"

stop_server a
exit 0
