#!/bin/bash
# t_access: what a user may do to files and directories. The mode bits
# (owner, group, other) decide it where the file's or directory's own
# object lives; capabilities carry that decision to the servers holding
# its data (docs/design.md "Permissions and
# capabilities"). Every refusal is asserted with its reason; the
# capability refusals are WRITEs, and the objects on every server are
# checked unchanged after them.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py
EACCES=-13
ECAPEXPIRED=-10021         # lib/ofs_error.h
ECAPBAD=-10022
TTL=4                      # seconds a capability lives here
ofs-pbj() { "$OFS_BIN/ofs-pbj" "$@"; }
keep_going

start_cluster a b c -- --cap-ttl $TTL
issue_identity ann --user ann --uid 1010 --gid 100              # owns what follows
issue_identity gus --user gus --uid 1011 --gid 1011,100         # in ann's group
issue_identity ola --user ola --uid 1012 --gid 1012             # another
as() { local who=$1; shift; ofs --identity "$T/id/$who" "$@"; }
ok ofs mkdir /m
ok ofs chown 1010:100 /m
ok ofs chmod 777 /m
echo "ann's bytes" >"$T/anns"
echo "new bytes" >"$T/new"

# ---- files: read and write per mode bits ----------------------------------------------
# MODE then, for ann gus ola: what each may do (r read, w write, - neither).
# The class is the owner's, else the group's, else the others': a class
# with fewer bits than another is not helped by it (604: gus, in the
# group, reads nothing; 006: ann, the owner, nothing).
say "files: owner, group and other read and write per mode"
FILES=("640 rw r -" "604 rw - r" "460 r rw -" "006 - - rw" "666 rw rw rw")
for row in "${FILES[@]}"; do
	read -r mode want_ann want_gus want_ola <<<"$row"
	ok as ann put --replicas 3 "$T/anns" "/m/f$mode"
	ok as ann chmod "$mode" "/m/f$mode"
done
for row in "${FILES[@]}"; do
	read -r mode want_ann want_gus want_ola <<<"$row"
	declare -A want=([ann]=$want_ann [gus]=$want_gus [ola]=$want_ola)
	for u in ann gus ola; do
		if [[ ${want[$u]} == *r* ]]; then
			ok as "$u" get "/m/f$mode" "$T/got"
			assert_same_file "$T/anns" "$T/got" "$u reading f$mode"
		else
			err_is 3 'permission denied' as "$u" get "/m/f$mode" "$T/got"
		fi
	done
	# the refused writes first: the file is still ann's after them
	for u in ann gus ola; do
		[[ ${want[$u]} == *w* ]] ||
			err_is 3 'permission denied' as "$u" put "$T/new" "/m/f$mode"
	done
	ok ofs get "/m/f$mode" "$T/got"
	assert_same_file "$T/anns" "$T/got" "f$mode after the refused writes"
	for u in ann gus ola; do
		if [[ ${want[$u]} == *w* ]]; then
			ok as "$u" put "$T/new" "/m/f$mode"
			ok ofs get "/m/f$mode" "$T/got"
			assert_same_file "$T/new" "$T/got" "f$mode written by $u"
			break          # (now the writer's file, 644)
		fi
	done
done

# ---- directories: list, look up, create, remove per mode bits ---------------------------
say "directories: list (r), look up (x), create and remove (w and x)"
for mode in 750 710 770 730 700; do
	ok as ann mkdir "/m/d$mode"
	ok as ann put "$T/anns" "/m/d$mode/x"
	ok as ann chmod 664 "/m/d$mode/x"        # (its group may write it: and so remove it)
	ok as ann put "$T/anns" "/m/d$mode/y"    # (644: only ann removes it)
	ok as ann chmod "$mode" "/m/d$mode"
done
# list: r
for c in "750 gus" "700 ann"; do set -- $c; ok as "$2" ls "/m/d$1"; done
for c in "710 gus" "730 gus" "750 ola" "700 gus"; do
	set -- $c
	err_is 3 'permission denied' as "$2" ls "/m/d$1"
done
# look up: x (710: gus reaches x without listing the directory)
for c in "710 gus" "750 gus" "730 gus"; do set -- $c; ok as "$2" get "/m/d$1/x" "$T/got"; done
for c in "750 ola" "700 gus"; do
	set -- $c
	err_is 3 'permission denied' as "$2" get "/m/d$1/x" "$T/got"
done
# create: w and x
ok as gus put "$T/new" /m/d770/g
ok as gus put "$T/new" /m/d730/g
ok as gus mkdir /m/d770/gd
for c in "750 gus" "710 gus" "750 ola" "770 ola"; do
	set -- $c
	err_is 3 'permission denied' as "$2" put "$T/new" "/m/d$1/g"
