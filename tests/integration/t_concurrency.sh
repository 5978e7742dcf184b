#!/bin/bash
# t_concurrency: 256 clients connected at once each put and read back their
# own file; and clients that stall (half a frame header, then nothing) or
# connect and send nothing do not hold up anyone else. FREEZE (the move
# step's hold) is held by one holder at a time.
. "$(dirname "$0")/lib.sh"

N=256
CC=$OFS_ITEST_BIN/concurrent_clients
if [ ! -x "$CC" ] && [ "$OFS_ITEST_BIN" = "$OFS_ROOT/build/normal/itest" ]; then
	make -C "$OFS_ROOT" --no-print-directory build/normal/itest/concurrent_clients >"$T/make.out" 2>&1 ||
		fail "cannot build $CC: $(tail -n 5 "$T/make.out")"
fi
[ -x "$CC" ] || fail "$CC not built (make SANITIZE=... check-build builds it)"

start_server a

# ---- 256 clients at once --------------------------------------------------------
t0=$(now_ms)
timeout 240 "$CC" "$OFS_CLUSTER" "$N" /cc >"$T/cc.out" 2>"$T/cc.err"
rc=$?
[ "$rc" -eq 0 ] || fail "concurrent_clients $N exited $rc: $(tail -n 5 "$T/cc.err") $(tail -n 2 "$T/cc.out")"
log "$N concurrent clients: $(tail -n 1 "$T/cc.out") ($(($(now_ms) - t0)) ms)"
grep -q "^opened $N clients" "$T/cc.out" || fail "concurrent_clients did not hold $N connections open"

ofs ls /cc >"$T/ls" 2>"$T/last.err" || fail "ofs ls /cc: $(cat "$T/last.err")"
seq 0 $((N - 1)) | sed 's/^/c/' | LC_ALL=C sort >"$T/want"
LC_ALL=C sort "$T/ls" >"$T/got"
cmp -s "$T/want" "$T/got" || fail "ls /cc after $N clients: $(diff "$T/want" "$T/got" | head -n 5)"
for i in 0 17 255; do
	ok ofs get "/cc/c$i" "$T/c$i"
	assert_eq "client $i" "$(head -n 1 "$T/c$i")" "first line of /cc/c$i"
	assert_eq $((1000 + 37 * i)) "$(stat -c %s "$T/c$i")" "size of /cc/c$i"
done

# ---- one mover at a time: FREEZE has a holder -----------------------------------
# (two servers moving their copies of one object at once would each set its
# SID list from the one they had read; the later would undo the earlier)
RAW=$ITEST_DIR/rawframe.py
O=00112233445566778899aabbccddeeff
# (a holder speaks as itself: each freeze goes with the certificate of
# the server it names - two data dirs made for their identities)
for h in h1 h2; do
	ofs_server init --data "$T/$h" --ca "$CA" >"$T/$h.sid" || fail "init $h"
done
H1=$(cat "$T/h1.sid") H2=$(cat "$T/h2.sid")
frz() {
	local id=$T/h2/identity
	[ "$3" != "$H1" ] || id=$T/h1/identity
	OFS_IDENTITY=$id python3 "$RAW" "$OFS_CLUSTER" freeze "$@" 2>"$T/frz.err" ||
		fail "rawframe freeze $*: $(cat "$T/frz.err")"
}
assert_eq 0 "$(frz $O 20000 $H1)" "the first holder holds it"
assert_eq 0 "$(frz $O 20000 $H1)" "... and may hold it longer"
assert_eq -16 "$(frz $O 20000 $H2)" "a second holder: EBUSY"
assert_eq 0 "$(frz $O 0 $H2)" "the second holder's lift is a no-op ..."
assert_eq -16 "$(frz $O 20000 $H2)" "... the first still holds it"
assert_eq 0 "$(frz $O 0 $H1)" "the holder lifts it"
assert_eq 0 "$(frz $O 20000 $H2)" "then the second may hold it"
assert_eq 0 "$(frz $O 0 $H2)" "and lift it"

# ---- stalled and silent clients ------------------------------------------------
mkfifo "$T/stall.in"
bg sh -c 'exec python3 "$1" "$2" stall --idle 8 --seconds 240 <"$3" >"$4" 2>&1' stall \
	"$ITEST_DIR/rawframe.py" "$OFS_CLUSTER" "$T/stall.in" "$T/stall.out"
stall_pid=$BG
exec 9>"$T/stall.in"           # the staller runs until this closes
stall_ready() { grep -q '^ready' "$T/stall.out"; }
wait_until 30 "the stalling client to connect" stall_ready

# While they hold their connections, everyone else is served.
mkrand "$T/during" $((3 * 1024 * 1024 + 5))
ok timeout 60 "$OFS_CLI" put "$T/during" /during
ok timeout 60 "$OFS_CLI" get /during "$T/during.got"
assert_same_file "$T/during" "$T/during.got" "put/get while clients stall"
ok timeout 60 "$OFS_CLI" ls /
ok timeout 60 python3 "$ITEST_DIR/rawframe.py" "$OFS_CLUSTER" ping
timeout 120 "$CC" "$OFS_CLUSTER" 32 /cc2 >"$T/cc2.out" 2>"$T/cc2.err" ||
	fail "32 clients while others stall: $(tail -n 5 "$T/cc2.err")"

server_alive a || fail "server died while clients stalled"
stall_ready && ! _proc_done "$stall_pid" || fail "the stalling client gave up early: $(cat "$T/stall.out")"
exec 9>&-
wait_pid "$stall_pid" 30
[ "$REAP_ST" = 0 ] || fail "stalling client ended with $REAP_ST: $(cat "$T/stall.out")"

ok ofs ls /cc2
assert_eq 32 "$(wc -l <"$T/last.out")" "entries of /cc2"
stop_server a
exit 0
