#!/bin/bash
# t_tree: a namespace of 1000 files in 10 x 10 nested directories - every
# directory lists back every name it holds (ls, ls -l, ls --json), also one
# with more entries than a single listing reply carries (its ls -l asks
# the attributes 256 at a time: readdir-plus); rm and
# rmdir (rmdir of a non-empty directory fails, exit 3); mv of a file and of
# a directory, and mv onto an existing file replaces it. A client putting
# many files walks their directory's path about once (putcache: the
# directories it walked are remembered for a moment), and a put into a
# directory another client removed and made again meanwhile lands in the
# new one.
. "$(dirname "$0")/lib.sh"

ND=10 NS=10 NF=10
PAR=${OFS_TREE_PAR:-4}

start_server a

# ---- build ------------------------------------------------------------------
mkdir -p "$T/src"
t0=$(now_ms)
: >"$T/mkdir.list"
for d in $(seq 0 $((ND - 1))); do
	echo "mkdir /d$d" >>"$T/mkdir.list"
	for s in $(seq 0 $((NS - 1))); do
		echo "mkdir /d$d/s$s" >>"$T/mkdir.list"
		for f in $(seq 0 $((NF - 1))); do
			p=/d$d/s$s/f$f
			printf 'contents of %s\n' "$p" >"$T/src/d$d.s$s.f$f"
			echo "$p"
		done
	done
done >"$T/paths"
# (the directories made by one client process too, parents first; ofs
# mkdir itself is run below)
"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/mkdir.list" 2>"$T/mkdir.err" ||
	fail "making the $((ND + ND * NS)) directories failed: $(head -n 5 "$T/mkdir.err")"
assert_eq $((ND * NS * NF)) "$(wc -l <"$T/paths")" "paths to create"
# $PAR clients at once, each putting its share of the files (putmany: one
# process each; a process start per file under the sanitizers costs more
# than the put).
while read -r p; do
	q=${p#/}
	echo "$T/src/${q//\//.} $p 1 1 65536"
done <"$T/paths" >"$T/put.list"
split -n "l/$PAR" -d "$T/put.list" "$T/put.part."
: >"$T/putters"
for part in "$T"/put.part.*; do
	# (not through bg: an asynchronous command's stdin is /dev/null unless
	# it is redirected on that command itself)
	"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$part" 2>"$part.err" &
	BG_PIDS+=("$!")
	echo "$! $part" >>"$T/putters"
done
: >"$T/put.err"
while read -r pid part; do
	wait_pid "$pid" 300
	[ "$REAP_ST" = 0 ] || echo "${part##*/}: exit $REAP_ST: $(head -c 300 "$part.err")" >>"$T/put.err"
done <"$T/putters"
t1=$(now_ms)
log "created $ND + $((ND * NS)) directories and $(wc -l <"$T/put.list") files in $((t1 - t0)) ms ($PAR clients at once)"
[ ! -s "$T/put.err" ] || fail "puts failed: $(head -n 5 "$T/put.err")"

# ---- every directory lists back every name ---------------------------------------
# expect DIR : the names DIR should hold, sorted, one a line.
expect() {
	case "$1" in
	/) for d in $(seq 0 $((ND - 1))); do echo "d$d"; done ;;
	/d*/s*) for f in $(seq 0 $((NF - 1))); do echo "f$f"; done ;;
	/d*) for s in $(seq 0 $((NS - 1))); do echo "s$s"; done ;;
	esac | LC_ALL=C sort
}

