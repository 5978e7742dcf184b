#!/bin/bash
# t_flood: no flood of connections takes a server from the clients it
# serves (server/listener.h). One server with room for 24 connections,
# 8 of them for one user, and an idle timeout of 3 s. Against it, all at
# once:
#  - 70 TCP connections that never start a handshake, 14 from each of
#    five addresses (127.0.0.2 to .6), reopened as the server drops them
#    - more than its 24 slots (before handshakes were kept apart from
#    slots, every other client was refused while they were held), and
#    more than its 64 handshakes in flight, so new ones take the place of
#    the heaviest address's oldest;
#  - 6 handshakes stalled after their first bytes;
#  - mallory, a user, opening 12 authenticated connections and holding
#    them idle: she gets 8, the other 4 are answered "busy".
# Meanwhile bob, another user, puts and gets 10 files with no error.
# Then mallory's idle connections are closed by the server's idle
# timeout, and its log says "busy" a bounded number of times.
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py
OFS_EBUSY=-10023          # lib/ofs_error.h
keep_going

start_server a --max-conns 24 --max-conns-per-user 8 --idle-timeout 3
use_server a
issue_identity mallory --user mallory --uid 2001 --gid 2001
issue_identity bob --user bob --uid 2002 --gid 2002
ok ofs mkdir /bob
ok ofs chown 2002:2002 /bob

mkfifo "$T/flood.in"
exec 8<>"$T/flood.in"          # (its stdin: closed at the end, which ends it)
# (bash gives a command run with & the empty file for stdin: redirected inside)
bg env OFS_IDENTITY="$T/id/mallory" bash -c 'exec 8>&-; exec python3 "$0" "$1" flood --silent 14 --sources 5 --stalled 6 --idle 12 \
	<"$2" >"$3" 2>"$4"' "$RAW" "$(srv_addr a)" "$T/flood.in" "$T/flood.out" "$T/flood.err"
FLOOD=$BG
await 60 "the flood to be in place" grep -q '^ready' "$T/flood.out"
read -r _ admitted refused first <"$T/flood.out"
say "mallory's idle connections: $admitted admitted, $refused refused ($first)"
assert_eq 8 "$admitted" "mallory's connections admitted (--max-conns-per-user 8)"
assert_eq 4 "$refused" "mallory's connections answered busy"
assert_eq "$OFS_EBUSY" "$first" "the status of mallory's refused connection"

say "bob puts and gets 10 files through the flood"
for i in $(seq 1 10); do
	head -c $((i * 1000)) /dev/urandom >"$T/f$i"
	ok ofs --identity "$T/id/bob" put "$T/f$i" "/bob/f$i"
	ok ofs --identity "$T/id/bob" get "/bob/f$i" "$T/g$i"
	assert_same_file "$T/f$i" "$T/g$i" "bob's file $i"
done

say "mallory's idle connections are closed after --idle-timeout"
await 60 "the server to close mallory's 8 idle connections" grep -q '^idle-closed 8$' "$T/flood.out"
exec 8>&-
wait_pid "$FLOOD" 30
assert_eq 0 "$REAP_ST" "the flood's exit: $(cat "$T/flood.err")"
n=$(grep -c 'answered a connection busy' "$T/a.log")
[ "$n" -le 10 ] || fail "the server logged 'busy' $n times: a flood floods its log"
grep -q 'answered a connection busy: this user holds its share' "$T/a.log" ||
	fail "a's log does not say why mallory was answered busy"
ok ofs --identity "$T/id/bob" ls /bob

finish
