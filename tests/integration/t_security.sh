#!/bin/bash
# t_security: who gets in and what they may do (docs/design.md, "Security").
# Every connection is TLS 1.3 with a certificate of the cluster CA; the
# certificate's identity (server, admin or user) decides what the peer
# may call, per the operation table. Each refusal below is checked for
# its reason and, at the end, for having changed nothing on any server:
# the objects each one holds and the server table are as they were.
OFS_ITEST_CLIENT_LEAKS=1   # (every client checked for leaks at exit)
. "$(dirname "$0")/lib.sh"

RAW=$ITEST_DIR/rawframe.py
EACCES=-13
OFS_ETLSONLY=-10019          # lib/ofs_error.h

# hello_is REGEX [ENV=V]... : rawframe's handshake and PING, its outcome.
hello_is() {
	local re=$1 out
	shift
	out=$(env "$@" python3 "$RAW" "$OFS_CLUSTER" hello 2>&1)
	[[ "$out" =~ $re ]] || fail "hello with $*: '$out', expected /$re/"
}
# What must not change: each server's objects (and their versions) and
# the server table (states, weights, attributes). snapshot FILE: every
# listing must succeed and list something (an empty or failed listing
# would compare equal to another), else the test fails.
snapshot() {
	local n
	: >"$1"
	for n in a b c; do
		ofs_server tool --data "$(srv_data $n)" list --json >"$T/snap.out" 2>"$T/snap.err" &&
			jq -e -S '.objects | length > 0' "$T/snap.out" >/dev/null &&
			jq -S . "$T/snap.out" >>"$1" ||
			fail "snapshot: the object list of $n failed or was empty: $(head -c 300 "$T/snap.err") $(head -c 300 "$T/snap.out")" ||
			return 1
	done
	ofs-pbj servers --json >"$T/snap.out" 2>"$T/snap.err" &&
		jq -e '.servers | length == 3' "$T/snap.out" >/dev/null &&
		jq -S '[.servers[] | {sid, state, weight, attrs}]' "$T/snap.out" >>"$1" ||
		fail "snapshot: ofs-pbj servers failed or did not list 3 servers: $(head -c 300 "$T/snap.err") $(head -c 300 "$T/snap.out")"
}
ofs-pbj() { "$OFS_BIN/ofs-pbj" "$@"; }

keep_going

# ---- the cluster, under security from its first byte ------------------------
start_cluster a b c
echo "shared bytes" >"$T/shared"
ok ofs mkdir /d
ok ofs put --replicas 3 "$T/shared" /d/f
ok ofs get /d/f "$T/got"
assert_same_file "$T/shared" "$T/got" "/d/f read back over TLS, 3 copies"
FILE_OID=$(ofs stat --json /d/f | jq -r .oid)

issue_identity alice --user alice --uid 1000 --gid 1000,100
OFS_CA_VALID_SECS=-3600 issue_identity old --admin old     # expired an hour ago
"$OFS_BIN/ofs-pbj" ca init "$T/ca2" >/dev/null || fail "a second CA"
"$OFS_BIN/ofs-pbj" ca issue "$T/ca2" --out "$T/id/eve" --admin eve >/dev/null || fail "eve"
# eve2: another CA's certificate that trusts this cluster's CA (so the
# refusal is the server's, not her own check of the server)
mkdir -p "$T/id/eve2" && cp -p "$T/id/eve/key.pem" "$T/id/eve/cert.pem" "$T/id/eve2/" &&
	cp "$CA/ca.crt" "$T/id/eve2/ca.pem"

snapshot "$T/before.json"

# ---- refused at the handshake ----------------------------------------------------
say "no client certificate"
hello_is '^tls: .*CERTIFICATE_REQUIRED' RAWFRAME_NOCERT=1
say "a certificate from another CA"
hello_is '^tls: .*UNKNOWN_CA' OFS_IDENTITY="$T/id/eve2"
err_is 3 'certificate not trusted' ofs --identity "$T/id/eve" ls /
say "an expired certificate"
hello_is '^tls: .*CERTIFICATE_EXPIRED' OFS_IDENTITY="$T/id/old"
err_is 2 'certificate expired' ofs --identity "$T/id/old" ls /
say "plaintext to a TLS port"
hello_is "^error $OFS_ETLSONLY\$" RAWFRAME_PLAIN=1
err_is 3 'TLS only' ofs --insecure ls /
grep -q 'refused a plaintext connection' "$T/a.log" || fail "a's log does not name the plaintext refusal"
grep -q 'refused a connection from .*certificate not trusted' "$T/a.log" ||
	fail "a's log does not name the untrusted certificate"

