#!/bin/bash
# t_cluster_join: the server-ID database. A fourth server joined through
# one peer (the third server, not the first) appears in every server's
# table and in `ofs-pbj servers` within a bounded wait, and learns the
# whole table itself; a client given only its address learns the rest.
# `ofs-pbj server set` taken by any server (state, attribute, weight)
# reaches every table; a draining server receives no new copies; `--state
# in` returns it to service. Bad `server set` input exits 2.
. "$(dirname "$0")/lib.sh"

start_cluster a:r1 b:r2 c:r3

log "d joins through c only"
start_server d --attr rack=r4 --peer "$(srv_addr c)"
d_sid=$(srv_sid d)
for n in a b c; do
	wait_until 30 "$n to learn d" sees_sid "$n" "$d_sid"
done
wait_until 30 "d to learn the whole table" sees_up d 4
for n in a b c; do
	wait_until 30 "$n to list all four servers up" sees_up "$n" 4
done
use_server a
ok ofs_pbj servers --json
assert_json "$T/last.out"
assert_eq "r4" "$(jq -r --arg s "$d_sid" '.servers[] | select(.sid == $s) | .attrs.rack' "$T/last.out")" \
	"d's rack as a sees it"
assert_eq "$(srv_addr d)" "$(jq -r --arg s "$d_sid" '.servers[] | select(.sid == $s) | .address' "$T/last.out")" \
	"d's address as a sees it"

log "a client given only d's address learns the rest"
use_server d
mkrand "$T/f" 100000
ok ofs put --replicas 3 "$T/f" /viad
ok ofs stat --json /viad
assert_json "$T/last.out"
assert_eq 3 "$(json "$T/last.out" '.sids | unique | length')" "copies of a file put through d"
ok ofs get /viad "$T/back"
assert_same_file "$T/f" "$T/back" "file put through d"
# At once through every other server: the namespace d's client made is the
# cluster's, not one of several (no waiting for gossip here).
for n in a b c; do
	use_server "$n"
	ok ofs get /viad "$T/back.$n"
	assert_same_file "$T/f" "$T/back.$n" "file put through d, read through $n"
done

log "server set through b reaches every table"
use_server b
ok ofs_pbj server set "${d_sid:0:10}" --state draining
# state_on NAME FIELD VALUE : NAME's table shows d with .FIELD == VALUE.
state_on() {
	"$OFS_PBJ" --cluster "$(srv_addr "$1")" servers --json 2>/dev/null |
		jq -e --arg s "$d_sid" --arg v "$3" ".servers[] | select(.sid == \$s) | (.$2 | tostring) == \$v" >/dev/null
}
for n in a b c d; do
	wait_until 30 "$n to see d draining" state_on "$n" state draining
done
ok ofs_pbj server set "$d_sid" --attr building=b7
ok ofs_pbj server set "$d_sid" --weight 2.5
for n in a b c d; do
	wait_until 30 "$n to see d's new attribute" state_on "$n" attrs.building b7
	wait_until 30 "$n to see d's new weight" state_on "$n" weight 2.5
	state_on "$n" state draining || fail "$n: d no longer draining after later changes"
	state_on "$n" attrs.rack r4 || fail "$n: d lost its rack attribute"
done

log "no new copies on a draining server"
use_server a
ok ofs mkdir /new
for i in $(seq 1 12); do
	ok ofs put --replicas 3 "$T/f" "/new/f$i"
	ok ofs stat --json "/new/f$i"
	assert_json "$T/last.out"
	if jq -e --arg s "$d_sid" '(.sids | index($s)) != null or any(.dfiles[]; (.sids | index($s)) != null)' \
		"$T/last.out" >/dev/null; then
		fail "/new/f$i has a copy on draining server d"
	fi
done
ok ofs stat --json /new
jq -e --arg s "$d_sid" '(.sids | index($s)) == null' "$T/last.out" >/dev/null ||
	fail "directory /new has a copy on draining server d"
ok ofs get /viad "$T/back"
assert_same_file "$T/f" "$T/back" "a draining server still serves its copies"

log "--state in returns it to service"
ok ofs_pbj server set "$d_sid" --state in
for n in a b c d; do
	wait_until 30 "$n to see d in service" state_on "$n" state in
done
found=0
for i in $(seq 1 40); do
	ok ofs put --replicas 3 "$T/f" "/new/g$i"
	ofs stat --json "/new/g$i" | jq -e --arg s "$d_sid" '(.sids | index($s)) != null' >/dev/null &&
		{ found=1; break; }
done
# (With four racks and three copies, each new object misses one server:
# forty in a row without d would be odds of (1/4)^40.)
[ "$found" -eq 1 ] || fail "no new object placed on d after it returned to service"

log "bad server set input"
assert_exit 2 ofs_pbj server set "$d_sid" --state sideways
assert_exit 2 ofs_pbj server set "$d_sid" --weight -1
assert_exit 2 ofs_pbj server set "$d_sid" --attr novalue
assert_exit 2 ofs_pbj server set "$d_sid"
assert_exit 2 ofs_pbj server set ffffffffffffffffffffffffffffffff --state out
assert_exit 2 ofs_pbj server set zz --state out
assert_exit 2 ofs_pbj servers --bogus
state_on a state in || fail "refused changes altered d"

finish
