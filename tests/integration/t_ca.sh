#!/bin/bash
# t_ca: only the cluster's CA speaks for the cluster (docs/design.md, "Security").
# The capability keys and the revocation list are believed because the
# CA's key signed them, never because of who sent them:
#  - the previous release's files (an unsigned list, an unsigned key set)
#    still open, and give way to the first signed ones;
#  - a key set pushed by a server's certificate (or an admin's) that the
#    CA did not sign is refused - the id 0xFFFFFFFF that once blocked
#    every later rotation included - and later rotations go through;
#  - an unsigned or forged revocation list naming another server is
#    refused; a CRL numbered lower than (or as) the one held changes
#    nothing; a server may relay the CA's CRL, and the next revoke learns
#    it from the servers;
#  - a revoke prints every serial of its CRL the servers did not hold;
#  - a user's refused revoke records nothing in the CA directory, and
#    the admin's next revoke does not revoke the admin;
#  - 5000 revoked serials are carried (no cap of 4096).
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py
CASIGN=$OFS_ITEST_BIN/casign
REVOKED=38                   # lib/proto.h
CAPKEYS=39
OFS_ENOTCA=-10024            # lib/ofs_error.h
ofs-pbj() { "$OFS_BIN/ofs-pbj" "$@"; }
# serial CERT: its serial number as OFS prints it (lowercase hex)
serial() { openssl x509 -in "$1" -noout -serial | cut -d= -f2 | tr 'A-F' 'a-f'; }
# raw IDDIR ARGS...: rawframe.py to server a as IDDIR
raw() { local id=$1; shift; OFS_IDENTITY=$id python3 "$RAW" "$(srv_addr a)" "$@"; }
keyid() { grep -v '^sig ' "$1" | cut -d' ' -f1 | tr '\n' ' '; }
# crl_serials FILE: how many serials the PEM CRL in FILE revokes
crl_serials() { openssl crl -in "$1" -noout -text | grep -c 'Serial Number:'; }
has_serials() { [ "$(crl_serials "$2" 2>/dev/null)" = "$1" ]; }   # has_serials N FILE
# hello NAME SERVER: a handshake and a PING to SERVER as NAME (rawframe's
# hello: "ok", or "tls: REASON")
hello() { OFS_IDENTITY=$T/id/$1 python3 "$RAW" "$(srv_addr "$2")" hello 2>&1; }
refused_at() {   # refused_at NAME SERVER...: NAME's certificate refused by each
	local who=$1 n out
	shift
	for n in "$@"; do
		out=$(hello "$who" "$n")
		[[ "$out" =~ CERTIFICATE_REVOKED ]] || fail "$who at $n: '$out', expected it revoked"
	done
}
accepted_at() {  # accepted_at NAME SERVER...
	local who=$1 n out
	shift
	for n in "$@"; do
		out=$(hello "$who" "$n")
		[ "$out" = ok ] || fail "$who at $n: '$out', expected it accepted"
	done
}

keep_going

