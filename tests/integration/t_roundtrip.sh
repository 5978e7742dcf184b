#!/bin/bash
# t_roundtrip: what `ofs put` stores, `ofs get` returns byte for byte - at
# the chunk boundaries (0 B, 1 B, one chunk, one chunk + 1, 100 MiB), to a
# file and to stdout, with the default 1 MiB chunk and with 64 KiB chunks;
# a put to an existing path replaces the contents; and the stored dfile has
# ceil(size/chunk) chunk digests and a byte stream of exactly size bytes;
# a striped file (--stripes, --strip-size) spreads its strips round-robin;
# a get into a FIFO or through a symbolic link writes what is there.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))

# roundtrip LOCAL PATH : put, then get to a file and to stdout; compare.
roundtrip() {
	local src=$1 path=$2 base
	base=$T/got.$(basename "$src")
	ok ofs put "$src" "$path"
	rm -f "$base"
	ok ofs get "$path" "$base"
	assert_same_file "$src" "$base" "get $path"
	assert_eq "$(sha "$src")" "$(sha "$base")" "sha256 of get $path"
	ofs get "$path" - >"$base.stdout" 2>"$T/last.err" ||
		fail "ofs get $path - failed: $(cat "$T/last.err")"
	assert_same_file "$src" "$base.stdout" "get $path -"
	rm -f "$base" "$base.stdout"
}