# check_ls DIR : plain ls lists exactly the expected names (a trailing '/'
# on a directory allowed); --json has path, entries with name, type, oid,
# size, mtime; ls -l has one line per entry ending in its name.
check_ls() {
	local dir=$1 want=$T/want got=$T/got js=$T/ls.json
	expect "$dir" >"$want"
	ofs ls "$dir" >"$T/ls.out" 2>"$T/last.err" || fail "ofs ls $dir: $(cat "$T/last.err")"
	sed 's#/$##' "$T/ls.out" | LC_ALL=C sort >"$got"
	cmp -s "$want" "$got" || fail "ofs ls $dir: names differ: $(diff "$want" "$got" | head -n 10)"
	ofs ls --json "$dir" >"$js" 2>"$T/last.err" || fail "ofs ls --json $dir: $(cat "$T/last.err")"
	# One jq run per directory (jq starts slowly): a summary, then names.
	jq -r '"path=" + (.path | tostring),
		"bad=" + ([.entries[] | select((.oid | type) != "string"
			or (.oid | test("^[0-9a-f]{32}$") | not)
			or (.type != "file" and .type != "directory")
			or (.size | type) != "number" or (.mtime | type) != "string"
			or (.name | type) != "string")] | length | tostring),
		"types=" + ([.entries[].type] | unique | join(",")),
		(.entries[].name)' "$js" >"$T/ls.summary" 2>"$T/last.err" ||
		fail "ofs ls --json $dir: not the documented shape: $(cat "$T/last.err"): $(head -c 300 "$js")"
	assert_eq "path=$dir" "$(sed -n 1p "$T/ls.summary")" "ls --json $dir: path"
	assert_eq "bad=0" "$(sed -n 2p "$T/ls.summary")" "ls --json $dir: malformed entries"
	case "$dir" in
	/d*/s*) assert_eq "types=file" "$(sed -n 3p "$T/ls.summary")" "ls --json $dir: entry types" ;;
	*) assert_eq "types=directory" "$(sed -n 3p "$T/ls.summary")" "ls --json $dir: entry types" ;;
	esac
	tail -n +4 "$T/ls.summary" | LC_ALL=C sort >"$got"
	cmp -s "$want" "$got" || fail "ofs ls --json $dir: names differ: $(diff "$want" "$got" | head -n 10)"
}

t0=$(now_ms)
check_ls /
for d in $(seq 0 $((ND - 1))); do
	check_ls "/d$d"
	for s in $(seq 0 $((NS - 1))); do
		check_ls "/d$d/s$s"
	done
done
log "listed $((1 + ND + ND * NS)) directories three ways in $(($(now_ms) - t0)) ms"

# ls -l: one line per entry, each ending in its name, sizes shown.
ofs ls -l /d3/s7 >"$T/ll" 2>"$T/last.err" || fail "ofs ls -l /d3/s7: $(cat "$T/last.err")"
grep -v '^total ' "$T/ll" >"$T/ll.entries"
assert_eq "$NF" "$(wc -l <"$T/ll.entries")" "ofs ls -l /d3/s7 lines"
for f in $(seq 0 $((NF - 1))); do
	line=$(grep -E "[[:space:]]f$f\$" "$T/ll.entries") || fail "ofs ls -l /d3/s7: no line for f$f"
	size=$(stat -c %s "$T/src/d3.s7.f$f")
	grep -qE "(^|[[:space:]])$size([[:space:]])" <<<"$line" ||
		fail "ofs ls -l /d3/s7: line for f$f does not show its size $size: $line"
done
ofs ls -l / >"$T/ll" 2>"$T/last.err" || fail "ofs ls -l /: $(cat "$T/last.err")"
assert_eq "$ND" "$(grep -vc '^total ' "$T/ll")" "ofs ls -l / lines"
# ls --json size of a file is its size.
ofs ls --json /d0/s0 >"$T/ls.json" || fail "ofs ls --json /d0/s0"
assert_eq "$(stat -c %s "$T/src/d0.s0.f5")" "$(json "$T/ls.json" '.entries[] | select(.name=="f5") | .size')" \
	"ls --json size of /d0/s0/f5"

# A sample of the files reads back; a small file's attributes and bytes
# come in one request (GET_SMALL), with no READ.
for p in /d0/s0/f0 /d9/s9/f9 /d4/s5/f6; do
	OFS_COUNT_REQUESTS=1 ok ofs get "$p" -
	assert_eq "contents of $p" "$(cat "$T/last.out")" "contents of $p"
	assert_match 'get_small=1( |$)' "$(grep 'requests sent' "$T/last.err")" "GET_SMALL requests of get $p"
	assert_not_contains "$(grep 'requests sent' "$T/last.err")" " read=" "READ requests of get $p"
done

# ---- one directory with more entries than one listing reply holds ----------
# (OFS_MAX_LIST is 1000 per DIRENT_LIST reply: ls must page through all.)
# (the entries made by one client process, not one process each: the
# listing is what is checked here)
NFLAT=1100
ok ofs mkdir /flat
seq -f 'n%04g' 0 $((NFLAT - 1)) >"$T/flat.want"
printf 'one of many\n' >"$T/flat.src"
sed "s#^\(.*\)#$T/flat.src /flat/\1 1 1 65536#" "$T/flat.want" >"$T/flat.list"
t0=$(now_ms)
"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/flat.list" 2>"$T/flat.err" ||
	fail "putting $NFLAT files into /flat failed: $(head -n 5 "$T/flat.err")"