done
err_is 3 'permission denied' as gus mkdir /m/d750/gd
# remove and rename: w and x on the directory decide, as in POSIX - not
# the file's own bits nor its owner
err_is 3 'permission denied' as gus rm /m/d750/x      # (no w on the directory)
err_is 3 'permission denied' as ola rm /m/d770/y      # (770: ola is other)
err_is 3 'permission denied' as ola mv /m/d770/y /m/d770/y2
err_is 3 'permission denied' as gus rmdir /m/d700
ok as gus rm /m/d770/g
ok as gus rm /m/d770/x
ok as gus rmdir /m/d770/gd
ok as gus mv /m/d770/y /m/d770/y2      # (644, ann's: gus may not write it, but may move it)
assert_eq "1010 420" "$(ofs stat --json /m/d770/y2 | jq -r '"\(.uid) \(.mode)"')" "y2 still ann's, 644"
ok as gus rm /m/d770/y2
ok as gus put "$T/new" /m/d770/own
ok as ann chmod 750 /m/d770
err_is 3 'permission denied' as gus rm /m/d770/own    # (his own: the directory decides)
ok as ann chmod 770 /m/d770
ok as gus rm /m/d770/own
assert_eq "" "$(as ann ls /m/d770)" "what is left in d770"

# the sticky bit: in a directory every user may write, an entry goes only
# with its owner, the directory's owner or an admin
say "the sticky bit: removal by the entry's owner, the directory's, or an admin"
ok ofs mkdir /m/tmp
ok ofs chown 1010:100 /m/tmp
ok ofs chmod 1777 /m/tmp
ok as ann put "$T/anns" /m/tmp/a
ok as gus put "$T/new" /m/tmp/g
ok as gus put "$T/new" /m/tmp/g2
ok as ann chmod 666 /m/tmp/a
err_is 3 'permission denied' as gus rm /m/tmp/a        # (though gus may write it)
err_is 3 'permission denied' as gus mv /m/tmp/a /m/tmp/a2
err_is 3 'permission denied' as ola mv /m/tmp/g /m/tmp/mine
err_is 3 'permission denied' as ola put "$T/new" /m/tmp/g   # (replacing gus's)
ok as ola put "$T/new" /m/tmp/o                          # (making her own is free)
ok as gus mv /m/tmp/g /m/tmp/g1                          # (his own)
ok as gus rm /m/tmp/g1
ok as ann rm /m/tmp/g2                                   # (the directory's owner)
ok ofs rm /m/tmp/o                                       # (an admin)
ok as ann rm /m/tmp/a
assert_eq "" "$(as ann ls /m/tmp)" "what is left in the sticky directory"
# the refusals above left nothing behind: the objects every server holds
# are those of the files and directories that exist
ok ofs get /m/d750/x "$T/got"
assert_same_file "$T/anns" "$T/got" "d750/x after the refused removes"
grep -qh "refused dirent_list of [0-9a-f]* from user ola (uid 1012): its capability does not allow it\|refused dirent_list of [0-9a-f]* from user ola (uid 1012): it has no capability" \
	"$T"/[abc].log || fail "no server's log names ola's refused listing"

