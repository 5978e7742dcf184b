#!/bin/bash
# t_errors: user-facing errors of `ofs` - the exit status (2 usage or bad
# input, 3 failure), a message on stderr as "ofs: ..." that names what went
# wrong, and nothing half-done: --help and --version succeed on stdout.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

# err_is CODE REGEX CMD... : exit CODE and stderr matching REGEX (ERE,
# case-insensitive), stderr prefixed "ofs: ".
err_is() {
	local code=$1 re=$2
	shift 2
	assert_exit "$code" "$@" || return 1
	grep -q '^ofs: ' "$T/last.err" ||
		fail "'$*': stderr does not start with 'ofs: ': $(head -c 300 "$T/last.err")" || return 1
	grep -qiE "$re" "$T/last.err" ||
		fail "'$*': stderr does not match /$re/: $(head -c 300 "$T/last.err")"
}

# The checks here are independent: report every one that fails.
keep_going

# ---- no server needed -------------------------------------------------------

assert_exit 0 ofs --help
grep -qi usage "$T/last.out" || fail "ofs --help: no usage on stdout: $(head -c 300 "$T/last.out")"
for cmd in mkdir put get ls stat rm rmdir mv; do
	grep -qw "$cmd" "$T/last.out" || fail "ofs --help does not mention '$cmd'"
done
assert_exit 0 ofs --version
grep -qE '[0-9]+\.[0-9]+' "$T/last.out" || fail "ofs --version: no version on stdout: $(cat "$T/last.out")"

# No cluster named anywhere: a usage error, before any network.
unset OFS_CLUSTER
err_is 2 'cluster' ofs ls /
err_is 2 'cluster' ofs mkdir /x

# An address that is not HOST:PORT is bad input.
err_is 2 '.' ofs --cluster not-an-address ls /

# Unreachable cluster: a port nobody listens on (bound, never listening).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
err_is 3 "unreach|refused|connect|127\.0\.0\.1:$port" ofs --cluster "127.0.0.1:$port" ls /
OFS_CLUSTER=127.0.0.1:$port err_is 3 "unreach|refused|connect|127\.0\.0\.1:$port" ofs ls /

# ofs-server answers --help and --version too.
assert_exit 0 ofs_server --help
grep -qi usage "$T/last.out" || fail "ofs-server --help: no usage on stdout"
assert_exit 0 ofs_server --version
grep -qE '[0-9]+\.[0-9]+' "$T/last.out" || fail "ofs-server --version: no version on stdout"
assert_exit 2 ofs_server frobnicate
assert_exit 2 ofs_server run --listen 127.0.0.1:0

# ofs-pbj submit's help comes from the options table, per job type, and
# shows each option's default; it and a bad submit word make no job
# database.
export OFS_PBJ_DB=$T/help.db
assert_exit 0 ofs_pbj submit scrub --help
grep -q -- '--max-repairs N' "$T/last.out" || fail "submit scrub --help: no --max-repairs"
grep -q 'repair.max_objects, else 1000' "$T/last.out" ||
	fail "submit scrub --help: --max-repairs's default not shown"
grep -q -- '--threshold' "$T/last.out" && fail "submit scrub --help shows rebalance's --threshold"
assert_exit 0 ofs_pbj submit drain -h
grep -q 'submit drain --server SID' "$T/last.out" || fail "submit drain -h: no usage line"
assert_exit 0 ofs_pbj submit --help
for type in scrub repair drain rebalance; do
	grep -q "submit $type " "$T/last.out" || fail "submit --help does not show $type"
done
# pbj_err_is CODE REGEX ARGS... : as err_is, for ofs-pbj ("ofs-pbj: ").
pbj_err_is() {
	local code=$1 re=$2
	shift 2
	assert_exit "$code" ofs_pbj "$@" || return 1
	grep -qE "^ofs-pbj: .*$re" "$T/last.err" ||
		fail "'ofs-pbj $*': stderr does not match /$re/: $(head -c 300 "$T/last.err")"
}
pbj_err_is 2 'submit frob: unknown job type' submit frob --help
pbj_err_is 2 "unknown option '--threshold'" submit scrub --threshold 5
grep -q 'submit scrub --help' "$T/last.err" || fail "a bad submit word does not say where help is"
pbj_err_is 2 'rate 1: bytes per second' submit drain --server abcd --rate 1
[ -e "$T/help.db" ] && fail "submit --help or a bad submit word made a job database"
unset OFS_PBJ_DB