log "created $NFLAT files in /flat in $(($(now_ms) - t0)) ms"
ofs ls /flat >"$T/ls.out" 2>"$T/last.err" || fail "ofs ls /flat: $(cat "$T/last.err")"
sed 's#/$##' "$T/ls.out" | LC_ALL=C sort >"$T/got"
cmp -s "$T/flat.want" "$T/got" ||
	fail "ofs ls /flat ($NFLAT entries) lists $(wc -l <"$T/got"): $(diff "$T/flat.want" "$T/got" | head -n 5)"
ofs ls --json /flat >"$T/ls.json" 2>"$T/last.err" || fail "ofs ls --json /flat: $(cat "$T/last.err")"
jq -r '.entries[].name' "$T/ls.json" | LC_ALL=C sort >"$T/got"
cmp -s "$T/flat.want" "$T/got" ||
	fail "ofs ls --json /flat ($NFLAT entries) lists $(wc -l <"$T/got")"
# ls -l is a readdir-plus: the entries' attributes come in GETATTR_MANY
# requests of up to 256 objects (one server here: 5 for 1100 entries), not
# one GETATTR round trip per entry; each line shows its file's size.
OFS_COUNT_REQUESTS=1 ofs ls -l /flat >"$T/ll" 2>"$T/last.err" || fail "ofs ls -l /flat: $(cat "$T/last.err")"
assert_eq "$NFLAT" "$(grep -vc '^total ' "$T/ll")" "ofs ls -l /flat lines"
assert_eq "$NFLAT" "$(grep -cE '^-[rwxsStT-]{9} +[0-9]+ +[0-9]+ +12 ' "$T/ll")" "ofs ls -l /flat lines showing the size (12 bytes)"
assert_match 'getattr_many=5( |$)' "$(grep 'requests sent' "$T/last.err")" "GETATTR_MANY requests of ls -l /flat"
ngetattr=$(grep 'requests sent' "$T/last.err" | sed -n 's/.* getattr=\([0-9]*\).*/\1/p')
[ "${ngetattr:-0}" -le 10 ] ||
	fail "ls -l /flat sent $ngetattr GETATTR requests (the path resolution's, a few, expected; 1100 entries): $(cat "$T/last.err")"
ok ofs rm /flat/n1050
assert_eq $((NFLAT - 1)) "$(ofs ls /flat | wc -l)" "entries of /flat after one rm"

# ---- rm, rmdir ----------------------------------------------------------------
ok ofs rm /d0/s0/f3
assert_exit 3 ofs get /d0/s0/f3 -
ofs ls /d0/s0 >"$T/ls.out" || fail "ofs ls /d0/s0"
grep -qx 'f3' "$T/ls.out" && fail "ofs ls /d0/s0 still lists f3 after rm"
assert_eq $((NF - 1)) "$(wc -l <"$T/ls.out")" "entries of /d0/s0 after one rm"

assert_exit 3 ofs rmdir /d0/s1
grep -qi 'not empty\|empty' "$T/last.err" || fail "rmdir of a non-empty dir: message: $(cat "$T/last.err")"
assert_exit 3 ofs rmdir /d0
check_ls /d0
ofs ls /d0/s1 | sed 's#/$##' | LC_ALL=C sort >"$T/got"
expect /d0/s1 >"$T/want"
cmp -s "$T/want" "$T/got" || fail "/d0/s1 changed after a failed rmdir"

for f in $(seq 0 $((NF - 1))); do ok ofs rm "/d0/s1/f$f"; done
ok ofs rmdir /d0/s1
assert_exit 3 ofs ls /d0/s1
ofs ls /d0 >"$T/ls.out" || fail "ofs ls /d0"
grep -qE '^s1/?$' "$T/ls.out" && fail "ofs ls /d0 still lists s1 after rmdir"
assert_eq $((NS - 1)) "$(wc -l <"$T/ls.out")" "entries of /d0 after rmdir"
ok ofs mkdir /d0/s1     # the name is free again