# check_stored SERVER PATH SIZE CHUNK : stat --json and inspect agree with
# the size; ceil(size/chunk) chunk digests; the byte stream holds size bytes.
check_stored() {
	local srv=$1 path=$2 size=$3 chunk=$4 st=$T/stat.json insp=$T/inspect.json
	ofs stat "$path" --json >"$st" 2>"$T/last.err" || fail "ofs stat $path --json: $(cat "$T/last.err")"
	assert_json "$st"
	assert_eq file "$(json "$st" .type)" "stat $path type"
	assert_eq "$size" "$(json "$st" .size)" "stat $path size"
	assert_match '^[0-9a-f]{32}$' "$(json "$st" .oid)" "stat $path oid"
	assert_eq "$(srv_sid "$srv")" "$(json "$st" '.sids[0]')" "stat $path primary sid"
	assert_eq 1 "$(json "$st" '.dfiles | length')" "stat $path: dfiles of a default put"
	local dfile
	dfile=$(json "$st" '.dfiles[0].oid')
	assert_match '^[0-9a-f]{32}$' "$dfile" "stat $path dfile oid"
	assert_eq 0 "$(json "$st" '.dfiles[0].stripe')" "stat $path dfile stripe"
	assert_eq "$(srv_sid "$srv")" "$(json "$st" '.dfiles[0].sids | join(",")')" "stat $path dfile sids"
	ofs_server inspect --data "$(srv_data "$srv")" "$dfile" --json >"$insp" 2>"$T/last.err" ||
		fail "ofs-server inspect $dfile: $(cat "$T/last.err")"
	assert_json "$insp"
	assert_eq "$dfile" "$(json "$insp" .oid)" "inspect oid"
	assert_eq dfile "$(json "$insp" .type)" "inspect type"
	assert_eq "$size" "$(json "$insp" .size)" "inspect $path size"
	assert_eq $(((size + chunk - 1) / chunk)) "$(json "$insp" '.chunks | length')" \
		"chunk digests of $path ($size bytes, $chunk-byte chunks)"
	[ "$(json "$insp" '[.chunks[] | test("^[0-9a-f]+$")] | all')" = true ] ||
		fail "inspect $path: chunks are not all hex digests: $(json "$insp" -c .chunks)"
	local bpath
	bpath=$(json "$insp" .path)
	if [ "$size" -le 65536 ]; then           # (--inline-max's default)
		assert_eq inline "$(json "$insp" .stored)" "where the bytes of $path ($size bytes) are"
		assert_eq null "$bpath" "inspect path of an inline dfile"
		[ -z "$(find "$(srv_data "$srv")/bstreams" -name "$dfile" 2>/dev/null)" ] ||
			fail "an inline dfile $dfile has a byte stream file too"
	else
		assert_eq stream "$(json "$insp" .stored)" "where the bytes of $path ($size bytes) are"
		case "$bpath" in /*) ;; *) fail "inspect path '$bpath' is not absolute" ;; esac
		[ -f "$bpath" ] || fail "inspect path $bpath does not exist"
		assert_eq "$size" "$(stat -c %s "$bpath")" "size of byte stream $bpath"
	fi
	assert_eq "$(json "$st" .oid)" "$(json "$insp" .backref.owner)" "dfile backref owner"
}

# ---- default 1 MiB chunks ---------------------------------------------------
start_server a
for size in 0 1 $MiB $((MiB + 1)); do
	mkrand "$T/f$size" "$size"
	roundtrip "$T/f$size" "/f$size"
	check_stored a "/f$size" "$size" "$MiB"
	rm -f "$T/f$size"
done

# From stdin ("put - PATH").
mkrand "$T/stdin" $((MiB + 1))
ofs put - /from-stdin <"$T/stdin" 2>"$T/last.err" || fail "ofs put - /from-stdin: $(cat "$T/last.err")"
ok ofs get /from-stdin "$T/stdin.got"
assert_same_file "$T/stdin" "$T/stdin.got" "put - then get"
check_stored a /from-stdin $((MiB + 1)) "$MiB"

# Into what is not a file (a FIFO, as /dev/null is a device): written
# into, never renamed over; through a symbolic link, the file it names.
mkfifo "$T/fifo"
bg sh -c 'exec cat "$1" >"$2"' fifo-reader "$T/fifo" "$T/fifo.got"
READER=$BG
ok ofs get /from-stdin "$T/fifo"
wait_pid "$READER" 30
[ -p "$T/fifo" ] || fail "ofs get into a FIFO replaced it"
assert_same_file "$T/stdin" "$T/fifo.got" "get into a FIFO"
: >"$T/target" && ln -s target "$T/link"
ok ofs get /from-stdin "$T/link"
[ -L "$T/link" ] || fail "ofs get through a symbolic link replaced the link"
assert_same_file "$T/stdin" "$T/target" "get through a symbolic link"

mkrand "$T/big" $((100 * MiB))
roundtrip "$T/big" /big
check_stored a /big $((100 * MiB)) "$MiB"
rm -f "$T/big"

# Overwrite: a put to an existing path replaces the whole contents, with a
# longer and then a shorter file.
mkrand "$T/v1" $((MiB + 4321))
mkrand "$T/v2" $((3 * MiB + 17))
mkrand "$T/v3" 99
roundtrip "$T/v1" /over
roundtrip "$T/v2" /over
check_stored a /over $((3 * MiB + 17)) "$MiB"
roundtrip "$T/v3" /over
check_stored a /over 99 "$MiB"
ofs ls / >"$T/ls" 2>"$T/last.err" || fail "ofs ls /: $(cat "$T/last.err")"
assert_eq 1 "$(grep -cE '^over/?$' "$T/ls")" "entries named 'over' in ls / after overwrites"

# ---- striped: --stripes N --strip-size S ------------------------------------
# Byte x lives in dfile (x / S) % N at offset (x / (S * N)) * S + x % S, so
# dfile i holds every N-th strip starting with strip i.
striped() {
	local size=$1 n=$2 strip=$3 st=$T/stat.json i want full rem
	mkrand "$T/s$size" "$size"
	ok ofs put "$T/s$size" "/s$size.$n" --stripes "$n" --strip-size "$strip"
	rm -f "$T/s.got"
	ok ofs get "/s$size.$n" "$T/s.got"
	assert_same_file "$T/s$size" "$T/s.got" "striped put/get of $size bytes over $n dfiles"
	ofs stat "/s$size.$n" --json >"$st" || fail "ofs stat /s$size.$n --json"
	assert_json "$st"
	assert_eq "$size" "$(json "$st" .size)" "size of striped /s$size.$n"
	assert_eq "$n" "$(json "$st" '.dfiles | length')" "dfiles of /s$size.$n"
	full=$((size / strip)) rem=$((size % strip))
	for i in $(seq 0 $((n - 1))); do
		assert_eq "$i" "$(json "$st" ".dfiles[$i].stripe")" "stripe of dfile $i"
		want=$(((full / n + (i < full % n ? 1 : 0)) * strip + (full % n == i ? rem : 0)))
		ofs_server inspect --data "$(srv_data a)" "$(json "$st" ".dfiles[$i].oid")" --json \
			>"$T/inspect.json" || fail "inspect dfile $i of /s$size.$n"
		assert_eq "$want" "$(json "$T/inspect.json" .size)" "size of dfile $i of /s$size.$n"
		assert_eq "$i" "$(json "$T/inspect.json" .backref.stripe)" "backref stripe of dfile $i"
	done
	rm -f "$T/s$size" "$T/s.got"
}
striped $((MiB + 12345)) 3 65536
striped $((4 * 65536)) 4 65536
striped 100 4 65536
striped $((5 * MiB + 3)) 2 $MiB

# ---- 64 KiB chunks: files straddling chunk boundaries -------------------------
K64=65536
start_server b --chunk-size 64K
for size in 1 $((K64 - 1)) $K64 $((K64 + 1)) $((2 * K64)) $((3 * K64 + 100)) $((MiB + 12345)) \
	$((5 * MiB + K64 / 2)); do
	mkrand "$T/g$size" "$size"
	roundtrip "$T/g$size" "/g$size"
	check_stored b "/g$size" "$size" "$K64"
	rm -f "$T/g$size"
done
# Overwrite across chunk sizes of the same server.
roundtrip "$T/v2" /over64
roundtrip "$T/v1" /over64
check_stored b /over64 $((MiB + 4321)) "$K64"

stop_server b
stop_server a
exit 0