# ---- capabilities: refused, with their reason, and nothing written ---------------------------
say "capabilities: another file's, another's connection, none, changed, expired, two rotations old"
ok as ann put --replicas 3 "$T/anns" /m/A
ok as ann put --replicas 3 "$T/anns" /m/B
A_MF=$(ofs stat --json /m/A | jq -r .oid)
A_DF=$(ofs stat --json /m/A | jq -r '.dfiles[0].oid')
B_DF=$(ofs stat --json /m/B | jq -r '.dfiles[0].oid')
ok as ann put --replicas 3 "$T/anns" /m/P
ok as ann chmod 600 /m/P
P_MF=$(ofs stat --json /m/P | jq -r .oid)
P_DF=$(ofs stat --json /m/P | jq -r '.dfiles[0].oid')
# raw USER CMD ARGS... : one rawframe command to server a as USER
raw() { local who=$1; shift; OFS_IDENTITY=$T/id/$who python3 "$RAW" "$(srv_addr a)" "$@"; }
# capget USER OID: CAP=the capability its GETATTR grants USER
capget() {
	local st
	read -r st CAP <<<"$(raw "$1" capget "$2")"
	assert_eq 0 "$st" "GETATTR of $2 as $1"
}
# uses WANT USER read|write OID CAP: that use of CAP is answered WANT
uses() { assert_eq "$1" "$(raw "$2" capuse "$3" "$4" "$5")" "$3 of $4 by $2 with ${6:-its capability}"; }
# flip CAP OFFSET: CAP with the byte at OFFSET inverted
flip() { python3 -c 'import sys; b = bytearray.fromhex(sys.argv[1]); b[int(sys.argv[2])] ^= 0xff; print(b.hex())' "$1" "$2"; }
# snapshot FILE : each server's objects (and their versions); every listing
# must succeed and list something (an empty or failed listing would
# compare equal to another), else the test fails.
snapshot() {
	local n
	: >"$1"
	for n in a b c; do
		ofs_server tool --data "$(srv_data $n)" list --json >"$T/snap.out" 2>"$T/snap.err" &&
			jq -e '.objects | length > 0' "$T/snap.out" >/dev/null &&
			jq -S . "$T/snap.out" >>"$1" ||
			fail "snapshot: the object list of $n failed or was empty: $(head -c 300 "$T/snap.err") $(head -c 300 "$T/snap.out")" ||
			return 1
	done
}
snapshot "$T/before.json"
# (each row with a capability just granted: one older than TTL would be
# refused as expired first)
fresh() { capget ann "$A_MF"; CAP_A=$CAP; }
fresh; uses 0 ann read "$A_DF" "$CAP_A"                                # (it is good)
fresh; uses $EACCES ann write "$B_DF" "$CAP_A" "the capability of file A, on B's dfile"
fresh; uses $EACCES gus write "$A_DF" "$CAP_A" "ann's capability replayed on gus's connection"
uses $EACCES ann write "$A_DF" - "no capability"
# one byte changed: the expiry, the operations, the holder's fingerprint,
# an OID, the MAC (offsets: cap.h's encoding)
for off in 28 32 40 70 $((${#CAP_A} / 2 - 1)); do
	uses $ECAPBAD ann write "$A_DF" "$(flip "$CAP_A" $off)" "byte $off changed"
done
# what the mode bits grant is what the data servers allow: gus (group,
# r of 644) reads A's dfile and may not write it; of a 600 file ola is
# granted nothing, and without a capability reads nothing
capget gus "$A_MF"
uses 0 gus read "$A_DF" "$CAP"
capget gus "$A_MF"
uses $EACCES gus write "$A_DF" "$CAP" "gus's read-only capability"
assert_eq "0 -" "$(raw ola capget "$P_MF")" "ola's GETATTR of a 600 file: no capability"
uses $EACCES ola read "$P_DF" - "no capability"
# expired: refused once its time is past, never before
expired() { [ "$(raw ann capuse read "$A_DF" "$CAP_A")" = $ECAPEXPIRED ]; }
wait_until $((TTL * 5)) "ann's capability to expire" expired
uses $ECAPEXPIRED ann write "$A_DF" "$CAP_A" "an expired capability"
# a key rotated once is still held (the previous); twice, it is gone
for attempt in 1 2 3; do
	capget ann "$A_MF"
	ok ofs-pbj ca rotate "$CA"
	st=$(raw ann capuse read "$A_DF" "$CAP")
	[ "$st" = $ECAPEXPIRED ] || break     # (a slow rotate outlived it: again)
done
assert_eq 0 "$st" "a capability under the previous key"
ok ofs-pbj ca rotate "$CA"
uses $ECAPBAD ann write "$A_DF" "$CAP" "a capability under a key two rotations old"
snapshot "$T/after.json"
cmp -s "$T/before.json" "$T/after.json" ||
	fail "refused capabilities changed a server: $(diff "$T/before.json" "$T/after.json" | head -20)"
ok ofs get /m/A "$T/got"
assert_same_file "$T/anns" "$T/got" "A after the refused writes"

# ---- a capability covers only what was checked for its holder -------------------------------
# ola, speaking raw frames, tries to be granted a capability over ann's
# 600 file P: a file of her own whose layout names P's objects (at create
# and by SETATTR), and P's own OID made again on a server that does not
# hold it. Each is refused and changes nothing; a file of her own with
# no such layout is granted a capability that reaches none of P.
say "a layout, or another's OID, is not evidence: no capability over another's file"
ok as ann put --replicas 1 "$T/anns" /m/Q
ok as ann chmod 600 /m/Q
Q_MF=$(ofs stat --json /m/Q | jq -r .oid)
Q_DF=$(ofs stat --json /m/Q | jq -r '.dfiles[0].oid')
Q_SID=$(ofs stat --json /m/Q | jq -r '.sids[0]')
for n in a b c; do [ "$(srv_sid $n)" = "$Q_SID" ] || ELSEWHERE=$n; done
for n in a b c; do [ "$(srv_sid $n)" = "$(ofs stat --json /m/Q | jq -r '.dfiles[0].sids[0]')" ] && Q_DF_AT=$n; done
rawto() { local srv=$1 who=$2; shift 2; OFS_IDENTITY=$T/id/$who python3 "$RAW" "$(srv_addr "$srv")" "$@"; }
snapshot "$T/before.json"
read -r st cap oid <<<"$(raw ola capcreate proven 1012 1012 "$P_MF" "$P_DF")"
assert_eq "$EACCES -" "$st $cap" "ola's CREATE of a file whose layout names ann's P"
read -r st cap oid <<<"$(rawto "$ELSEWHERE" ola capcreate "$Q_MF" 1012 1012)"
assert_eq "$EACCES -" "$st $cap" "ola's CREATE of Q's metafile OID on a server without it"
read -r st cap oid <<<"$(raw ola capcreate "$(python3 -c 'import os; print(os.urandom(16).hex())')" 1012 1012)"
assert_eq "$EACCES -" "$st $cap" "ola's CREATE under an OID that carries no proof of her"
assert_eq $EACCES "$(raw ola getmany "$P_DF")" "ola's GETATTR_MANY of P's dfile"
assert_eq $EACCES "$(raw ola setnothing "$A_MF")" "ola's SETATTR of nothing on ann's 644 file"
snapshot "$T/after.json"
cmp -s "$T/before.json" "$T/after.json" ||
	fail "refused creates changed a server: $(diff "$T/before.json" "$T/after.json" | head -20)"
# her own file: granted, and its capability reaches none of P or Q
read -r st OWN_CAP OWN <<<"$(raw ola capcreate proven 1012 1012)"
assert_eq 0 "$st" "ola's CREATE of a file of her own"
[ "$OWN_CAP" != - ] || fail "ola's own file came with no capability"
assert_eq $EACCES "$(raw ola setlayout "$OWN" "$P_MF" "$P_DF")" "ola's SETATTR naming P's objects as her layout"
# fresh_use SERVER OID : a read of OID at SERVER with a capability ola's
# GETATTR of her own file has just granted (again, when a loaded machine
# let it expire on the way: expiry is checked before coverage)
fresh_use() {
	local st attempt
	for attempt in 1 2 3; do
		capget ola "$OWN"
		st=$(rawto "$1" ola capuse read "$2" "$CAP")
		[ "$st" = $ECAPEXPIRED ] || break
	done
	echo "$st"
}
assert_eq $EACCES "$(fresh_use "$Q_DF_AT" "$Q_DF")" "a read of Q's dfile with ola's own capability"
assert_eq $EACCES "$(fresh_use a "$P_DF")" "a read of P's dfile with ola's own capability"
ok ofs get /m/P "$T/got"
assert_same_file "$T/anns" "$T/got" "P after ola's attempts"

# ---- a long read across an expiry and two rotations completes ---------------------------------
say "a get paused past its capability's expiry and two key rotations completes"
mkrand "$T/long" $((20 << 20))
ok as ann put --replicas 3 "$T/long" /m/long
mkdir -p "$T/pause"
bg env OFS_FAULT=get-paused OFS_FAULT_DIR="$T/pause" "$OFS_CLI" --identity "$T/id/ann" \
	get /m/long "$T/long.got"
GET=$BG
wait_until 60 "the get to pause after its first round" test -e "$T/pause/paused"
PAUSED=$(date +%s)
ok ofs-pbj ca rotate "$CA"
ok ofs-pbj ca rotate "$CA"
# (every server holds the newest key, so the old capability is two keys
# back everywhere - refused as not valid, not merely as expired)
newest_key() { grep -ho 'current key [0-9]*' "$@" | awk '{print $3}' | sort -n | tail -n 1; }
keys_everywhere() {
	local k s
	k=$(newest_key "$T"/[abc].log)
	for s in a b c; do
		[ "$(grep -o 'current key [0-9]*' "$T/$s.log" | tail -n 1 | awk '{print $3}')" = "$k" ] || return 1
	done
}
wait_until 30 "every server to hold the newest capability key" keys_everywhere
past() { [ "$(date +%s)" -gt $((PAUSED + TTL + 1)) ]; }
wait_until $((TTL * 5)) "the get's capability to be past its expiry" past
: >"$T/pause/resume"
wait_pid "$GET" 120
assert_eq 0 "$REAP_ST" "the get resumed after its capability expired and its key rotated away"
assert_same_file "$T/long" "$T/long.got" "the long get"
# (its next request carried the old capability, was refused, and the
# client renewed it and went on from there)
LONG_DF=$(ofs stat --json /m/long | jq -r '.dfiles[0].oid')
grep -qh "refused read of $LONG_DF from user ann (uid 1010): its capability is not valid" \
	"$T"/[abc].log ||
	fail "no server refused the paused get's old capability: the renewal was not exercised"

finish
