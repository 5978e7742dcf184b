#!/bin/bash
# t_restart_table: a restart never undoes what was decided while the
# server was down.
#  1. An operator drains server e through server a while e is stopped; e
#     comes back (on another port): every server's table shows e draining
#     at its new address, and still does after later gossip and after
#     another restart. (Before, a restart gave the server's whole entry a
#     new version, and its stale "in" overwrote the operator's decision
#     everywhere.)
#  2. The root directory's copies move (a drain of a server holding one)
#     while e is stopped; e comes back and serves the root with its new
#     SID list. (Before, a returning server compared only the root's OID
#     and kept the old list.)
. "$(dirname "$0")/lib.sh"

start_cluster a:r1 b:r1 c:r2 d:r3 e:r3
ES=$(srv_sid e)

# entry_of NAME SID : "STATE ADDRESS" of SID in NAME's table.
entry_of() {
	ofs_pbj --cluster "$(srv_addr "$1")" servers --json 2>/dev/null |
		jq -r --arg s "$2" '.servers[] | select(.sid == $s) | "\(.state) \(.address)"'
}

# all_see_e_draining : every server's table has e draining at the address
# it serves on now.
all_see_e_draining() {
	local n
	for n in a b c d e; do
		[ "$(entry_of "$n" "$ES")" = "draining $(srv_addr e)" ] || return 1
	done
}

# check_e_draining : the same, as an assertion naming the server that differs.
check_e_draining() {
	local n
	for n in a b c d e; do
		assert_eq "draining $(srv_addr e)" "$(entry_of "$n" "$ES")" "e's entry in $n's table ($1)"
	done
}

log "e stopped, drained through a, restarted"
stop_server e
use_server a
ok ofs_pbj server set "$ES" --state draining
assert_contains "$(cat "$T/last.out")" "state draining" "server set's answer"
old_addr=$(srv_addr e)
restart_server e
log "  e was at $old_addr, now at $(srv_addr e)"
wait_until 30 "every server to list e draining at its new address" all_see_e_draining

# probe_everywhere VALUE : every server's table has b's attribute probe=VALUE
# (set through one server: once it is everywhere, gossip has gone round
# since - a positive observable instead of a sleep).
probe_everywhere() {
	local n
	for n in a b c d e; do
		ofs_pbj --cluster "$(srv_addr "$n")" servers --json 2>/dev/null |
			jq -e --arg s "$(srv_sid b)" --arg v "$1" \
				'any(.servers[]; .sid == $s and .attrs.probe == $v)' >/dev/null || return 1
	done
}

log "... and it stays so: after more gossip (a change made later has reached every server)"
use_server c
ok ofs_pbj server set "$(srv_sid b)" --attr probe=1
wait_until 30 "b's new attribute to reach every server" probe_everywhere 1
check_e_draining "after the later change spread"

log "... and after another restart of e"
restart_server e
wait_until 30 "every server to list e draining at its newest address" all_see_e_draining
use_server d
ok ofs_pbj server set "$(srv_sid b)" --attr probe=2
wait_until 30 "b's second attribute to reach every server" probe_everywhere 2
check_e_draining "after the second restart"

log "a root move while e is down reaches e when it comes back"
# (the first client call makes the root; e, draining, holds no copy of it
# nor of anything else, so the drain below needs nothing from it)
use_server a
ok ofs mkdir /x
ok ofs stat --json /
assert_json "$T/last.out"
mapfile -t root_sids < <(json "$T/last.out" '.sids[]')
[ "${#root_sids[@]}" -ge 2 ] || fail "the root has ${#root_sids[@]} copies, expected at least 2"
for s in "${root_sids[@]}"; do
	[ "$s" != "$ES" ] || fail "the root has a copy on e, which is draining"
done
# The server whose root copy moves: a holder other than a (the one the
# clients here go through).
D=""
for s in "${root_sids[@]}"; do
	[ "$s" = "$(srv_sid a)" ] || { D=$s; break; }
done
[ -n "$D" ] || fail "no root copy on a server other than a"
log "  root on ${root_sids[*]}; draining $(srv_by_sid "$D")"
e_sees_root() {
	OFS_CLUSTER=$(srv_addr e) ofs stat --json / 2>/dev/null | jq -c .sids
}
assert_eq "$(jq -c .sids "$T/last.out")" "$(e_sees_root)" "the root's SID list through e before the move"

stop_server e
export OFS_PBJ_DB=$T/pbj.db
ok ofs_pbj submit drain --server "$D" --wait --json
assert_eq succeeded "$(json "$T/last.out" .state)" "the drain's state"
ok ofs stat --json /
moved=$(jq -c .sids "$T/last.out")
assert_not_contains "$moved" "$D" "the root's SID list after the drain"
log "  the root's copies now: $moved"

restart_server e
e_serves_moved() { [ "$(e_sees_root)" = "$moved" ]; }
wait_until 30 "e to serve the root with its moved SID list" e_serves_moved
use_server e
ok ofs ls /
assert_contains "$(cat "$T/last.out")" "x" "ls / through e"
grep -q "namespace root .* has moved" "$T/e.log" || fail "e did not log that it took the moved root's list"

# Every server restarted on a fresh port, the later ones given a's new
# address: each learns where the others are now from each of them. (A
# server takes no other's address from a third party; where one is said
# to be now, it asks there, and the certificate answering names it.)
log "all five restarted on new ports"
stop_servers a b c d e
restart_server a
for n in b c d e; do restart_server $n --peer "$(srv_addr a)"; done
for n in a b c d e; do
	wait_until 60 "$n to list all five servers up at their new addresses" sees_up $n 5
done

finish