# --help and -h after every command and subcommand of the three programs
# print that command's usage on stdout and exit 0, and make nothing.
# help_is WORDS PROG ARGS... : exit 0, "usage: PROG [... | ]WORDS" on stdout
help_is() {
	local words=$1
	shift
	assert_exit 0 "$@" || return 1
	grep -qE "^usage: [^ ]+ (.*\| )?$words( |\$)" "$T/last.out" ||
		fail "'$*': no 'usage: ... $words' on stdout: $(head -c 200 "$T/last.out")"
}
export OFS_PBJ_DB=$T/help.db
for c in serve list status report pause resume cancel wait servers ok-to-stop health; do
	for h in --help -h; do help_is "$c" ofs_pbj "$c" $h; done
done
for c in "config list" "schedule add" "schedule list" "server set" "ca init" "ca issue" \
	"ca revoke" "ca rotate" "submit scrub" "submit drain"; do
	# shellcheck disable=SC2086
	help_is "$c" ofs_pbj $c --help
done
help_is ok-to-stop ofs_pbj help ok-to-stop
for c in mkdir put get ls stat rm rmdir mv chmod chown whoami; do
	help_is "$c" ofs "$c" --help
	help_is "$c" ofs help "$c"
done
for c in init certify run inspect ops tool; do
	help_is "$c" ofs_server "$c" --help
	help_is "$c" ofs_server help "$c"
done
[ -e "$T/help.db" ] && fail "a command's --help made a job database"
unset OFS_PBJ_DB

# Errors name the file or value at fault, with the usage exit status.
pbj_err_is 2 '--cluster bogus: not HOST:PORT' --cluster bogus servers
OFS_CLUSTER=127.0.0.1:1,zz pbj_err_is 2 'OFS_CLUSTER entry zz: not HOST:PORT' list
OFS_CLUSTER=zz err_is 2 'OFS_CLUSTER entry zz: not HOST:PORT' ofs ls /
pbj_err_is 2 'job database /missing/dir/x.db: its folder /missing/dir does not exist' \
	--db /missing/dir/x.db list
pbj_err_is 2 '/nonexistent: not a CA directory' --cluster 127.0.0.1:1 --insecure \
	ca revoke /nonexistent "$T/bob/cert.pem"
ok ofs_pbj ca init "$T/ca2"
pbj_err_is 2 "$T/bob/cert.pem: No such file" --cluster 127.0.0.1:1 --insecure \
	ca revoke "$T/ca2" "$T/bob/cert.pem"

# A failed init leaves nothing behind, so the corrected command works;
# an empty directory given stays, empty; a full one is not touched.
assert_exit 3 ofs_server init --data "$T/new" --ca "$T/missing-ca"
grep -q 'missing-ca/ca.key' "$T/last.err" || fail "init --ca /missing does not name the CA file"
[ -e "$T/new" ] && fail "a failed init left $T/new behind: $(ls -A "$T/new")"
mkdir "$T/empty"
assert_exit 3 ofs_server init --data "$T/empty" --ca "$T/missing-ca"
[ -z "$(ls -A "$T/empty")" ] || fail "a failed init left files in an empty dir: $(ls -A "$T/empty")"
mkdir "$T/full" && echo keep >"$T/full/keep"
assert_exit 2 ofs_server init --data "$T/full" --chunk-size 3
assert_exit 3 ofs_server init --data "$T/full"
[ "$(ls -A "$T/full")" = keep ] || fail "init touched a directory that was not empty: $(ls -A "$T/full")"
ok ofs_server init --data "$T/new" --ca "$T/ca2"
[ -s "$T/new/identity/cert.pem" ] || fail "init after a failed one: no identity in $T/new"

# ---- against a server ---------------------------------------------------------
start_server a
echo hello >"$T/hello"

# Usage errors: unknown command, missing or extra arguments.
err_is 2 'frobnicate|unknown|usage' ofs frobnicate /
err_is 2 '.' ofs
err_is 2 '.' ofs put
err_is 2 '.' ofs put "$T/hello"
err_is 2 '.' ofs get /x
err_is 2 '.' ofs mkdir
err_is 2 '.' ofs mv /a
err_is 2 '.' ofs rm
err_is 2 '.' ofs rmdir
err_is 2 '.' ofs stat
err_is 2 '.' ofs mkdir /a /b
err_is 2 '.' ofs ls --bogus-flag /
err_is 2 '.' ofs put "$T/hello" /h --replicas banana

