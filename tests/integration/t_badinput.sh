#!/bin/bash
# t_badinput: malformed frames and invalid requests sent by hand
# (rawframe.py) are refused - an error reply or a closed connection - and
# never hurt the server or its data. After each one a fresh connection's
# PING and an `ofs ls /` succeed; after all of them nothing stored has
# changed: listings, byte streams and object records are as before.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py

start_server a
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

stop_server a
exit 0
