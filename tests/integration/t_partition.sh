#!/bin/bash
# t_partition: each server partitioned in turn while the others take
# writes, then healed. Three servers a:r1 b:r2 c:r3, each in its own
# network namespace made by this test, joined by a bridge (in a fourth,
# "switch" namespace, so that the host's own firewall, e.g. a FORWARD
# policy of DROP with br_netfilter loaded, does not see the servers'
# traffic) that the host namespace - where the clients run - reaches
# through one veth pair. Addresses are 10.251.X.0/24, X picked free on
# this host; the host end is .1, a b c are .11 .12 .13.
#
# A client writes the whole time into /p (`ofs put --replicas 3
# --confidence 2`, 1-8 KB each, every fifth put replacing a file already
# written; one `ofs` process a put), OFS_CLUSTER naming all three servers.
# For each server in turn:
#  - partition: its switch port goes down, so it reaches nobody and
#    nobody reaches it (checked from both sides), while its process keeps
#    running;
#  - with it cut off at least 5 more puts are acknowledged within
#    $OFS_ITEST_PARTITION_WAIT seconds (default 120: a put already waiting
#    on the cut-off server waits out its change's deadline, 5 s, and goes
#    to the next copy, and a change a primary forwards to it before its
#    gossip finds it silent waits out the copy's, 2.5 s; then primaries
#    skip it until it is heard from; refusals are counted, not failed),
#    and every file
#    acknowledged so far reads back, through a server that is not cut off,
#    as the last version acknowledged; a client that names the cut-off
#    server first still lists /p;
#  - heal: the port comes up, and (bounded) every server lists all three
#    up, none recovering and none with copies behind.
# Then every acknowledged file reads back through each server, and a scrub
# is clean (exit 0, no findings) with no repair job ever submitted.
#
# A cut-off server drops packets silently, so what waits on it waits for
# a timeout: a connect fails after about 3 s (the address's ARP goes
# unanswered: EHOSTUNREACH; CONN_CONNECT_MS is 5 s, REPLICA_CONNECT_MS
# 2 s), a request already sent waits for its deadline (a client's
# change, CL_CHANGE_MS and CL_LATE_MS, 5 s; a primary forwarding to a
# copy, REPLICA_CHANGE_MS and REPLICA_GRACE_MS, 3 s, until a missed
# deadline or an unanswered gossip ping makes the copy silent: then it is
# skipped until it is heard from). The
# put log records each put's time; the log line of each phase says how
# long its puts took.
#
# If `ip netns add` is refused for lack of privilege the test says it is
# skipped and passes; any other failure to build the network fails it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/putwriter.sh"

NAMES=(a b c)
PUT_WAIT=${OFS_ITEST_PARTITION_WAIT:-120}   # for 5 puts with a server cut off
PUT_TIMEOUT=300                             # the writer's bound on one put
PW_DIR=/p PW_PACE=0.3 PW_TIMEOUT=$PUT_TIMEOUT   # (paced: every put is read back at each check)
declare -A RACK=([a]=r1 [b]=r2 [c]=r3) HOSTNUM=([a]=11 [b]=12 [c]=13)

# ---- the network -------------------------------------------------------------
#
# Namespaces ofs-$$-sw (the bridge br0 and one port per server, pa pb pc,
# and "host", the switch end of the host's link) and ofs-$$-a/b/c (eth0,
# the server's end of its port). In the host namespace only the link
# ofs$$h. Everything is removed on exit, whatever the outcome.

NSP=ofs-$$
SW=$NSP-sw
HOSTDEV=ofs$$h
NS_MADE=()

