#!/bin/bash
# t_peer: clients check the server they reach, and a server's SERVERS
# push speaks for itself only (docs/design.md, "Security"):
#  - a push from server b that changes b's own entry is taken; one that
#    changes server c's address or state is not;
#  - a server whose certificate is revoked is refused by clients (the
#    error says so), and gets go on through the other copies;
#  - a client that means server a, and finds another server's certificate
#    at a's address, refuses it and says so; gets go on through the other
#    copies.
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py
ofs-pbj() { "$OFS_BIN/ofs-pbj" "$@"; }
# entry SID FIELD: FIELD of SID's entry in the table server a gives
entry() { jq -r --arg s "$1" ".servers[] | select(.sid == \$s) | .$2" "$T/last.out"; }
files_read() {   # files_read ADDR...: every file read back whole through them
	local f a args=()
	for a in "$@"; do
		args+=(--cluster "$a")
	done
	for f in 1 2 3 4; do
		ok ofs "${args[@]}" get "/d/f$f" "$T/f$f.back"
		assert_same_file "$T/f$f" "$T/f$f.back" "/d/f$f"
	done
}

keep_going

start_cluster a b c
ok ofs mkdir /d
for f in 1 2 3 4; do
	head -c $((f * 70000)) /dev/urandom >"$T/f$f"
	ok ofs put --replicas 3 "$T/f$f" "/d/f$f"
done

# ---- a SERVERS push speaks for its sender only -----------------------------------------------
say "b's push: its own entry taken, c's address and state not"
B_ID=$(srv_data b)/identity
C_ADDR=$(srv_addr c)
assert_eq 0 "$(OFS_IDENTITY=$B_ID python3 "$RAW" "$(srv_addr a)" serverspush "$(srv_sid b)" \
	"$(srv_sid b):weight=2500" "$(srv_sid c):address=127.0.0.1:1" "$(srv_sid c):state=2")" \
	"the push's status"
ok ofs-pbj servers --json
assert_eq 2.5 "$(entry "$(srv_sid b)" weight)" "b's weight, as b said"
assert_eq "$C_ADDR" "$(entry "$(srv_sid c)" address)" "c's address after b's push"
assert_eq in "$(entry "$(srv_sid c)" state)" "c's state after b's push"
# (a server's certificate may not set another's entry either; an admin's
# word is still taken, by every server)
assert_eq "19 -13" "$(OFS_IDENTITY=$B_ID python3 "$RAW" "$(srv_addr a)" statuses 19)" \
	"SERVER_SET from b's certificate"
ok ofs-pbj server set "$(srv_sid b)" --weight 1
for n in a b c; do
	ok ofs-pbj --cluster "$(srv_addr $n)" servers --json
	assert_eq 1 "$(entry "$(srv_sid b)" weight)" "b's weight at $n after the admin's set"
done

# ---- a revoked server is refused by clients ---------------------------------------------------
say "c's certificate revoked: clients refuse c, and read through a and b"
ok ofs-pbj ca revoke "$CA" "$(srv_data c)/identity/cert.pem"
assert_match '^revoked [0-9a-f]+: 3 of 3 servers in service have CRL 1' "$(head -1 "$T/last.out")" \
	"the revoke reached every server, c too"
err_is 3 'revoked' ofs --cluster "$(srv_addr c)" ls /d
assert_not_contains "$(cat "$T/last.out")" f1 "a listing through revoked c"
# (a user's client too: a user may pull the CRL, not give one)
issue_identity alice --user alice --uid 1001
err_is 3 'revoked' ofs --identity "$T/id/alice" --cluster "$(srv_addr c)" ls /d
ok ofs --identity "$T/id/alice" --cluster "$(srv_addr c)" --cluster "$(srv_addr a)" ls /d
assert_contains "$(cat "$T/last.out")" f1 "a user's listing through c, then a"
openssl crl -in "$(srv_data a)/identity/revoked" -outform DER -out "$T/crl.der" ||
	fail "a's revoked is not a CRL"
assert_eq "-13 -" "$(OFS_IDENTITY=$T/id/alice python3 "$RAW" "$(srv_addr a)" send 38 "$T/crl.der")" \
	"a CRL given by a user's certificate"
files_read "$(srv_addr a)"
files_read "$(srv_addr c)" "$(srv_addr a)"
ok ofs-pbj servers --json
assert_eq false "$(entry "$(srv_sid c)" up)" "c up, to the admin's tool"
assert_contains "$(entry "$(srv_sid c)" error)" revoked "why c is not up"
assert_eq true "$(entry "$(srv_sid b)" up)" "b up, to the admin's tool"

# ---- another server at a's address is not a ---------------------------------------------------
say "b moved to a's address: a client meaning a refuses b there, and reads through b"
A_ADDR=$(srv_addr a)
stop_server a
stop_server b
LISTEN=$A_ADDR _run_server b
assert_eq "$A_ADDR" "$(srv_addr b)" "b's new address"
# (the first contact takes whichever server answers there: b, and its table)
ok ofs-pbj --cluster "$A_ADDR" servers --json
assert_eq "$A_ADDR" "$(entry "$(srv_sid a)" address)" "a's address in b's table"
assert_eq false "$(entry "$(srv_sid a)" up)" "a up (b answers at its address)"
assert_contains "$(entry "$(srv_sid a)" error)" "not the one meant" "why a is not up"
files_read "$A_ADDR"

finish
