#!/bin/bash
# t_hang: a hung server is a down server (docs/design.md, "A hung
# server"). Three servers a b c; a client puts files the whole time
# (`ofs put --replicas 3 --confidence 2`, 1-8 KB, one `ofs` process a
# put), each put bounded by PUT_BOUND seconds (the target is 10 s; a put
# killed by the bound fails the test). c is stopped (SIGSTOP): its kernel
# still acknowledges TCP, so only deadlines end what waits on it. Once the
# cluster shows c down, 10 more puts must be acknowledged with none failed
# or killed; then c continues, refuses the forwarded change that waited in
# its socket past its deadline, and catches up. Then b's disk stalls (the
# test build's OFS_SERVER_FAULT=stall-syncs: its commits wait while
# $T/stall exists): b is shown down, and the same holds. At the end every
# acknowledged file reads back through each server and, after a repair,
# a scrub is clean. First, the fence itself: a forwarded change whose
# deadline has passed is refused (OFS_ELATE) and changes nothing, one
# within it is applied.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/putwriter.sh"

PUT_BOUND=15                 # the bound on one put: the target's 10 s, and slack
PW_DIR=/h PW_TIMEOUT=$PUT_BOUND
ELATE=-10026                 # lib/ofs_error.h
RAW=$ITEST_DIR/rawframe.py

start_server a --attr rack=r1
OFS_SERVER_FAULT=stall-syncs:$T/stall start_server b --attr rack=r2 --peer "$(srv_addr a)"
start_server c --attr rack=r3 --peer "$(srv_addr a)"
export OFS_CLUSTER=$(srv_addr a),$(srv_addr b),$(srv_addr c)
set_addrs a b c
export OFS_PBJ_DB=$T/pbj.db
await 30 "the three servers to know each other" \
	bash -c '[ "$("$0" servers --json | jq "[.servers[] | select(.up)] | length")" = 3 ]' "$OFS_BIN/ofs-pbj"
ok ofs mkdir /h

# ---- the fence: a forwarded change is applied only before its deadline ----------
say "a forwarded change past its deadline is refused and changes nothing"
head -c 3000 /dev/urandom >"$T/fence"
ok ofs put --replicas 3 "$T/fence" /h/fence
F_MF=$(ofs stat --json /h/fence | jq -r .oid)
fwdmode() {   # fwdmode SERVER MODE AGE_MS: its status, sent as server a
	OFS_IDENTITY=$(srv_data a)/identity python3 "$RAW" "$(srv_addr "$1")" fwdmode "$F_MF" "$2" "$3"
}
for n in a b c; do assert_eq $ELATE "$(fwdmode $n 600 5000)" "a change 5 s past its deadline, to $n"; done
assert_eq 420 "$(ofs stat --json /h/fence | jq .mode)" "the mode after the refused changes"
for n in a b c; do assert_eq 0 "$(fwdmode $n 600 -10000)" "a change within its deadline, to $n"; done
assert_eq 384 "$(ofs stat --json /h/fence | jq .mode)" "the mode after the changes in time"
grep -q "forwarded setattr of $F_MF came after its deadline: refused" "$T/a.log" ||
	fail "a's log does not name the refused late change"

# settled : every server up, none recovering, none with copies behind.
settled() {
	ofs_pbj servers --json >"$T/servers.json" 2>"$T/why" &&
		jq -c '[.servers[] | {address, up, recovering, behind}]' "$T/servers.json" >"$T/why" &&
		jq -e '(.servers | length) == 3 and
			all(.servers[]; .up == true and .behind == 0 and .recovering == false)' \
			"$T/servers.json" >/dev/null
}
# none_failed PHASE : no put begun in PHASE failed or was killed.
none_failed() {
	local st
	st=$(put_stats "$1")
	say "puts begun while $1: $st"
	[[ "$st" == *", 0 refused, 0 killed,"* ]] || fail "puts failed while $1: $(writer_summary)"
}

phase start
: >"$T/writer.log"
bg writer
WRITER=$BG
await 60 "the writer's first 10 acknowledged puts" acked_at_least 10
say "before: $(put_stats start)"

# shown_down NAME : the table of a server other than NAME shows NAME down.
shown_down() {
	local via=a
	[ "$1" != a ] || via=b
	OFS_CLUSTER=$(srv_addr $via) ofs_pbj servers --json >"$T/servers.json" 2>"$T/why" &&
		jq -e --arg s "$(srv_sid "$1")" 'any(.servers[]; .sid == $s and .up == false)' \
			"$T/servers.json" >/dev/null
}

# hang NAME GOING GONE HANG RESUME [AFTER] : NAME hangs (the command
# HANG; phase NAME-GOING until it is shown down), 10 more puts are
# acknowledged while it hangs (phase NAME-GONE), none failed; then it
# comes back (RESUME), AFTER (a command, if any) holds, and it catches up.
hang() {
	local name=$1 going=$2 gone=$3 base
	phase "$name-$going"
	$4
	await 60 "$name to be shown down" shown_down "$name"
	phase "$name-$gone"
	base=$(acked)
	await 120 "10 more acknowledged puts with $name $gone ($base before)" \
		acked_at_least $((base + 10))
	phase "$name-back"
	$5
	none_failed "$name-$gone"
	[ -z "${6:-}" ] || await 30 "$name: $6" "$6"
	await 120 "$name to catch up" settled
}
stop_c() { kill -STOP "$(srv_pid c)"; }
cont_c() { kill -CONT "$(srv_pid c)"; }
stall_b() { touch "$T/stall"; }
unstall_b() { rm -f "$T/stall"; }
# (the change a primary forwarded to c, and gave up on, waited in c's
# socket: c refuses it when it continues, rather than apply it after the
# catch-up)
late_refused() { grep -q "came after its deadline: refused" "$T/c.log"; }

hang c stopping stopped stop_c cont_c late_refused
hang b stalling stalled stall_b unstall_b

phase end
touch "$T/stop-writer"
wait_pid "$WRITER" $((PUT_BOUND + 20))
[ "$REAP_ST" = 0 ] || fail "the writer did not end after its stop file (status $REAP_ST)"
say "writer: $(writer_summary)"
await 60 "every server up, none recovering, none behind, at the end" settled
keep_going
for n in a b c; do check_all "at the end" "$n"; done
# (a put killed by the writer's bound - its client died mid-put, its
# outcome unknown - may leave what it had made: a repair mends that, and
# then the scrub is clean)
ok ofs_pbj submit repair --wait
ok ofs_pbj submit scrub --wait --json
assert_eq 0 "$(jq .findings.total "$T/last.out")" "findings of the scrub after the repair"
finish
