#!/bin/bash
# t_cluster_place: placement, striping and back references on four servers
# in racks r1 r1 r2 r3. `ofs put --replicas 3` puts the metafile and its
# dfile on three distinct servers in three distinct racks, with the dfile's
# first copy on the metafile's primary (file stuffing), as `ofs stat
# --json` shows; directories are replicated the same way; a file striped
# with --stripes 4 --strip-size 64K reads back whole; and every copy, read
# straight from its server's data dir, carries the back reference to its
# owner and the SIDs of all its siblings.
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a:r1 b:r1 c:r2 d:r3

# check_spread WHAT SIDS_JSON : three distinct SIDs in three distinct racks.
check_spread() {
	local what=$1 sids=$2 racks
	assert_eq 3 "$(jq -r 'length' <<<"$sids")" "$what: number of copies"
	assert_eq 3 "$(jq -r 'unique | length' <<<"$sids")" "$what: distinct SIDs"
	racks=$(for s in $(jq -r '.[]' <<<"$sids"); do rack_of "$s"; done | sort | tr '\n' ' ')
	assert_eq "r1 r2 r3 " "$racks" "$what: racks of its copies"
}

# check_copies WHAT OID OWNER STRIPE SIDS_JSON : every copy of OID is on the
# server its handle names, its back reference names OWNER (and STRIPE) and
# its record lists exactly the sibling SIDs.
check_copies() {
	local what=$1 oid=$2 owner=$3 stripe=$4 sids=$5 s name j
	for s in $(jq -r '.[]' <<<"$sids"); do
		name=$(srv_by_sid "$s") || fail "$what: copy on unknown SID $s"
		j=$(inspect_json "$name" "$oid") || fail "$what: no copy of $oid on $name"
		assert_eq "$owner" "$(jq -r .backref.owner <<<"$j")" "$what: back reference owner on $name"
		[ -z "$stripe" ] || assert_eq "$stripe" "$(jq -r .backref.stripe <<<"$j")" "$what: back reference stripe on $name"
		assert_eq "$(jq -c 'sort' <<<"$sids")" "$(jq -c '.sids | sort' <<<"$j")" "$what: sibling SIDs on $name"
	done
}

log "3 copies of small and 1 MiB files, and of a directory"
ok ofs mkdir /d
ok ofs stat --json /d
assert_json "$T/last.out"
check_spread "directory /d" "$(json "$T/last.out" .sids)"
root=$(ofs stat --json / | jq -r .oid)
check_copies "directory /d" "$(json "$T/last.out" .oid)" "$root" "" "$(json "$T/last.out" .sids)"

for i in 1 2 3 4 5 6; do
	mkrand "$T/f$i" $((i * MiB / 6 + i))
	ok ofs put --replicas 3 "$T/f$i" "/d/f$i"
	ok ofs stat --json "/d/f$i"
	assert_json "$T/last.out"
	cp "$T/last.out" "$T/stat.f$i"
	assert_eq 3 "$(json "$T/stat.f$i" .replicas)" "f$i replicas"
	assert_eq 3 "$(json "$T/stat.f$i" .confidence)" "f$i default write confidence"
	check_spread "metafile f$i" "$(json "$T/stat.f$i" .sids)"
	check_spread "dfile of f$i" "$(json "$T/stat.f$i" '.dfiles[0].sids')"
	assert_eq "$(json "$T/stat.f$i" '.sids[0]')" "$(json "$T/stat.f$i" '.dfiles[0].sids[0]')" \
		"f$i: first dfile on the metafile's primary"
	check_copies "metafile f$i" "$(json "$T/stat.f$i" .oid)" "$(ofs stat --json /d | jq -r .oid)" "" \
		"$(json "$T/stat.f$i" .sids)"
	check_copies "dfile of f$i" "$(json "$T/stat.f$i" '.dfiles[0].oid')" "$(json "$T/stat.f$i" .oid)" 0 \
		"$(json "$T/stat.f$i" '.dfiles[0].sids')"
	assert_eq "f$i" "$(inspect_json "$(srv_by_sid "$(json "$T/stat.f$i" '.sids[0]')")" \
		"$(json "$T/stat.f$i" .oid)" | jq -r .backref.name)" "metafile f$i: back reference entry name"
done
for i in 1 2 3 4 5 6; do
	ok ofs get "/d/f$i" "$T/back.f$i"
	assert_same_file "$T/f$i" "$T/back.f$i" "f$i read back"
done

log "a striped file: 4 stripes of 64 KiB strips, 10 MiB of random data"
mkrand "$T/big" $((10 * MiB))
ok ofs put --replicas 3 --stripes 4 --strip-size 64K "$T/big" /d/striped
ok ofs stat --json /d/striped
assert_json "$T/last.out"
cp "$T/last.out" "$T/stat.big"
assert_eq 65536 "$(json "$T/stat.big" .strip_size)" "strip size recorded in the metafile"
assert_eq 4 "$(json "$T/stat.big" '.dfiles | length')" "dfile count recorded in the metafile"
assert_eq "$(json "$T/stat.big" '.sids[0]')" "$(json "$T/stat.big" '.dfiles[0].sids[0]')" \
	"striped: first dfile on the metafile's primary"
for k in 0 1 2 3; do
	assert_eq "$k" "$(json "$T/stat.big" ".dfiles[$k].stripe")" "stripe index of dfile $k"
	check_spread "dfile $k of the striped file" "$(json "$T/stat.big" ".dfiles[$k].sids")"
	check_copies "dfile $k of the striped file" "$(json "$T/stat.big" ".dfiles[$k].oid")" \
		"$(json "$T/stat.big" .oid)" "$k" "$(json "$T/stat.big" ".dfiles[$k].sids")"
done
# Every dfile holds a quarter of the bytes: the file is really striped.
for k in 0 1 2 3; do
	s=$(json "$T/stat.big" ".dfiles[$k].sids[0]")
	sz=$(inspect_json "$(srv_by_sid "$s")" "$(json "$T/stat.big" ".dfiles[$k].oid")" | jq -r .size)
	assert_eq $((10 * MiB / 4)) "$sz" "bytes in dfile $k"
done
ok ofs get /d/striped "$T/big.back"
assert_same_file "$T/big" "$T/big.back" "striped file read back"

log "bad placement options are refused"
assert_exit 2 ofs put --replicas 5 "$T/f1" /d/x
assert_exit 2 ofs put --replicas 2 --confidence 3 "$T/f1" /d/x
assert_exit 2 ofs put --stripes 0 "$T/f1" /d/x
ok ofs ls /d
assert_eq "f1 f2 f3 f4 f5 f6 striped " "$(tr '\n' ' ' <"$T/last.out")" "nothing created by refused puts"

finish