# _net_cleanup : stop the servers (their namespaces cannot go while they
# run: lib.sh's SIGTERM and bounded wait, whose outcome _cleanup then
# asserts; SIGKILL when interrupted), then delete every namespace and link
# this test made. Keeps $?.
_net_cleanup() {
	local rc=$? p ns
	{
		_stop_at_exit "$rc"
		for p in "${SRV_PID[@]}"; do
			[ -z "$p" ] || _reap "$p" 10
		done
		ip link del "$HOSTDEV"
		for ns in "${NS_MADE[@]}"; do
			ip netns del "$ns"
		done
	} 2>/dev/null
	for ns in "${NS_MADE[@]}"; do
		[ ! -e "/run/netns/$ns" ] || echo "$TEST_NAME: could not delete namespace $ns" >&2
	done
	! ip link show "$HOSTDEV" >/dev/null 2>&1 || echo "$TEST_NAME: could not delete link $HOSTDEV" >&2
	return "$rc"
}
trap '_net_cleanup; _cleanup' EXIT

# netns_add NAME : make a namespace, remembered for the cleanup.
netns_add() {
	local err
	if ! err=$(ip netns add "$1" 2>&1); then
		if [ ${#NS_MADE[@]} = 0 ]; then
			case "$err" in
			*"not permitted"*|*"ermission denied"*)
				log "skipped: cannot make network namespaces (ip netns add: $err)"
				exit 0 ;;
			esac
		fi
		fail "ip netns add $1: $err"
	fi
	NS_MADE+=("$1")
}

# net CMD... : an ip(8) command that must succeed.
net() {
	local err
	err=$("$@" 2>&1) || fail "'$*' failed: $err"
}

# A /24 in 10.251.0.0/16 that nothing on this host uses yet.
X=
for i in $(seq 0 249); do
	x=$((($$ + i) % 250 + 1))
	if ! ip -4 route show | grep -q "^10\.251\.$x\." &&
		! ip -4 addr show | grep -q "inet 10\.251\.$x\."; then
		X=$x
		break
	fi
done
[ -n "$X" ] || fail "no free /24 in 10.251.0.0/16"
NET=10.251.$X

netns_add "$SW"
net ip -n "$SW" link set lo up
net ip -n "$SW" link add br0 type bridge
net ip -n "$SW" link set br0 up
net ip link add "$HOSTDEV" type veth peer name host netns "$SW"
net ip -n "$SW" link set host master br0
net ip -n "$SW" link set host up
net ip addr add "$NET.1/24" dev "$HOSTDEV"
net ip link set "$HOSTDEV" up
declare -A IP=()
for n in "${NAMES[@]}"; do
	netns_add "$NSP-$n"
	IP[$n]=$NET.${HOSTNUM[$n]}
	net ip -n "$NSP-$n" link set lo up
	net ip -n "$SW" link add "p$n" type veth peer name eth0 netns "$NSP-$n"
	net ip -n "$SW" link set "p$n" master br0
	net ip -n "$SW" link set "p$n" up
	net ip -n "$NSP-$n" addr add "${IP[$n]}/24" dev eth0
	net ip -n "$NSP-$n" link set eth0 up
done
say "network $NET.0/24: host $HOSTDEV $NET.1, namespaces ${NS_MADE[*]}"

# partition NAME / heal NAME : its switch port down / up.
partition() { net ip -n "$SW" link set "p$1" down; }
heal() { net ip -n "$SW" link set "p$1" up; }

# ---- the servers -------------------------------------------------------------

# ns_start NAME [run args...] : init $T/NAME (rack from RACK), run the
# server in namespace ofs-$$-NAME on its address, port 0, and wait for its
# ready line (lib.sh's conventions: $T/NAME.log, .err, .out, SRV_*).
# has_ready_line NAME PID OUT : OUT holds the server's ready line (a
# server that exited first fails the test at once).
has_ready_line() {
	! _proc_done "$2" || fail "server $1 exited before its ready line: $(tail -n 5 "$T/$1.err")"
	[ "$(wc -l <"$3")" -ge 1 ]
}

ns_start() {
	local name=$1 data=$T/$1 out=$T/$1.out sid line pid word addr
	shift
	SRV_DATA[$name]=$data
	sid=$("$OFS_SERVER" init --data "$data" --ca "$CA" --attr "rack=${RACK[$name]}" 2>"$T/$name.init.err") ||
		fail "ofs-server init --data $data failed: $(cat "$T/$name.init.err")"
	[[ "$sid" =~ ^[0-9a-f]{32}$ ]] || fail "ofs-server init printed '$sid', not a SID"
	SRV_SID[$name]=$sid
	: >"$out"
	# (ip netns exec execs the server: $! is the server's PID)
	LD_PRELOAD=$SERVER_PRELOAD ASAN_OPTIONS=$SERVER_ASAN_OPTIONS ip netns exec "$NSP-$name" "$OFS_SERVER" run --data "$data" --listen "${IP[$name]}:0" \
		--log "$T/$name.log" "$@" >"$out" 2>>"$T/$name.err" &
	pid=$!
	SRV_PID[$name]=$pid
	wait_until "$READY_TIMEOUT" "server $name's ready line" has_ready_line "$name" "$pid" "$out"
	line=$(head -n 1 "$out")
	read -r word sid addr <<<"$line"
	[ "$word" = ready ] && [ "$sid" = "${SRV_SID[$name]}" ] ||
		fail "server $name printed '$line', expected 'ready ${SRV_SID[$name]} ${IP[$name]}:PORT'"
	[[ "$addr" =~ ^${IP[$name]//./\\.}:[1-9][0-9]*$ ]] ||
		fail "server $name: ready line '$line' does not show its address ${IP[$name]}"
	SRV_ADDR[$name]=$addr
	[ "$(readlink "/proc/$pid/ns/net")" = "$(ip netns exec "$NSP-$name" readlink /proc/self/ns/net)" ] ||
		fail "server $name (pid $pid) is not in namespace $NSP-$name"
}

ns_start a
ns_start b --peer "$(srv_addr a)"
ns_start c --peer "$(srv_addr a)"
for n in "${NAMES[@]}"; do
	wait_until 30 "$n to list all 3 servers up" sees_up "$n" 3
done
ALL=$(srv_addr a),$(srv_addr b),$(srv_addr c)
export OFS_CLUSTER=$ALL
set_addrs a b c
export OFS_PBJ_DB=$T/pbj.db
say "servers up: a $(srv_addr a), b $(srv_addr b), c $(srv_addr c)"
ok ofs mkdir /p

# settled VIA [NAME BASE] : VIA's table lists three servers, every one up,
# not recovering and with no copies behind (fields missing: not settled);
# and NAME has caught up more copies than BASE. (Right after a heal the
# healed server shows none behind until gossip tells it what it missed:
# the puts while it was cut off left it copies to catch up, so its count
# must grow.)
settled() {
	OFS_CLUSTER=$(srv_addr "$1") "$OFS_PBJ" servers --json >"$T/servers.json" 2>"$T/servers.err" || {
		cat "$T/servers.err" >"$T/why"
		return 1
	}
	jq -c '[.servers[] | {address, up, recovering, behind, caught_up}]' "$T/servers.json" >"$T/why" 2>&1
	jq -e --arg s "$(srv_sid "${2:-a}")" --argjson base "${3:--1}" \
		'(.servers | length) == 3 and all(.servers[]; .up == true and .behind == 0 and .recovering == false)
		and any(.servers[]; .sid == $s and .caught_up > $base)' \
		"$T/servers.json" >/dev/null
}

# caught_up NAME : how many copies NAME has caught up (its STATS).
caught_up() {
	OFS_CLUSTER=$(srv_addr "$1") "$OFS_PBJ" servers --json 2>/dev/null |
		jq -er --arg s "$(srv_sid "$1")" '.servers[] | select(.sid == $s) | .caught_up | numbers'
}

# sees_down VIA NAME : VIA's table shows NAME down.
sees_down() {
	OFS_CLUSTER=$(srv_addr "$1") "$OFS_PBJ" servers --json >"$T/servers.json" 2>"$T/why" &&
		jq -c '[.servers[] | {address, up}]' "$T/servers.json" >"$T/why" &&
		jq -e --arg s "$(srv_sid "$2")" 'any(.servers[]; .sid == $s and .up == false)' "$T/servers.json" >/dev/null
}

# ---- the partitions ----------------------------------------------------------

phase start
: >"$T/writer.log"
bg writer
WRITER=$BG
await 60 "the writer's first 5 acknowledged puts" acked_at_least 5

# isolated NAME OTHER : from inside each one's namespace the other's
# address cannot be reached (ofs-pbj servers through it fails).
isolated() {
	local from to rc
	for from in "$1" "$2"; do
		if [ "$from" = "$1" ]; then to=$2; else to=$1; fi
		ip netns exec "$NSP-$from" timeout 30 "$OFS_PBJ" --cluster "$(srv_addr "$to")" servers --json \
			>"$T/iso.out" 2>"$T/iso.err"
		rc=$?
		[ "$rc" != 0 ] ||
			fail "$1 is cut off, yet from $from's namespace $to answered: $(head -c 300 "$T/iso.out")"
		say "from $from's namespace $to does not answer (ofs-pbj exit $rc: $(head -c 120 "$T/iso.err" | tr '\n' ' '))"
	done
}

for i in 0 1 2; do
	n=${NAMES[$i]}
	via=${NAMES[$(((i + 1) % 3))]}
	phase "cut-$n"
	base=$(acked)
	cu=$(caught_up "$n") || fail "no caught_up count for $n in ofs-pbj servers --json"
	partition "$n"
	t_cut=$(now_ms)
	await "$PUT_WAIT" "5 more acknowledged puts with $n cut off ($base before)" acked_at_least $((base + 5))
	say "5 more puts acknowledged $(($(now_ms) - t_cut)) ms after $n was cut off"
	server_alive "$n" || fail "server $n exited while cut off: $(tail -n 5 "$T/$n.err")"
	await 10 "$via to show $n down" sees_down "$via" "$n"
	isolated "$n" "$via"
	check_all "with $n cut off" "$via"
	# (how long a client that names the cut-off server first takes)
	t=$(now_ms)
	OFS_CLUSTER=$(srv_addr "$n"),$(srv_addr "$via") ok timeout 60 "$OFS_CLI" ls /p
	say "ofs ls /p naming $n first, then $via: $(($(now_ms) - t)) ms"
	server_alive "$n" || fail "server $n exited while cut off: $(tail -n 5 "$T/$n.err")"
	phase "healed-$n"
	say "puts begun while $n was cut off: $(put_stats "cut-$n")"
	heal "$n"
	t_heal=$(now_ms)
	for m in "${NAMES[@]}"; do
		await 60 "$m to show every server up, none recovering, none behind, and $n more than $cu copies caught up, after $n was healed" \
			settled "$m" "$n" "$cu"
	done
	say "$n healed: every server up, none recovering, none behind after $(($(now_ms) - t_heal)) ms ($n caught up $(($(jq --arg s "$(srv_sid "$n")" '.servers[] | select(.sid == $s) | .caught_up' "$T/servers.json") - cu)) copies)"
done

phase end
touch "$T/stop-writer"
wait_pid "$WRITER" $((PUT_TIMEOUT + 20))
[ "$REAP_ST" = 0 ] || fail "the writer did not end within $((PUT_TIMEOUT + 20))s of its stop file (status $REAP_ST)"
say "writer: $(writer_summary)"

# ---- the end -----------------------------------------------------------------

await 60 "every server up, none recovering, none behind, at the end" settled a
keep_going

for n in "${NAMES[@]}"; do check_all "at the end" "$n"; done

clean_scrub_no_repair "$T/pbj.db"
say "done"
finish