# ---- mv -----------------------------------------------------------------------
# A file, within a directory and across directories.
ok ofs mv /d1/s1/f1 /d1/s1/renamed
assert_exit 3 ofs get /d1/s1/f1 -
ok ofs get /d1/s1/renamed -
assert_eq "contents of /d1/s1/f1" "$(cat "$T/last.out")" "contents after mv"
ok ofs mv /d1/s1/renamed /d2/s2/moved
ok ofs get /d2/s2/moved -
assert_eq "contents of /d1/s1/f1" "$(cat "$T/last.out")" "contents after mv across directories"
assert_exit 3 ofs get /d1/s1/renamed -
assert_eq $((NF - 1)) "$(ofs ls /d1/s1 | wc -l)" "entries of /d1/s1 after mv out"
assert_eq $((NF + 1)) "$(ofs ls /d2/s2 | wc -l)" "entries of /d2/s2 after mv in"

# A directory with everything below it.
ok ofs mv /d5 /e5
assert_exit 3 ofs ls /d5
for s in $(seq 0 $((NS - 1))); do
	ofs ls "/e5/s$s" | sed 's#/$##' | LC_ALL=C sort >"$T/got" || fail "ofs ls /e5/s$s"
	expect "/d5/s$s" >"$T/want"
	cmp -s "$T/want" "$T/got" || fail "/e5/s$s after mv /d5 /e5: $(diff "$T/want" "$T/got" | head -n 5)"
done
ok ofs get /e5/s4/f2 -
assert_eq "contents of /d5/s4/f2" "$(cat "$T/last.out")" "a file under a moved directory"
ok ofs mv /e5/s4 /d6/s4moved
ok ofs get /d6/s4moved/f7 -
assert_eq "contents of /d5/s4/f7" "$(cat "$T/last.out")" "a file under a directory moved deeper"
assert_exit 3 ofs ls /e5/s4

# Onto an existing file: the target is replaced, the source is gone.
ok ofs mv /d7/s7/f1 /d7/s7/f2
ok ofs get /d7/s7/f2 -
assert_eq "contents of /d7/s7/f1" "$(cat "$T/last.out")" "mv onto an existing file replaces it"
assert_exit 3 ofs get /d7/s7/f1 -
assert_eq $((NF - 1)) "$(ofs ls /d7/s7 | wc -l)" "entries of /d7/s7 after mv onto an existing file"
ofs ls --json /d7/s7 >"$T/ls.json" || fail "ofs ls --json /d7/s7"
assert_eq 1 "$(json "$T/ls.json" '[.entries[] | select(.name=="f2")] | length')" "entries named f2"

# Into an existing directory: the entry moves inside it.
ok ofs mv /d7/s7/f3 /d8
ok ofs get /d8/f3 -
assert_eq "contents of /d7/s7/f3" "$(cat "$T/last.out")" "mv of a file into a directory"
assert_exit 3 ofs get /d7/s7/f3 -

# A directory cannot move into itself or below itself; nothing changes.
for target in /d9 /d9/s0 /d9/s0/x; do
	ofs mv /d9 "$target" >"$T/last.out" 2>"$T/last.err"
	rc=$?
	[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "ofs mv /d9 $target exited $rc, expected 2 or 3"
	grep -q '^ofs: ' "$T/last.err" || fail "ofs mv /d9 $target: no 'ofs: ' message on stderr"
done
check_ls /d9
for s in $(seq 0 $((NS - 1))); do check_ls "/d9/s$s"; done

# Many puts through one client: the path walked about once; a directory
# removed and made again by another client meanwhile: the put walks again.
ok ofs mkdir /cache
ok "$OFS_ITEST_BIN/putcache" "$OFS_CLUSTER" /cache 50
log "$(head -n 1 "$T/last.out")"

# The root still lists what it should.
ofs ls / | sed 's#/$##' | LC_ALL=C sort >"$T/got"
(for d in $(seq 0 $((ND - 1))); do [ "$d" = 5 ] && echo e5 || echo "d$d"; done; echo flat) |
	LC_ALL=C sort >"$T/want"
echo cache >>"$T/want"
LC_ALL=C sort -o "$T/want" "$T/want"
cmp -s "$T/want" "$T/got" || fail "ls / at the end: $(diff "$T/want" "$T/got")"

stop_server a
exit 0
