#!/bin/bash
# t_files: what OFS writes on the local disk is the writer's alone, and
# never lands where it was not asked to go. A data dir is 0700 with every
# directory in it 0700 and every file 0600, whatever the umask, and one
# that lets group or others in is refused by every command that opens it.
# A CA or an identity goes only into a new or empty directory of the
# caller's own, each file new and 0600, never written through a name
# planted in the way. A word that begins with '-' is never taken for a
# path, a name or an option's value: --help or -h there prints the usage
# (exit 0), any other is a usage error (exit 2), and nothing is made.
. "$(dirname "$0")/lib.sh"

pbj() { "$OFS_BIN/ofs-pbj" "$@"; }
# names DIR : the names DIR holds, sorted, on one line.
names() { (cd "$1" && LC_ALL=C ls -A | tr '\n' ' '); }

keep_going

# ---- a data dir --------------------------------------------------------------
say "a data dir made and used under umask 000 is its server's alone"
umask 000
start_server a
mkrand "$T/f" 300000
ok ofs put "$T/f" /f
ok ofs mkdir /d
stop_server a
umask 022
loose=$(find "$T/a" \( -type d ! -perm 0700 \) -o \( -type f ! -perm 0600 \) -printf '%m %p\n')
assert_eq "" "$loose" "directories not 0700 and files not 0600 in a data dir"
[ -n "$(find "$T/a/bstreams" -type f)" ] || fail "no byte stream in $T/a to look at"

say "a data dir that lets group or others in is refused, naming the path and mode"
chmod 0755 "$T/a"
err_is 2 "$T/a: group or others may read, write or enter it \(mode 0755\).*chmod -R go-rwx $T/a" \
	ofs_server run --data "$T/a" --listen 127.0.0.1:0
[ ! -s "$T/last.out" ] || fail "a refused server printed: $(cat "$T/last.out")"
err_is 2 "$T/a: .*mode 0755" ofs_server tool --data "$T/a" list
err_is 2 "$T/a: .*mode 0755" ofs_server certify --data "$T/a" --ca "$CA"
chmod 0700 "$T/a" && chmod 0750 "$T/a/identity"
err_is 2 "$T/a/identity: .*mode 0750.*chmod -R go-rwx $T/a'" \
	ofs_server run --data "$T/a" --listen 127.0.0.1:0
# the upgrade: the command the message gives, and the server starts
chmod -R go-rwx "$T/a"
restart_server a
ok ofs get /f "$T/f.back"
assert_same_file "$T/f" "$T/f.back" "/f after the data dir's modes were mended"
# init tightens an empty directory made by hand
mkdir -m 0755 "$T/b"
ok ofs_server init --data "$T/b"
assert_eq 700 "$(stat -c %a "$T/b")" "mode of an empty data dir after init"

# ---- ofs-pbj ca init and ca issue -------------------------------------------
say "ca init and ca issue: a new or empty directory of one's own"
echo "victim's bytes" >"$T/victim"
# a directory that holds anything is refused and left as it was
mkdir "$T/full" && echo notes >"$T/full/notes"
err_is 3 'full: not empty' pbj ca init "$T/full"
assert_eq "notes " "$(names "$T/full")" "a non-empty directory after ca init"
assert_eq notes "$(cat "$T/full/notes")" "its file after ca init"
err_is 3 'full: not empty' pbj ca issue "$CA" --out "$T/full" --admin x
assert_eq "notes " "$(names "$T/full")" "a non-empty directory after ca issue"
# a link where a file would go: refused, its target untouched
mkdir "$T/linked" && ln -s "$T/victim" "$T/linked/ca.key"
err_is 3 'linked: not empty' pbj ca init "$T/linked"
# (where an earlier release wrote its temporary file, opened O_TRUNC)
mkdir "$T/idl" && ln -s "$T/victim" "$T/idl/key.pem.tmp"
err_is 3 'idl: not empty' pbj ca issue "$CA" --out "$T/idl" --admin x
assert_eq "victim's bytes" "$(cat "$T/victim")" "the target of the planted links"
assert_eq "key.pem.tmp " "$(names "$T/idl")" "the identity directory with a planted link"
# a CADIR that is a dangling link: refused, nothing made where it points
ln -s "$T/elsewhere" "$T/calink"
assert_exit 3 pbj ca init "$T/calink"
[ ! -e "$T/elsewhere" ] || fail "ca init through a dangling link made $T/elsewhere"
# another's directory (root can make one to try)
if [ "$(id -u)" = 0 ]; then
	mkdir "$T/theirs" && chown 65534:65534 "$T/theirs"
	err_is 3 'theirs: not yours' pbj ca init "$T/theirs"
	err_is 3 'theirs: not yours' pbj ca issue "$CA" --out "$T/theirs" --admin x
	assert_eq "" "$(names "$T/theirs")" "another's directory after ca init and issue"
