#!/bin/bash
# t_failover: a change whose first copy dies after applying it, before it
# answers. Three servers; every one would exit right after applying and
# forwarding a client's dirent_remove (the test build's OFS_SERVER_FAULT),
# as a crash between a change and its reply does. `ofs rm` of a file with
# three copies then meets its entry already removed on the next copy it
# asks. The remove was made - by this very rm - so:
#  - `ofs rm` exits 0 (not "no such file or directory");
#  - the name is gone through every server;
#  - the file's objects are removed too: once the dead server is back and
#    caught up, a scrub finds nothing (no orphaned metafile or dfile);
#  - a second rm of the name is refused as missing (exit 3, "no such
#    file"), and removes nothing else.
# Then the same crash under `ofs mv`, whose last step removes the old
# name: the mv exits 0, the file reads back under its new name, the old
# name is gone, and a scrub once the server is back finds nothing.
# Last, a replaced file whose dfile's removal only one copy applies: one
# of its three copies was already lost (removed with the object tool)
# and another server is down, so the dfile's primary answers "fewer
# copies than the confidence" (it removed its own and noted the others).
# The put still removes the old metafile - it does not leave one naming
# bytes that are gone - and once the server is back and caught up, a
# scrub finds nothing.
# Last, a replace through a primary whose copy of the directory lacks the
# name (its entry removed there with the object tool, as a server just
# healed from a partition lacks a name made while it was cut off, until
# its peers tell it what it missed): the other copies answer the file
# they replaced, the put destroys that file (no orphan: gone on every
# server), the primary marks its own copy behind and catches up, and a
# scrub finds nothing.
# Last, a remove through a dfile's primary that does not hold it (lost
# with the object tool, as a server just healed lacks an object made
# while it was cut off): it answers "no copy here", the next copy takes
# the remove, and the file is gone on every server with nothing left for
# a scrub to find.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

settled() {
	"$OFS_PBJ" servers --json >"$T/servers.json" 2>"$T/servers.err" || return 1
	jq -e '(.servers | length) == 3 and all(.servers[]; .up == true and .recovering == false and .behind == 0)' \
		"$T/servers.json" >/dev/null
}

# reap_faulted WHAT : the one server that exited on its test fault after
# taking WHAT; $dead names it, with its exit status (70) checked.
reap_faulted() {
	dead=
	for m in a b c; do
		server_alive "$m" || dead=$m
	done
	[ -n "$dead" ] || fail "expected the server that took $1 to exit (its test fault); all three run"
	wait_pid "$(srv_pid "$dead")" 10
	assert_eq 70 "$REAP_ST" "exit status of the server that took $1 (the fault's)"
	SRV_PID[$dead]=""
}

OFS_SERVER_FAULT=exit-after:dirent_remove start_cluster a:r1 b:r2 c:r3
ok ofs mkdir /d
mkrand "$T/src" 300000
ok ofs put --replicas 3 --confidence 2 "$T/src" /d/f
ok ofs put --replicas 3 --confidence 2 "$T/src" /d/keep

# The server that took the rm exits; the rm goes on to the next copy.
ok ofs rm /d/f
# (it exited before the rm's connection to it broke, so before rm ended)
reap_faulted "the rm"
log "server $dead took the remove and exited before answering"
assert_contains "$(cat "$T/$dead.log")" "test fault: exiting after dirent_remove"

for m in a b c; do
	[ "$m" = "$dead" ] && continue
	OFS_CLUSTER=$(srv_addr "$m") ok ofs ls /d
	assert_eq keep "$(cat "$T/last.out")" "ls /d through $m after the rm"
done
for m in a b c; do
	[ "$m" = "$dead" ] || { use_server "$m"; break; }
done
assert_exit 3 ofs rm /d/f
assert_contains "$(cat "$T/last.err")" "no such file"
ok ofs get /d/keep "$T/keep.back"
assert_same_file "$T/src" "$T/keep.back"

# Back (with the fault again): it catches up on what it missed, and a
# scrub finds nothing left of the file.
OFS_SERVER_FAULT=exit-after:dirent_remove restart_server "$dead"
wait_until 60 "every server up with no copies behind" settled
clean_scrub_no_repair "$T/pbj.db"
OFS_CLUSTER=$(srv_addr "$dead") ok ofs ls /d
assert_eq keep "$(cat "$T/last.out")" "ls /d through $dead once it is back"

# A rename: its remove of the old name meets the same crash.
ok ofs mv /d/keep /d/moved
reap_faulted "the mv's remove"
for m in a b c; do
	[ "$m" = "$dead" ] && continue
	OFS_CLUSTER=$(srv_addr "$m") ok ofs ls /d
	assert_eq moved "$(cat "$T/last.out")" "ls /d through $m after the mv"
	use_server "$m"
