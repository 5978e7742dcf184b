#!/bin/bash
# t_nscheck_join: the namespace check as a join when a server does not
# join. Three servers (racks r1 r2 r3); c runs --no-join, so it refuses
# the join's records and checks its own objects with questions, and a and
# b check with questions whatever c would have told them. Forty small
# files with 3 copies. Two metafile copies are removed: on c, of a file
# whose primary (the copy that compares) is c; and on a, of a file whose
# copies are a, b, c - a lead that lacks the copy, which the siblings'
# summaries sent to it reveal (a sends them back, and b, the first copy
# not at fault, checks that file itself and reports).
# Then:
#   repair --dry-run --metadata-only  finds exactly those two
#                                     missing_replica (found by a or b);
#   a and b log their joins, with objects checked the old way; c logs none;
#   repair --metadata-only            fetches the copies back;
#   scrub --metadata-only             is clean, and the files read back.
. "$(dirname "$0")/lib.sh"

NF=40     # (each file's copies in one of six orders: each order is some file's)
start_server a --attr rack=r1
start_server b --attr rack=r2 --peer "$(srv_addr a)"
start_server c --attr rack=r3 --peer "$(srv_addr a)" --no-join
for n in a b c; do wait_until 30 "$n to list all 3 servers as up" sees_up "$n" 3; done
use_server a
export OFS_PBJ_DB=$T/pbj.db
ok ofs mkdir /d
: >"$T/list"
for i in $(seq 1 "$NF"); do
	mkrand "$T/src$i" 1024
	echo "$T/src$i /d/f$i 3 1 1048576" >>"$T/list"
done
"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/list" || fail "putmany"

# copies_start SIDS... : a file (its number) whose metafile's copies
# start with these SIDs, in this order
copies_start() {
	local i
	for i in $(seq 1 "$NF"); do
		if ofs stat --json "/d/f$i" |
			jq -e --arg w "$*" --argjson n $# '.sids[0:$n] | join(" ") == $w' >/dev/null; then
			echo "$i"
			return 0
		fi
	done
	return 1
}
# one on c (which does not join; its primary); one on a (which joins; its
# primary), of a file whose second copy is b's: the copy that reports a
# problem between copies is the first that is not at fault, and c, which
# does not join, does not look while a answers
CSID=$(srv_sid c) ASID=$(srv_sid a) BSID=$(srv_sid b)
VICTIM=$(copies_start "$CSID") || fail "no file of the $NF has its metafile's primary on c"
AVICTIM=$(copies_start "$ASID" "$BSID") || fail "no file of the $NF has its metafile's copies on a, b, c"
MF=$(ofs stat --json "/d/f$VICTIM" | jq -r .oid)
AMF=$(ofs stat --json "/d/f$AVICTIM" | jq -r .oid)
use_server b
stop_servers a c
ofs_server tool --data "$(srv_data c)" remove "$MF" || fail "tool remove $MF on c"
ofs_server tool --data "$(srv_data a)" remove "$AMF" || fail "tool remove $AMF on a"
restart_same_port a
restart_same_port c
for n in a b c; do wait_until 30 "$n to list all 3 servers as up" sees_up "$n" 3; done
use_server a

joins() { cat "$T/$1.log" | grep -c "join: .* objects walked"; }
assert_exit 1 ofs_pbj submit repair --dry-run --metadata-only --wait --json
JOB=$(json "$T/last.out" .id)
ok ofs_pbj report "$JOB" --json
assert_eq "missing_replica missing_replica" "$(json "$T/last.out" '[.findings[].kind] | join(" ")')" "the dry run finds"
assert_eq "$CSID $MF" "$(json "$T/last.out" '.findings[] | select(.oid == "'"$MF"'") | "\(.server) \(.oid)"')" "c's copy missing"
assert_eq "$ASID $AMF" "$(json "$T/last.out" '.findings[] | select(.oid == "'"$AMF"'") | "\(.server) \(.oid)"')" "a's copy missing"
assert_eq 1 "$(joins a)" "a's joins"
assert_eq 1 "$(joins b)" "b's joins"
assert_eq 0 "$(joins c)" "c's joins (--no-join)"
for n in a b; do
	redone=$(sed -n 's/.*join: .* pointers met, \([0-9]*\) checked the old way.*/\1/p' "$T/$n.log")
	[ "${redone:-0}" -gt 0 ] || fail "$n checked nothing the old way, though c did not join: $(grep 'join:' "$T/$n.log")"
done

assert_exit 0 ofs_pbj submit repair --metadata-only --wait --json
assert_exit 0 ofs_pbj submit scrub --metadata-only --wait --json
assert_eq 0 "$(json "$T/last.out" .findings.total)" "the scrub after the repair"
for i in "$VICTIM" "$AVICTIM"; do
	ok ofs get "/d/f$i" "$T/back"
	assert_same_file "$T/src$i" "$T/back" "/d/f$i reads back"
done
finish