fi
# an empty one of one's own is taken and made 0700; every file is 0600,
# whatever the umask
mkdir -m 0755 "$T/empty"
(umask 000 && pbj ca init "$T/empty" >/dev/null) || fail "ca init into an empty directory"
(umask 000 && pbj ca issue "$T/empty" --out "$T/made/id" --admin x >/dev/null) ||
	fail "ca issue into a new directory"
for d in "$T/empty" "$T/made" "$T/made/id"; do
	assert_eq 700 "$(stat -c %a "$d")" "mode of $d"
done
for f in "$T"/empty/* "$T"/made/id/*; do
	assert_eq 600 "$(stat -c %a "$f")" "mode of $f"
done
assert_eq "ca.crt ca.key cap.key " "$(names "$T/empty")" "a new CA's files"
assert_eq "ca.pem cert.pem key.pem " "$(names "$T/made/id")" "a new identity's files"

# ---- option words are never values --------------------------------------------
say "a word that begins with '-' is never a path, a name or a value"
mkdir "$T/cwd" && cd "$T/cwd" || fail "cd $T/cwd"
# usage CODE CMD... : CMD exits CODE, prints its usage (0: on stdout, 2:
# naming the word on stderr), and leaves the working directory empty.
usage() {
	local code=$1
	shift
	assert_exit "$code" "$@" || return 1
	if [ "$code" = 0 ]; then
		grep -q '^usage: ' "$T/last.out" || fail "'$*': no usage on stdout: $(head -c 300 "$T/last.out")"
	else
		grep -q -- "'$WORD': a word that begins with '-' is an option" "$T/last.err" ||
			fail "'$*': stderr does not name '$WORD': $(head -c 300 "$T/last.err")"
	fi
	assert_eq "" "$(names "$T/cwd")" "what '$*' left in its working directory"
}
usage 0 pbj ca init --help
usage 0 pbj ca issue "$CA" --out --help --admin x
usage 0 ofs_server init --data --help
usage 0 pbj --db --help list
usage 0 pbj --db "$T/jobs.db" schedule add --help --cron "0 3 * * *" -- scrub
usage 0 pbj ca rotate --help
usage 0 pbj ca init -h
usage 0 ofs_server tool --data --help list
WORD=-x usage 2 pbj ca init -x
WORD=-x usage 2 pbj ca issue "$CA" --out -x --admin x
WORD=-x usage 2 pbj ca issue "$CA" --out "$T/idx" --admin -x
WORD=-x usage 2 ofs_server init --data -x
WORD=-x usage 2 ofs_server init --data=-x
WORD=--x usage 2 ofs_server init --data "$T/c" --ca --x
WORD=-x usage 2 pbj --db -x list
WORD=-x usage 2 pbj --db "$T/jobs.db" schedule add -x --cron "0 3 * * *" -- scrub
WORD=-x usage 2 pbj ca rotate -x
WORD=-x usage 2 pbj ca revoke "$CA" -x
WORD=-y usage 2 ofs get /f -- -y
WORD=-y usage 2 ofs put -- -y /g
[ ! -e "$T/c" ] || fail "init with --ca --x made $T/c"
ok pbj --db "$T/jobs.db" schedule list --json
assert_eq 0 "$(jq '.schedules | length' "$T/last.out")" "schedules after the refused adds"
# rotate --help reads no CADIR named --help
mkdir -p "$T/rot/--help" && cp "$CA/cap.key" "$T/rot/--help/cap.key" && cd "$T/rot" &&
	ok pbj ca rotate --help && cmp -s "$CA/cap.key" "$T/rot/--help/cap.key" ||
	fail "ca rotate --help touched --help/cap.key"
cd "$T" || fail "cd $T"

finish