start_cluster a b c
ok ofs mkdir /d
ok ofs chmod 777 /d
for u in alice bob carol dave frank george harry ivan; do
	issue_identity $u --user $u --uid $((1000 + ${#u}))
done
"$OFS_BIN/ofs-pbj" ca init "$T/ca2" >/dev/null || fail "a second CA"
B_ID=$(srv_data b)/identity
ADMIN_ID=$OFS_IDENTITY

# ---- the previous release's files -------------------------------------------------
say "c opens the previous release's files: an unsigned list, an unsigned key set"
stop_server c
serial "$T/id/dave/cert.pem" >"$(srv_data c)/identity/revoked"
grep -v '^sig ' "$(srv_data c)/identity/cap.key" >"$T/c.cap.key" &&
	install -m 600 "$T/c.cap.key" "$(srv_data c)/identity/cap.key"
start_server c --peer "$(srv_addr a)"
use_server a
refused_at dave c
accepted_at dave a b
# (the signed set its peers hold replaced the unsigned one before it served)
grep -q '^sig ' "$(srv_data c)/identity/cap.key" || fail "c did not take its peers' signed key set"

# ---- key sets: the CA's only -------------------------------------------------------------
say "a key set the CA did not sign is refused, from a server's certificate or an admin's"
cp "$(srv_data a)/identity/cap.key" "$T/a.cap.before"
assert_eq "$OFS_ENOTCA" "$(raw "$B_ID" oldkeys 4294967295)" "an unsigned key set, id 0xFFFFFFFF, from b"
"$CASIGN" keys "$T/ca2" 4294967295 >"$T/forged.keys" || fail "casign keys"
assert_eq "$OFS_ENOTCA -" "$(raw "$B_ID" send $CAPKEYS "$T/forged.keys")" "another CA's key set, from b"
assert_eq "$OFS_ENOTCA -" "$(raw "$ADMIN_ID" send $CAPKEYS "$T/forged.keys")" "another CA's key set, from an admin"
cmp -s "$T/a.cap.before" "$(srv_data a)/identity/cap.key" || fail "a refused key set changed a's keys"
grep -q "capability keys from server $(srv_sid b) refused: not signed by the cluster's CA" "$T/a.log" ||
	fail "a's log does not name b's refused key set"
say "later rotations still work"
ok ofs-pbj ca rotate "$CA"
assert_match '^capability key 2 is current \(previous: 1\): all 3 servers' "$(cat "$T/last.out")" "rotate"
for n in a b c; do
	assert_eq "2 1 " "$(keyid "$(srv_data $n)/identity/cap.key")" "$n's keys after the rotation"
done

# ---- revocation lists: the CA's only, and only newer --------------------------------------
say "an unsigned or forged revocation list naming server c is refused"
C_SERIAL=$(serial "$(srv_data c)/identity/cert.pem")
assert_eq "$OFS_ENOTCA" "$(raw "$B_ID" oldrevoked "$C_SERIAL")" "an unsigned list from b"
"$CASIGN" crl "$T/ca2" 99 "$C_SERIAL" >"$T/forged.crl" || fail "casign crl"
assert_eq "$OFS_ENOTCA -" "$(raw "$B_ID" send $REVOKED "$T/forged.crl")" "another CA's CRL, from b"
assert_eq "$OFS_ENOTCA -" "$(raw "$ADMIN_ID" send $REVOKED "$T/forged.crl")" "another CA's CRL, from an admin"
[ ! -e "$(srv_data a)/identity/revoked" ] || fail "a refused list left a's revoked file"
grep -q "revocation list from server $(srv_sid b) refused: not signed by the cluster's CA" "$T/a.log" ||
	fail "a's log does not name b's refused list"
ok ofs-pbj servers --json
assert_eq "true true true" "$(jq -r '[.servers[].up] | map(tostring) | join(" ")' "$T/last.out")" \
	"every server up after the refused lists"

say "the first signed CRL: the unsigned lists give way; the revoke names every serial it sends"
# (the CA directory of the previous release: a list naming carol, never sent)
serial "$T/id/carol/cert.pem" >"$CA/revoked"
ok ofs-pbj ca revoke "$CA" "$T/id/bob/cert.pem"
BOB=$(serial "$T/id/bob/cert.pem")
CAROL=$(serial "$T/id/carol/cert.pem")
assert_match "^revoked $BOB: 3 of 3 servers in service have CRL 1, 2 serial" "$(head -1 "$T/last.out")" \
	"the first signed revoke"
assert_eq "$(printf 'new in CRL 1: %s\n' "$BOB" "$CAROL" | sort)" "$(grep '^new in CRL' "$T/last.out" | sort)" \
	"the serials new to the servers"
head -1 "$CA/revoked" | grep -q -- '-----BEGIN X509 CRL-----' || fail "CADIR/revoked is not a CRL"
refused_at bob a b c
refused_at carol a b c
# (c's unsigned list named dave; the CA's CRL does not)
accepted_at dave c

say "a CRL numbered lower than, or as, the one held changes nothing"
ok ofs-pbj ca revoke "$CA" "$T/id/frank/cert.pem"
assert_match "have CRL 2, 3 serial" "$(head -1 "$T/last.out")" "the second revoke"
assert_eq "new in CRL 2: $(serial "$T/id/frank/cert.pem")" "$(grep '^new in CRL' "$T/last.out")" \
	"the second revoke names frank alone"
cp "$(srv_data a)/identity/revoked" "$T/a.revoked.2"
"$CASIGN" crl "$CA" 1 >"$T/old.crl" || fail "casign crl 1"
assert_eq "0 0000000000000002" "$(raw "$ADMIN_ID" send $REVOKED "$T/old.crl")" "CRL 1 sent to a holding 2"
"$CASIGN" crl "$CA" 2 "$(serial "$T/id/alice/cert.pem")" >"$T/same.crl" || fail "casign crl 2"
assert_eq "0 0000000000000002" "$(raw "$ADMIN_ID" send $REVOKED "$T/same.crl")" "another CRL 2"
cmp -s "$T/a.revoked.2" "$(srv_data a)/identity/revoked" || fail "an older CRL changed a's list"
refused_at bob a
accepted_at alice a

say "any server may relay the CA's CRL; the next revoke learns it from the servers"
GEORGE=$(serial "$T/id/george/cert.pem")
"$CASIGN" crl "$CA" 3 "$BOB" "$CAROL" "$(serial "$T/id/frank/cert.pem")" "$GEORGE" >"$T/relay.crl" ||
	fail "casign crl 3"
assert_eq "0 0000000000000003" "$(raw "$B_ID" send $REVOKED "$T/relay.crl")" "the CA's CRL 3, from b"
refused_at george a
wait_until 30 "gossip to bring CRL 3 to c" has_serials 4 "$(srv_data c)/identity/revoked"
refused_at george c

# ---- a refused revoke records nothing ---------------------------------------------------------
say "a user's refused revoke of the admin leaves CADIR/revoked as it was"
cp "$CA/revoked" "$T/ca.revoked.before"
err_is 3 'permission denied' ofs-pbj --identity "$T/id/alice" ca revoke "$CA" "$ADMIN_ID/cert.pem"
assert_contains "$(cat "$T/last.err")" "nothing recorded in $CA/revoked" "the refused revoke"
cmp -s "$T/ca.revoked.before" "$CA/revoked" || fail "a refused revoke changed CADIR/revoked"
say "the admin's next revoke does not revoke the admin"
ok ofs-pbj ca revoke "$CA" "$T/id/harry/cert.pem"
HARRY=$(serial "$T/id/harry/cert.pem")
assert_match "^revoked $HARRY: 3 of 3 servers in service have CRL 4, 5 serial" "$(head -1 "$T/last.out")" \
	"the revoke after the relay"
assert_eq "new in CRL 4: $HARRY" "$(grep '^new in CRL' "$T/last.out")" "the revoke names harry alone"
ok ofs ls /d
ok ofs-pbj servers
refused_at harry a b c
refused_at george a b c      # (CRL 3, learned from the servers, is in CRL 4)
[ "$(crl_serials "$CA/revoked")" = 5 ] || fail "CADIR/revoked does not hold CRL 4's 5 serials"

# ---- no cap of 4096 --------------------------------------------------------------------------
say "5000 revoked serials"
# (a CA directory of the previous release whose list outgrew the old cap)
python3 -c '
import os
for _ in range(4995):
    b = bytearray(os.urandom(16))
    b[0] = (b[0] & 0x7f) or 1
    print(b.hex())' >"$CA/revoked"
ok ofs-pbj ca revoke "$CA" "$T/id/ivan/cert.pem"
assert_match "have CRL 5, 5001 serial" "$(head -1 "$T/last.out")" "the revoke of 5001 serials"
assert_eq 4996 "$(grep -c '^new in CRL 5: ' "$T/last.out")" "the serials new to the servers"
for n in a b c; do
	has_serials 5001 "$(srv_data $n)/identity/revoked" || fail "$n does not hold CRL 5's 5001 serials"
done
refused_at ivan a b c
refused_at harry a b c
accepted_at alice a b c

finish