done
ok ofs get /d/moved "$T/moved.back"
assert_same_file "$T/src" "$T/moved.back"
assert_exit 3 ofs stat /d/keep
restart_server "$dead"
wait_until 60 "every server up with no copies behind" settled
clean_scrub_no_repair "$T/pbj.db"
OFS_CLUSTER=$(srv_addr "$dead") ok ofs ls /d
assert_eq moved "$(cat "$T/last.out")" "ls /d through $dead once it is back"

# The replaced file's dfile: its first copy (Z) takes the remove, the
# second (X) no longer holds it, the third (Y) is down.
ok ofs stat --json /d/moved
MF=$(json "$T/last.out" .oid)
DF=$(json "$T/last.out" '.dfiles[0].oid')
read -r Z X Y < <(json "$T/last.out" '.dfiles[0].sids | join(" ")')
[ -n "$Y" ] || fail "expected the dfile on three servers: $(cat "$T/last.out")"
X=$(srv_by_sid "$X") Y=$(srv_by_sid "$Y") Z=$(srv_by_sid "$Z")
on_all_copies "$(srv_sid "$X")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$DF"
stop_server "$Y"
use_server "$Z"
mkrand "$T/src2" 200000
ok ofs put --replicas 3 --confidence 2 "$T/src2" /d/moved
assert_contains "$(cat "$T/$Z.log")" "remove of $DF: 1 of 3 copies durable"
for m in "$Z" "$X"; do              # (the old metafile: gone where it ran)
	assert_exit 3 ofs_server inspect --data "$(srv_data "$m")" "$MF"
	assert_contains "$(cat "$T/last.err")" "no such object"
done
restart_server "$Y"
wait_until 60 "every server up with no copies behind" settled
clean_scrub_no_repair "$T/pbj.db"
ok ofs get /d/moved "$T/moved2.back"
assert_same_file "$T/src2" "$T/moved2.back"

# The replace through a primary that missed the name.
ok ofs mkdir /e
ok ofs put --replicas 3 --confidence 2 "$T/src" /e/x
ok ofs stat --json /e/x
OLD=$(json "$T/last.out" .oid)
ok ofs stat --json /e
[ "$(json "$T/last.out" '.dirdata | length')" = 1 ] || fail "expected /e to have one dirdata: $(cat "$T/last.out")"
DD=$(json "$T/last.out" '.dirdata[0].oid')
P=$(srv_by_sid "$(json "$T/last.out" '.dirdata[0].sids[0]')") || fail "no server holds /e's dirdata first"
stop_server "$P"
ok ofs_server tool --data "$(srv_data "$P")" rm-key "$DD" x
restart_same_port "$P"
wait_until 60 "every server up with no copies behind" settled
use_server "$P"
mkrand "$T/src3" 100000
ok ofs put --replicas 3 --confidence 2 "$T/src3" /e/x
for m in a b c; do                  # (the file replaced: gone everywhere)
	assert_exit 3 ofs_server inspect --data "$(srv_data "$m")" "$OLD"
	assert_contains "$(cat "$T/last.err")" "no such object"
done
assert_contains "$(cat "$T/$P.log")" "answered a dirent_create of 'x' unlike the other copies"
wait_until 60 "every server up with no copies behind" settled
clean_scrub_no_repair "$T/pbj.db"
for m in a b c; do
	OFS_CLUSTER=$(srv_addr "$m") ok ofs get /e/x "$T/x.back"
	assert_same_file "$T/src3" "$T/x.back"
done

# The remove through a dfile's primary that does not hold it (it missed
# the create, cut off, and has not caught up yet): the next copy takes
# the remove, and no copy is left an orphan.
ok ofs put --replicas 3 --confidence 2 "$T/src" /e/gone
ok ofs stat --json /e/gone
MF=$(json "$T/last.out" .oid)
DF=$(json "$T/last.out" '.dfiles[0].oid')
P=$(srv_by_sid "$(json "$T/last.out" '.dfiles[0].sids[0]')") || fail "no server holds the dfile first"
on_all_copies "$(srv_sid "$P")" \
	bash -c 'exec "$0" tool --data "$DATA" remove "$1"' "$OFS_SERVER" "$DF"
wait_until 60 "every server up with no copies behind" settled
use_server "$P"
ok ofs rm /e/gone
for m in a b c; do                  # (the file: gone everywhere)
	for o in "$MF" "$DF"; do
		assert_exit 3 ofs_server inspect --data "$(srv_data "$m")" "$o"
		assert_contains "$(cat "$T/last.err")" "no such object"
	done
done
wait_until 60 "every server up with no copies behind" settled
clean_scrub_no_repair "$T/pbj.db"
finish