# ---- refused by role: every operation of the table ---------------------------------
ofs_server ops --json >"$T/ops.json" || fail "ofs-server ops --json"
mapfile -t NOT_USER < <(jq -r '.ops[] | select(.roles | index("user") | not) | .op' "$T/ops.json")
mapfile -t NOT_ADMIN < <(jq -r '.ops[] | select(.roles | index("admin") | not) | .op' "$T/ops.json")
mapfile -t USER_OPS < <(jq -r '.ops[] | select(.roles | index("user")) | .op' "$T/ops.json")
[ "${#NOT_USER[@]}" -ge 15 ] || fail "the table lists only ${#NOT_USER[@]} operations users may not call"
[ "${#NOT_ADMIN[@]}" -ge 10 ] || fail "the table lists only ${#NOT_ADMIN[@]} operations admins may not call"
# statuses_all WANT IDDIR [--forwarded] OP...: each OP answered WANT
statuses_all() {
	local want=$1 id=$2 bad
	shift 2
	OFS_IDENTITY=$id python3 "$RAW" "$OFS_CLUSTER" statuses "$@" >"$T/st.out" 2>"$T/st.err" ||
		{ fail "rawframe statuses $*: $(cat "$T/st.err")"; return 1; }
	bad=$(awk -v w="$want" '$2 != w' "$T/st.out")
	[ -z "$bad" ] || fail "as $(basename "$id"), expected $want for every op of '$*'; got: $bad"
	[ "$(wc -l <"$T/st.out")" -eq $(($# - ${FWD:-0})) ] || fail "statuses: $(wc -l <"$T/st.out") replies"
}
say "a user certificate on every maintenance and server-to-server operation (${#NOT_USER[@]})"
statuses_all $EACCES "$T/id/alice" "${NOT_USER[@]}"
say "an admin certificate on every server-to-server operation (${#NOT_ADMIN[@]})"
statuses_all $EACCES "$OFS_IDENTITY" "${NOT_ADMIN[@]}"
say "a forwarded request (one copy only) from a user and from an admin"
FWD=1 statuses_all $EACCES "$T/id/alice" --forwarded "${USER_OPS[@]}"
FWD=1 statuses_all $EACCES "$OFS_IDENTITY" --forwarded "${USER_OPS[@]}"
grep -q 'refused .* from user alice (uid 1000): permission denied' "$T/a.log" ||
	fail "a's log does not name alice's refusals"
say "the same through the tools"
err_is 3 'permission denied' ofs-pbj --identity "$T/id/alice" server set "$(srv_sid b)" --weight 2
err_is 3 'permission denied' ofs-pbj --identity "$T/id/alice" ok-to-stop "$(srv_sid b)"

# ---- a server cannot speak as another ------------------------------------------------
say "a server certificate claiming another SID"
st=$(OFS_IDENTITY=$(srv_data b)/identity python3 "$RAW" "$OFS_CLUSTER" freeze "$FILE_OID" 60000 "$(srv_sid c)")
assert_eq "$EACCES" "$st" "FREEZE by b's certificate as holder c"
st=$(OFS_IDENTITY=$T/id/alice python3 "$RAW" "$OFS_CLUSTER" freeze "$FILE_OID" 60000 "$(srv_sid b)")
assert_eq "$EACCES" "$st" "FREEZE by a user as holder b"
grep -q "refused freeze from server $(srv_sid b): it speaks as server $(srv_sid c)" "$T/a.log" ||
	fail "a's log does not name b speaking as c"
# (its own SID is believed: the positive control, lifted at once)
st=$(OFS_IDENTITY=$(srv_data b)/identity python3 "$RAW" "$OFS_CLUSTER" freeze "$FILE_OID" 60000 "$(srv_sid b)")
assert_eq 0 "$st" "FREEZE by b's certificate as itself"
st=$(OFS_IDENTITY=$(srv_data b)/identity python3 "$RAW" "$OFS_CLUSTER" freeze "$FILE_OID" 0 "$(srv_sid b)")
assert_eq 0 "$st" "b lifting its own hold"

# ---- nothing changed ---------------------------------------------------------------------
snapshot "$T/after.json"
cmp -s "$T/before.json" "$T/after.json" ||
	fail "the refusals changed a server: $(diff "$T/before.json" "$T/after.json" | head -20)"

# ---- what each may do ----------------------------------------------------------------------
say "a user does data and namespace operations; an admin maintenance"
echo "alice's bytes" >"$T/mine"
ok ofs chmod 777 /d            # (the admin's directory: everyone may add to it)
ok ofs --identity "$T/id/alice" put --replicas 3 "$T/mine" /d/alice
ok ofs --identity "$T/id/alice" get /d/alice "$T/got.alice"
assert_same_file "$T/mine" "$T/got.alice" "alice's file"
ok ofs --identity "$T/id/alice" ls /d
say "owners: a user's objects are its own; the mode is the owner's, the owner the admin's"
assert_eq "1000 1000 420" "$(ofs stat --json /d/alice | jq -r '"\(.uid) \(.gid) \(.mode)"')" "alice's file"
assert_eq "0 0" "$(ofs stat --json /d/f | jq -r '"\(.uid) \(.gid)"')" "the admin's file"
ok ofs --identity "$T/id/alice" chmod 600 /d/alice
assert_eq 384 "$(ofs stat --json /d/alice | jq -r .mode)" "mode after alice's chmod 600"
err_is 3 'permission denied' ofs --identity "$T/id/alice" chmod 666 /d/f
err_is 3 'permission denied' ofs --identity "$T/id/alice" chown 1000 /d/f
err_is 3 'permission denied' ofs --identity "$T/id/alice" chown 1001:1001 /d/alice
err_is 2 'octal' ofs chmod 8888 /d/f
ok ofs chown 1001:100 /d/alice
assert_eq "1001 100 384" "$(ofs stat --json /d/alice | jq -r '"\(.uid) \(.gid) \(.mode)"')" "after the admin's chown"
# the mode as chmod takes it, in text and JSON; ls -l shows mode, owner and group
assert_eq 0600 "$(ofs stat --json /d/alice | jq -r .mode_octal)" "stat --json's mode_octal"
assert_eq "mode        0600" "$(ofs stat /d/alice | grep '^mode ')" "stat's mode line"
assert_match '^-rw------- +1001 +100 +[0-9]+ [^ ]+ alice$' "$(ofs ls -l /d | grep ' alice$')" "ls -l of alice's file"
assert_match '^drwxrwxrwx +0 +0 ' "$(ofs ls -l / | grep ' d/$')" "ls -l of the directory"
assert_eq "384 1001 100" "$(ofs ls --json /d | jq -r '.entries[] | select(.name == "alice") | "\(.mode) \(.uid) \(.gid)"')" "ls --json"
err_is 3 'permission denied' ofs --identity "$T/id/alice" chmod 644 /d/alice
ok ofs chmod 644 /d/f
# (the primary of the file refused it: any of the three)
cat "$T/a.log" "$T/b.log" "$T/c.log" |
	grep -q 'refused setattr from user alice (uid 1000): permission denied (not the owner)' ||
	fail "no server's log names the refused chmod"

# A right taken away by chmod holds on the servers of the file's data
# within 2 s: a capability lives that long (the default), no longer.
say "a chmod holds on every data server within 2 seconds"
ok ofs put --replicas 3 "$T/mine" /d/shared
ok ofs chmod 644 /d/shared
S_MF=$(ofs stat --json /d/shared | jq -r .oid)
S_DF=$(ofs stat --json /d/shared | jq -r '.dfiles[0].oid')
read -r st CAP <<<"$(OFS_IDENTITY=$T/id/alice python3 "$RAW" "$(srv_addr a)" capget "$S_MF")"
assert_eq 0 "$st" "alice's GETATTR of a 644 file"
# (its expiry: bytes 21 to 28 of the encoding in lib/cap.h)
exp=$(python3 -c 'import sys; print(int.from_bytes(bytes.fromhex(sys.argv[1])[21:29], "big"))' "$CAP")
[ $((exp - $(date +%s))) -le 2 ] || fail "a capability lives $((exp - $(date +%s))) s, more than 2"
ok ofs chmod 600 /d/shared
capread() { OFS_IDENTITY=$T/id/alice python3 "$RAW" "$(srv_addr a)" capuse read "$S_DF" "$CAP"; }
read_refused() { [ "$(capread)" != 0 ]; }
wait_until 15 "alice's capability to read no more" read_refused
assert_eq -10021 "$(capread)" "her read after the chmod (capability expired)"
assert_eq "0 -" "$(OFS_IDENTITY=$T/id/alice python3 "$RAW" "$(srv_addr a)" capget "$S_MF")" \
	"her GETATTR after the chmod: no capability"
err_is 3 'permission denied' ofs --identity "$T/id/alice" get /d/shared "$T/got"
ok ofs-pbj server set "$(srv_sid b)" --weight 2
ok ofs-pbj submit scrub --wait --db "$T/pbj.db"

# ---- identities: how they are found, and what is refused before any network ---------
say "identities"
env -u OFS_IDENTITY "$OFS_CLI" ls / >"$T/last.out" 2>"$T/last.err"
assert_eq 2 $? "ofs without an identity"
grep -q "no identity: give --identity IDDIR or set OFS_IDENTITY" "$T/last.err" ||
	fail "ofs without an identity: $(cat "$T/last.err")"
cp -rp "$T/id/alice" "$T/id/loose" && chmod 644 "$T/id/loose/key.pem"
err_is 2 'key.pem: a private key its group or others may read .*chmod 600' ofs --identity "$T/id/loose" ls /
err_is 2 'exclude each other' ofs --identity "$T/id/alice" --insecure ls /
# (refused before any network: plaintext goes to loopback only)
err_is 2 'loopback .* only' ofs --cluster 0.0.0.0:1 --insecure ls /
err_is 3 'not empty' ofs-pbj ca init "$CA"
err_is 3 'holds an identity already' ofs-pbj ca issue "$CA" --out "$T/id/alice" --admin x
err_is 2 'name' ofs-pbj ca issue "$CA" --out "$T/id/bad" --user '-x' --uid 1
err_is 2 'uid' ofs-pbj ca issue "$CA" --out "$T/id/bad" --user bob
[ "$(stat -c %a "$CA/ca.key")" = 600 ] || fail "ca.key is not 0600"
[ "$(stat -c %a "$T/id/alice/key.pem")" = 600 ] || fail "an identity's key.pem is not 0600"
[ "$(stat -c %a "$(srv_data a)/identity/key.pem")" = 600 ] || fail "a server's key.pem is not 0600"

say "servers: an identity of their own, or --insecure on loopback only"
ofs_server init --data "$T/bare" >/dev/null || fail "init without --ca"
err_is 2 'has no identity.*certify' ofs_server run --data "$T/bare" --listen 127.0.0.1:0
err_is 2 'insecure serves loopback' ofs_server run --data "$T/bare" --listen 0.0.0.0:0 --insecure
ok ofs_server certify --data "$T/bare" --ca "$CA"
# another server's identity in a data dir is refused
BARE_SID=$(ofs --identity "$T/bare/identity" whoami --json | jq -r .sid)
rm -rf "$T/bare/identity" && cp -rp "$(srv_data b)/identity" "$T/bare/identity"
err_is 2 "not this server's" ofs_server run --data "$T/bare" --listen 127.0.0.1:0
# certify again gives it its own in place of the wrong one
ok ofs_server certify --data "$T/bare" --ca "$CA"
assert_eq "$BARE_SID" "$(ofs --identity "$T/bare/identity" whoami --json | jq -r .sid)" \
	"the SID of the identity certify put in place"
[ "$(ofs --identity "$T/bare/identity" whoami --json | jq -r .role)" = server ] ||
	fail "certify did not issue a server identity"

# ---- revocation: refused from now on, cluster-wide, also by a server that was away ------
say "a revoked certificate"
issue_identity bob --user bob --uid 1001
ok ofs --identity "$T/id/bob" ls /d
# (bob holds a connection open across the revoke)
mkfifo "$T/hold.in"
bg sh -c 'OFS_IDENTITY=$5 exec python3 "$1" "$2" pingpause <"$3" >"$4" 2>&1' \
	hold "$RAW" "$(srv_addr a)" "$T/hold.in" "$T/hold.out" "$T/id/bob"
HOLD=$BG
exec 8>"$T/hold.in"
held() { grep -q '^ok' "$T/hold.out"; }
wait_until 30 "bob's connection to answer its first ping" held
stop_server c
ok ofs-pbj ca revoke "$CA" "$T/id/bob/cert.pem"
exec 8>&-
wait_pid "$HOLD" 30
assert_eq "ok
error -10017" "$(cat "$T/hold.out")" "bob's connection opened before the revoke, at its next request"
grep -q 'closed a connection of user bob (uid 1001): its certificate was revoked' "$T/a.log" ||
	fail "a's log does not name the connection it closed"
assert_match '^revoked [0-9a-f]+: 2 of 3 servers in service have CRL 1, 1 serial' "$(head -1 "$T/last.out")" \
	"revoke with c stopped"
for n in a b; do
	err_is 3 'certificate revoked' ofs --identity "$T/id/bob" --cluster "$(srv_addr $n)" ls /d
done
grep -q 'revocation list: CRL 1 from admin itest, 1 certificate(s) revoked' "$T/a.log" ||
	fail "a's log does not name the revocation"
hello_is '^tls: .*CERTIFICATE_REVOKED' OFS_IDENTITY="$T/id/bob"
start_server c --peer "$(srv_addr a)"
# (c learns it from a and b before it serves: at once, no waiting)
err_is 3 'certificate revoked' ofs --identity "$T/id/bob" --cluster "$(srv_addr c)" ls /d
[ -s "$(srv_data c)/identity/revoked" ] || fail "c did not keep the revocation list on disk"
# others are not touched; a revoke of a certificate another CA issued is refused
ok ofs --identity "$T/id/alice" --cluster "$(srv_addr c)" ls /d
err_is 3 'not a certificate this CA issued' ofs-pbj ca revoke "$CA" "$T/id/eve/cert.pem"
err_is 2 'give --cluster' env -u OFS_CLUSTER "$OFS_BIN/ofs-pbj" ca revoke "$CA" "$T/id/alice/cert.pem"
err_is 3 'permission denied' ofs-pbj --identity "$T/id/alice" ca revoke "$CA" "$T/id/old/cert.pem"
# a server made after the revoke has the list from its init
ofs_server init --data "$T/late" --ca "$CA" >/dev/null || fail "init late"
cmp -s "$CA/revoked" "$T/late/identity/revoked" || fail "init --ca did not copy the CA's revocation list"

# ---- capability key rotation: current and previous, on every server ----------------------
say "capability key rotation"
keyid() { grep -v '^sig ' "$1" | cut -d' ' -f1 | tr '\n' ' '; }
assert_eq "1 " "$(keyid "$(srv_data a)/identity/cap.key")" "a's keys at init"
ok ofs-pbj ca rotate "$CA"
assert_match '^capability key 2 is current \(previous: 1\): all 3 servers' "$(cat "$T/last.out")" "rotate"
ok ofs-pbj ca rotate "$CA"
for n in a b c; do
	assert_eq "3 2 " "$(keyid "$(srv_data $n)/identity/cap.key")" "$n's keys after two rotations"
	[ "$(stat -c %a "$(srv_data $n)/identity/cap.key")" = 600 ] || fail "$n's cap.key is not 0600"
	cmp -s "$CA/cap.key" <(grep -v '^sig ' "$(srv_data $n)/identity/cap.key") ||
		fail "$n's keys differ from the CA's"
done
# a server down at a rotation: told so, and --resend brings it the keys
stop_server b
assert_exit 3 ofs-pbj ca rotate "$CA"
assert_contains "$(cat "$T/last.err")" "1 of 3 servers in service did not take it ($(srv_addr b))" "rotate, b down"
assert_contains "$(cat "$T/last.err")" "--resend" "rotate, b down"
start_server b --peer "$(srv_addr a)"
# (b asks its peers for newer keys before it serves: it has them at once)
assert_eq "4 3 " "$(keyid "$(srv_data b)/identity/cap.key")" "b's keys, learned from its peers at start"
grep -q 'gossip: capability keys from .*: current key 4' "$T/b.log" ||
	fail "b's log does not say it learned the keys from a peer"
ok ofs-pbj ca rotate "$CA" --resend
assert_eq "4 3 " "$(keyid "$(srv_data b)/identity/cap.key")" "b's keys after --resend"
err_is 3 'permission denied' ofs-pbj --identity "$T/id/alice" ca rotate "$CA" --resend
# the key bytes are never logged
for n in a b c; do
	! grep -qF "$(cut -d' ' -f2 "$CA/cap.key" | head -1)" "$T/$n.log" || fail "$n logged a capability key"
done
grep -q 'capability keys from admin itest: current key 4, previous key 3' "$T/a.log" ||
	fail "a's log does not name the rotation"

# ---- a flood of connections that never finish a handshake -------------------------------
say "200 silent connections do not stop the server serving others"
mkfifo "$T/stall.in"
bg sh -c 'RAWFRAME_PLAIN=1 exec python3 "$1" "$2" stall --idle 200 --seconds 120 <"$3" >"$4" 2>&1' \
	stall "$RAW" "$OFS_CLUSTER" "$T/stall.in" "$T/stall.out"
exec 9>"$T/stall.in"
stall_ready() { grep -q '^ready' "$T/stall.out"; }
wait_until 60 "the flooding client to connect" stall_ready
ok timeout 30 "$OFS_CLI" get /d/f "$T/got.flood"
assert_same_file "$T/shared" "$T/got.flood" "/d/f read during the flood"
ok timeout 30 "$OFS_BIN/ofs-pbj" servers
exec 9>&-

finish