# Bad paths: relative, empty, a name too long - exit 2, the path named.
err_is 2 'sub/dir' ofs mkdir sub/dir
err_is 2 'sub/dir' ofs put "$T/hello" sub/dir
err_is 2 'sub/dir' ofs get sub/dir "$T/out"
err_is 2 'sub/dir' ofs ls sub/dir
err_is 2 'sub/dir' ofs stat sub/dir
err_is 2 'sub/dir' ofs rm sub/dir
err_is 2 'sub/dir' ofs rmdir sub/dir
err_is 2 '.' ofs mkdir ''
err_is 2 '.' ofs mkdir "/$(printf 'n%.0s' $(seq 300))"
ok ofs mkdir /m
# mv with a relative path: a usage error that says so, not something else.
for args in "sub/dir /m2" "/m sub/dir"; do
	# shellcheck disable=SC2086
	err_is 2 'sub/dir' ofs mv $args || continue
	grep -qi 'into itself' "$T/last.err" &&
		fail "'ofs mv $args' blames a move into itself: $(cat "$T/last.err")"
done
ok ofs rmdir /m

# get of a missing file: exit 3, message names the path.
err_is 3 '/missing' ofs get /missing "$T/out"
[ ! -e "$T/out" ] || [ ! -s "$T/out" ] || fail "ofs get /missing left a non-empty $T/out"
err_is 3 '/missing' ofs stat /missing
err_is 3 '/missing' ofs ls /missing
err_is 3 '/missing' ofs rm /missing

# mkdir of an existing path: exit 3, "exists"; the directory is intact.
ok ofs mkdir /d
ok ofs put "$T/hello" /d/keep
err_is 3 'exist' ofs mkdir /d
ok ofs get /d/keep "$T/keep"
assert_same_file "$T/hello" "$T/keep" "/d/keep after a failed mkdir /d"
err_is 3 'exist' ofs mkdir /d/keep

# put into a missing parent: exit 3, nothing created.
err_is 3 '/nope' ofs put "$T/hello" /nope/x
err_is 3 '/nope' ofs ls /nope
# put under a file (a component that is not a directory).
err_is 3 'director' ofs put "$T/hello" /d/keep/x
# put onto a directory.
err_is 3 'director' ofs put "$T/hello" /d
# get of a directory; get into a local directory that does not exist.
err_is 3 'director' ofs get /d "$T/out"
err_is 3 '.' ofs get /d/keep "$T/no-such-dir/out"
# A failed get leaves no partial local file behind.
leftovers=$(find "$T" -maxdepth 1 -name 'out*' | head -n 3)
[ -z "$leftovers" ] || fail "failed gets left local files behind: $leftovers"
# rm of a directory, rmdir of a file.
err_is 3 'director' ofs rm /d
err_is 3 'director' ofs rmdir /d/keep
# a local file that does not exist (bad input or failure: 2 or 3).
ofs put "$T/no-such-local-file" /x >"$T/last.out" 2>"$T/last.err"
rc=$?
[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "put of a missing local file exited $rc, expected 2 or 3"
grep -q 'no-such-local-file' "$T/last.err" || fail "put of a missing local file: message does not name it"
err_is 3 '/x' ofs stat /x

# The server is still fine after all of that.
ok ofs ls /
ok ofs get /d/keep -
assert_eq hello "$(cat "$T/last.out")" "get /d/keep - after the errors"
stop_server a

# And once it is gone, the same command fails as unreachable.
err_is 3 "unreach|refused|connect|$(srv_addr a)" ofs ls /

# Bad input is reported as bad input (exit 2) before any network: the
# same relative paths, against a cluster that cannot be reached.
for args in "mkdir sub/dir" "get sub/dir $T/out" "put $T/hello sub/dir" "ls sub/dir" \
	"rm sub/dir" "mv sub/dir /abs" "mv /abs sub/dir"; do
	# shellcheck disable=SC2086
	err_is 2 'sub/dir' ofs --cluster "127.0.0.1:$port" $args
done

finish
