# lib.sh - helpers sourced by every tests/integration/t_*.sh (bash).
#
# Modelled on Redis's start_server blocks: every test gets its own
# temporary directory ($T), starts its own servers on 127.0.0.1:0, reads
# their "ready SID HOST:PORT" line and acts on them through the real CLI.
# Every wait is bounded by a timeout; nothing sleeps for a fixed time and
# then assumes something happened. On any exit the servers the test
# started and left running are stopped with SIGTERM (bounded, SIGKILL as a
# last resort) and must exit 0 - so LeakSanitizer checks each of them - a
# sanitizer's report in any server's stderr or log fails the test, and $T
# is removed (kept with OFS_ITEST_KEEP=1).
#
#   start_server NAME [--chunk-size B] [--attr K=V]... [run args...]
#       init a data dir $T/NAME (unless it exists), run the server, wait
#       for its ready line; sets OFS_CLUSTER to its address.
#   stop_server NAME      SIGTERM, bounded wait, assert exit status 0
#   kill_server NAME      SIGKILL, reap
#   restart_server NAME   stop (if running) and start on the same data dir
#   restart_same_port NAME   the same, listening where it did before
#   start_cluster NAME:RACK...   start servers joined through the first and
#                         wait until each lists all of them as up
#   sees_up NAME COUNT, sees_sid NAME SID, srv_by_sid SID, rack_of SID,
#   inspect_json NAME OID, ofs_pbj ARGS...   cluster helpers
#   use_server NAME       point OFS_CLUSTER at NAME
#   srv_addr / srv_sid / srv_data / srv_pid NAME
#   ofs ARGS...           the real bin/ofs
#   ok CMD...             CMD must exit 0 (its output goes to $T/last.*)
#   assert_exit CODE CMD...   exit status must be CODE; stdout in
#                         $T/last.out, stderr in $T/last.err
#   assert_eq EXPECTED ACTUAL WHAT, assert_match REGEX TEXT WHAT,
#   assert_contains HAYSTACK NEEDLE WHAT, assert_same_file A B WHAT
#   fail MESSAGE          print and exit 1 (only call it from the test's
#                         own shell, not from inside $(...)); after
#                         keep_going it returns 1 instead, and `finish`
#                         ends the test with exit 1 if anything failed
#   wait_until SECONDS WHAT CMD...   poll CMD until it succeeds

# (pipefail: a pipeline fails when any part does - so never `PRODUCER |
# grep -q`: grep -q leaves at its first match, and a producer still
# writing then dies of SIGPIPE, failing a check that matched. Give grep
# the files, or `grep -q RE < <(PRODUCER)`.)
set -u -o pipefail

ITEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OFS_ROOT=$(cd "$ITEST_DIR/../.." && pwd)
OFS_BIN=${OFS_BIN:-$OFS_ROOT/bin}
OFS_ITEST_BIN=${OFS_ITEST_BIN:-$OFS_ROOT/build/normal/itest}
OFS_SERVER=$OFS_BIN/ofs-server
OFS_CLI=$OFS_BIN/ofs
TEST_NAME=$(basename "$0" .sh)
# (a server's ready line normally comes within a second or two; a loaded
# machine once stalled every process here for 24 s, disk syncs included)
READY_TIMEOUT=${OFS_READY_TIMEOUT:-60}
STOP_TIMEOUT=${OFS_STOP_TIMEOUT:-60}
# Sanitizer builds: abort loudly on the first error. Leaks: every server
# is checked when it exits; a client only in the tests that set
# OFS_ITEST_CLIENT_LEAKS=1 before sourcing this (t_roundtrip, t_errors,
# t_badinput: every command's paths), since the check costs each process
# about 70 ms at exit and the other tests start thousands of them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
SERVER_ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=1
# A client of the other tests also skips the allocation stacks (an
# error's report still shows where it happened): about a third of what
# the sanitizers cost each of its processes.
[ -n "${OFS_ITEST_CLIENT_LEAKS:-}" ] || ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0:malloc_context_size=0
# Syncs. The suite is bound by disk-sync latency, which varies 3x from
# day to day here. Servers of a test that is not about durability run
# without real syncs: Debian's eatmydata (preloaded) makes fsync,
# fdatasync, msync and O_SYNC return at once; every byte still goes
# through the page cache, so what a SIGKILLed server wrote is still
# there. A test about crashes sets OFS_ITEST_REAL_SYNC=1 before sourcing
# this, and its servers sync for real. (Without eatmydata installed,
# every test syncs for real.)
SERVER_PRELOAD=
if [ -z "${OFS_ITEST_REAL_SYNC:-}" ]; then
	for _l in /usr/lib/x86_64-linux-gnu/libeatmydata.so /usr/lib/*/libeatmydata.so \
		/usr/lib/libeatmydata/libeatmydata.so; do
		if [ -e "$_l" ]; then
			SERVER_PRELOAD=$_l
			# (ASan wants to come first; the preloaded library only
			# replaces the sync calls)
			SERVER_ASAN_OPTIONS=$SERVER_ASAN_OPTIONS:verify_asan_link_order=0
			printf '%s: servers run without real syncs (%s): not a durability test\n' \
				"$TEST_NAME" "$_l" >&2
			break
		fi
	done
fi

# nap SECONDS: sleep without starting a process (a read that times out on
# a pipe nobody writes): the process-watching loops below poll often.
exec {_NAP_FD}<> <(:)
nap() { read -r -t "$1" -u "$_NAP_FD" _ || :; }

T=$(mktemp -d "${TMPDIR:-/tmp}/ofs-itest-$TEST_NAME.XXXXXX") || exit 1
export T
unset OFS_CLUSTER

# Security is on in every test, as in production (docs/design.md, "Security"):
# each test has its own cluster CA ($T/ca); its servers are issued their
# identities at init, and its commands run as the admin $T/id/admin
# (OFS_IDENTITY). A test that is about who may do what issues more
# (issue_identity).
CA=$T/ca
"$OFS_BIN/ofs-pbj" ca init "$CA" >/dev/null 2>"$T/ca.err" &&
	"$OFS_BIN/ofs-pbj" ca issue "$CA" --out "$T/id/admin" --admin itest >/dev/null 2>>"$T/ca.err" ||
	{ printf '%s: cannot make the test CA: %s\n' "$TEST_NAME" "$(cat "$T/ca.err")" >&2; exit 1; }
export OFS_IDENTITY=$T/id/admin
# issue_identity NAME ofs-pbj-ca-issue-args...: $T/id/NAME
issue_identity() {
	local name=$1
	shift
	"$OFS_BIN/ofs-pbj" ca issue "$CA" --out "$T/id/$name" "$@" >/dev/null 2>"$T/id.$name.err" ||
		fail "ofs-pbj ca issue --out $T/id/$name $*: $(cat "$T/id.$name.err")"
}

declare -A SRV_PID=() SRV_ADDR=() SRV_SID=() SRV_DATA=() SRV_RUNARGS=()
BG_PIDS=()          # other background processes to kill on exit
TEST_FAILED=0

log() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }

_dump_servers() {
	local n
	# (in name order: the last cluster started is dumped last)
	for n in $(printf '%s\n' "${!SRV_DATA[@]}" | sort); do
		if [ -s "$T/$n.err" ]; then
			echo "---- server $n stderr (last 30 lines) ----" >&2
			tail -n 30 "$T/$n.err" >&2
		fi
		if [ -s "$T/$n.log" ]; then
			echo "---- server $n log (last 30 lines) ----" >&2
			tail -n 30 "$T/$n.log" >&2
		fi
	done
}

fail() {
	TEST_FAILED=1
	local i=0 frame where=""
	# Where: the chain of calls in the test itself (lib.sh frames left out).
	while frame=$(caller $i); do
		i=$((i + 1))
		case "$frame" in *lib.sh) continue ;; esac
		where="${where:+$where <- }$(basename "${frame##* }"):${frame%% *}"
	done
	printf 'FAIL %s (%s): %s\n' "$TEST_NAME" "$where" "$*" >&2
	LAST_FAIL="FAIL $TEST_NAME ($where): $*"
	[ -n "$KEEP_GOING" ] && return 1
	exit 1
}

# keep_going: from here on a failed assertion is reported and the test
# goes on (for independent checks); finish exits 1 if any failed.
KEEP_GOING=
keep_going() { KEEP_GOING=1; }
finish() { [ "$TEST_FAILED" -eq 0 ] || exit 1; exit 0; }

# _stop_left_servers : the servers still running at the end are stopped
# as stop_servers does - SIGTERM to all at once, a bounded wait (one
# STOP_TIMEOUT for them all), SIGKILL only for one still there then - so
# that each exits cleanly and, under the sanitizers, is checked for leaks
# (LeakSanitizer runs only on a clean exit). _LEFT_BAD: one line for each
# that did not exit 0 (or had died on its own, unreaped), for _cleanup.
_LEFT_BAD=()

# _stop_hang_log NAME : what server NAME's log says of a stop that hung
# (its shutdown report, stopping.h, the warnings before it, and "stopped
# cleanly" when everything was closed and it hung in the exit), one line.
_stop_hang_log() {
	echo "its log ends: $(grep -E 'shutdown|stopped cleanly|WARN|ERROR' "$T/$1.log" 2>/dev/null |
		tail -n 12 | tr '\n' ' ' | cut -c 1-1500)"
}

_stop_left_servers() {
	local n p st deadline names=()
	for n in "${!SRV_PID[@]}"; do
		p=${SRV_PID[$n]}
		[ -n "$p" ] || continue
		if _proc_done "$p"; then
			wait "$p" 2>/dev/null
			st=$?
			SRV_PID[$n]=""
			[ "$st" -eq 0 ] ||
				_LEFT_BAD+=("server $n had exited by itself with status $st before the end: $(tail -n 5 "$T/$n.err" 2>/dev/null | tr '\n' ' ' | cut -c 1-600)")
			continue
		fi
		kill -TERM "$p" 2>/dev/null
		kill -CONT "$p" 2>/dev/null     # (one a test left stopped)
		names+=("$n")
	done
	deadline=$((EPOCHSECONDS + STOP_TIMEOUT))
	for n in "${names[@]}"; do
		p=${SRV_PID[$n]}
		_reap "$p" $((deadline > EPOCHSECONDS ? deadline - EPOCHSECONDS : 0))
		st=$REAP_ST
		if [ "$st" = timeout ]; then
			kill -KILL "$p" 2>/dev/null
			_reap "$p" 10
			_LEFT_BAD+=("server $n did not exit within ${STOP_TIMEOUT}s of SIGTERM at the end (SIGKILLed); $(_stop_hang_log "$n")")
		elif [ "$st" -ne 0 ]; then
			_LEFT_BAD+=("server $n exited $st after SIGTERM at the end, expected 0: $(tail -n 5 "$T/$n.err" 2>/dev/null | tr '\n' ' ' | cut -c 1-600)")
		fi
		SRV_PID[$n]=""
	done
}

# _stop_at_exit RC : the servers left running stopped at the end of a
# test that exits RC: SIGKILLed when interrupted (130: ^C, or timeout(1)'s
# TERM - no time for a clean stop), else _stop_left_servers.
_stop_at_exit() {
	local p
	if [ "$1" -eq 130 ]; then
		for p in "${SRV_PID[@]}"; do
			[ -n "$p" ] && kill -KILL "$p"
		done
	else
		_stop_left_servers
	fi
}

# _sanitizer_reports : the servers' stderr and log files that hold a
# sanitizer's report (AddressSanitizer, LeakSanitizer, UBSan's "runtime
# error:"), one a line.
SAN_REPORT_RE='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:'
_sanitizer_reports() {
	local n f
	for n in $(printf '%s\n' "${!SRV_DATA[@]}" | sort); do
		for f in "$T/$n.err" "$T/$n.log"; do
			[ -f "$f" ] && grep -qE "$SAN_REPORT_RE" "$f" && echo "$f"
		done
	done
}

_cleanup() {
	local rc=$? p f errfd
	trap - EXIT INT TERM
	# (no "Killed" job reports from bash; what this says goes to errfd)
	exec {errfd}>&2 2>/dev/null
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p"
	done
	_stop_at_exit "$rc"
	if [ "$rc" -ne 130 ]; then
		for f in "${_LEFT_BAD[@]}"; do
			TEST_FAILED=1
			LAST_FAIL="FAIL $TEST_NAME (at the end): $f"
			echo "$LAST_FAIL" >&"$errfd"
		done
		for f in $(_sanitizer_reports); do
			TEST_FAILED=1
			LAST_FAIL="FAIL $TEST_NAME (at the end): a sanitizer's report in $(basename "$f"): $(grep -m 1 -A 40 -E "$SAN_REPORT_RE" "$f" | cut -c 1-300)"
			echo "$LAST_FAIL" >&"$errfd"
		done
	fi
	# (a keep_going test that failed and did not call finish fails too)
	[ "$rc" -ne 0 ] || [ "$TEST_FAILED" -eq 0 ] || rc=1
	if [ "$rc" -ne 0 ]; then
		_dump_servers 2>&"$errfd"
		# (once more below the servers' logs, which can be long)
		[ -z "${LAST_FAIL:-}" ] || echo "$LAST_FAIL" | cut -c 1-4000 >&"$errfd"
	fi
	[ -z "${OFS_ITEST_KEEP:-}" ] || echo "kept $T" >&"$errfd"
	# Bounded: every process killed above is gone (or a zombie) before $T
	# is removed.
	local deadline=$((EPOCHSECONDS + 10))
	for p in "${BG_PIDS[@]}" "${SRV_PID[@]}"; do
		[ -n "$p" ] || continue
		while ! _proc_done "$p" && [ "$EPOCHSECONDS" -lt "$deadline" ]; do
			sleep 0.02
		done
	done
	[ -n "${OFS_ITEST_KEEP:-}" ] || rm -rf "$T"
	exit "$rc"
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$OFS_SERVER" ] || { echo "FAIL $TEST_NAME: $OFS_SERVER not built (run make)" >&2; exit 1; }
[ -x "$OFS_CLI" ] || { echo "FAIL $TEST_NAME: $OFS_CLI not built (run make)" >&2; exit 1; }

# ---- assertions ---------------------------------------------------------

assert_eq() {
	[ "$1" == "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

assert_match() {
	[[ "$2" =~ $1 ]] || fail "${3:-value}: '$2' does not match /$1/"
}

assert_contains() {
	case "$1" in
	*"$2"*) ;;
	*) fail "${3:-text}: '$2' not found in: $1" ;;
	esac
}

assert_not_contains() {
	case "$1" in
	*"$2"*) fail "${3:-text}: '$2' found in: $1" ;;
	esac
}

assert_not_same_file() {
	! cmp -s "$1" "$2" || fail "${3:-files}: $1 and $2 are the same"
}

assert_same_file() {
	cmp -s "$1" "$2" || fail "${3:-files}: $1 and $2 differ ($(stat -c %s "$1" 2>/dev/null) vs $(stat -c %s "$2" 2>/dev/null) bytes)"
}

# assert_exit CODE CMD... : run CMD, require exit status CODE.
assert_exit() {
	local want=$1 rc
	shift
	"$@" >"$T/last.out" 2>"$T/last.err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "'$*' exited $rc, expected $want; stdout: $(head -c 600 "$T/last.out"); stderr: $(head -c 600 "$T/last.err")"
	fi
}

ok() { assert_exit 0 "$@"; }

# err_is CODE REGEX CMD... : exit CODE, stderr matching REGEX (ERE, any case).
err_is() {
	local code=$1 re=$2
	shift 2
	assert_exit "$code" "$@" || return 1
	grep -qiE "$re" "$T/last.err" ||
		fail "'$*': stderr does not match /$re/: $(head -c 400 "$T/last.err")"
}

# assert_exit_in "CODES" CMD... : run CMD, require one of the exit statuses.
assert_exit_in() {
	local want=$1 rc
	shift
	"$@" >"$T/last.out" 2>"$T/last.err"
	rc=$?
	case " $want " in
	*" $rc "*) ;;
	*) fail "'$*' exited $rc, expected one of $want; stdout: $(head -c 600 "$T/last.out"); stderr: $(head -c 600 "$T/last.err")" ;;
	esac
}

# wait_until SECONDS WHAT CMD... : poll CMD (every 50 ms) until it succeeds.
# within SECS CMD... : 0 once CMD succeeds, 1 when it has not within SECS.
within() {
	local secs=$1 deadline
	shift
	deadline=$((${EPOCHREALTIME//[!0-9]/} + secs * 1000000))
	until "$@"; do
		[ "${EPOCHREALTIME//[!0-9]/}" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

wait_until() {
	local secs=$1 what=$2
	shift 2
	within "$secs" "$@" || fail "timed out after ${secs}s waiting for $what$(_wait_context)"
}

# (what an await saw last, and the writer's account, for its failure)
_wait_context() {
	[ -n "${WAIT_WHY:-}" ] || return 0
	printf '; last seen: %s' "$(head -c 1200 "$T/why" 2>/dev/null | tr '\n' ' ')"
	! declare -F writer_summary >/dev/null || printf '; writer: %s' "$(writer_summary)"
}

now_ms() { echo $((${EPOCHREALTIME//[!0-9]/} / 1000)); }

# ---- tests with a writer in the background (t_rolling, t_crashloop,
# t_partition) ---------------------------------------------------------------
# say MSG: log it with the seconds since the test began. set_phase NAME:
# what the test is doing now, in $T/phase (the writer records it with
# each operation); phase NAME: the same, and say it. set_addrs NAME...:
# the running servers' addresses, in $T/addrs, for the writer's next
# operation. await SECS WHAT CMD...: wait_until with $T/why (what the
# last try saw) and the writer's account (writer_summary, when the test
# defines one) in the failure.
# acked: puts acknowledged so far in $T/writer.log ("E SEQ 0 MS ." lines).
_T0=$(now_ms)
say() { log "[$((($(now_ms) - _T0) / 1000))s] $*"; }
set_phase() { echo "$1" >"$T/phase.tmp" && mv "$T/phase.tmp" "$T/phase"; }
phase() { set_phase "$1" && say "$1"; }        # (and say it)
set_addrs() {
	local n a=""
	for n in "$@"; do a=${a:+$a,}$(srv_addr "$n"); done
	echo "$a" >"$T/addrs.tmp" && mv "$T/addrs.tmp" "$T/addrs"
}
await() { : >"$T/why"; WAIT_WHY=1 wait_until "$@"; }
# readmany ADDR < NAMES : get every name through ADDR; print for each
# "NAME 0 SHA256 MS" or "NAME EXIT MS MESSAGE" (MS: how long its get
# took). One client process gets them one after another (getmany): a
# process start per file under the sanitizers costs more than the get.
readmany() {
	local d
	d=$(mktemp -d "$T/rb.XXXXXX") || return 1
	timeout 300 "$OFS_ITEST_BIN/getmany" "$1" "$d" >"$d/out" 2>"$d/err" ||
		{ echo "getmany through $1 failed: $(head -c 300 "$d/err")" >&2; rm -rf "$d"; return 1; }
	find "$d" -name '[0-9]*' -exec sha256sum {} + >"$d/sums"
	awk 'NR == FNR { sum[$2] = $1; next }
		$2 == 0 { print $1, 0, sum[$4], $3; next }
		{ print }' "$d/sums" "$d/out"
	rm -rf "$d"
}

acked() { grep -c '^E [0-9]* 0 [0-9]* \.$' "$T/writer.log"; }

# clean_scrub_no_repair DB : a scrub through the job store DB ends
# succeeded, exit 0, no findings (else the report's first findings and the
# writer's account in the failure), and no repair job is in DB.
clean_scrub_no_repair() {
	local db=$1 writer=""
	declare -F writer_summary >/dev/null && writer="; writer: $(writer_summary)"
	if ofs_pbj --db "$db" submit scrub --wait --json >"$T/scrub.json" 2>"$T/scrub.err" &&
		[ "$(json "$T/scrub.json" .findings.total)" = 0 ]; then
		assert_eq succeeded "$(json "$T/scrub.json" .state)" "state of the scrub at the end"
	else
		ofs_pbj --db "$db" report "$(jq -r .id "$T/scrub.json" 2>/dev/null)" >"$T/scrub.report" 2>&1
		fail "expected the scrub at the end to exit 0 with no findings; it did not: $(jq -c '{state, findings}' "$T/scrub.json" 2>/dev/null) $(head -c 300 "$T/scrub.err"); findings: $(head -n 12 "$T/scrub.report" | tr '\n' ';' | head -c 1500)$writer"
	fi
	ok ofs_pbj --db "$db" list --json
	assert_eq 0 "$(jq '[.jobs[] | select(.type == "repair")] | length' "$T/last.out")" \
		"repair jobs in the job store ($(jq -c '[.jobs[] | {id, type, state}]' "$T/last.out"))"
}

# ---- data ---------------------------------------------------------------

# mkrand FILE BYTES : BYTES of random data.
mkrand() {
	head -c "$2" /dev/urandom >"$1" || fail "cannot write $1"
	[ "$(stat -c %s "$1")" -eq "$2" ] || fail "short random file $1"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# invert_byte FILE OFFSET : replace the byte at OFFSET with its complement.
# (Always a change: writing 0xff, as the tests once did, left a random
# file as it was when that byte was 0xff already - one flip in 256, and
# then a scrub rightly found nothing.)
invert_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	[ -n "$b" ] || fail "invert_byte: $1 has no byte at offset $2"
	printf "\\$(printf '%03o' $((255 - b)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none || fail "cannot write $1"
}

# wrong_stripe : the back reference of /f/s8's second dfile, on its first
# copy, rewritten (object tool, that server stopped and started) to name
# stripe 2; sets S8 (its `ofs stat --json`), MF, DF (that dfile) and VSID
# (that copy's server).
wrong_stripe() {
	S8=$(ofs stat --json /f/s8) || fail "stat /f/s8"
	MF=$(jq -r .oid <<<"$S8")
	DF=$(jq -r '.dfiles[1].oid' <<<"$S8")
	VSID=$(jq -r '.dfiles[1].sids[0]' <<<"$S8")
	on_all_copies "$VSID" \
		bash -c 'exec "$0" tool --data "$DATA" set-backref "$1" "$2" 2' "$OFS_SERVER" "$DF" "$MF"
}

# damage_copy NAME OID flip OFFSET | lose : invert a byte of (or lose) the
# bytes of OID's copy on server NAME, behind its checksums' back: in its
# byte stream while the server runs, or - a small dfile held inline - with
# the object tool (`flip-byte`, `lose-bytes`), NAME stopped and started
# again on its port, and waited for until its cluster (NAME less its last
# letter) sees all four up.
damage_copy() {
	local n=$1 oid=$2 how=$3 off=${4:-5000} p
	p=$(inspect_json "$n" "$oid" | jq -r .path) || fail "inspect $oid on $n"
	if [ "$p" != null ]; then
		case $how in
		flip) invert_byte "$p" "$off" ;;
		lose) rm -f "$p" || fail "cannot remove $p" ;;
		esac
		return 0
	fi
	stop_server "$n"
	case $how in
	flip) ok ofs_server tool --data "$(srv_data "$n")" flip-byte "$oid" "$off" ;;
	lose) ok ofs_server tool --data "$(srv_data "$n")" lose-bytes "$oid" ;;
	esac
	restart_same_port "$n"
	all_up "${n%?}"
}

# ---- programs -----------------------------------------------------------

ofs() { "$OFS_CLI" "$@"; }
ofs_server() { "$OFS_SERVER" "$@"; }

# ---- servers ------------------------------------------------------------

_proc_done() {
	local st
	# (builtins only: this runs in every wait loop)
	read -r st 2>/dev/null <"/proc/$1/stat" || return 0
	st=${st##*) }
	st=${st%% *}
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

srv_addr() { echo "${SRV_ADDR[$1]}"; }
srv_sid() { echo "${SRV_SID[$1]}"; }
srv_data() { echo "${SRV_DATA[$1]}"; }
srv_pid() { echo "${SRV_PID[$1]}"; }
use_server() { export OFS_CLUSTER="${SRV_ADDR[$1]}"; }

# start_server NAME [--chunk-size B] [--attr K=V]... [other run args...]
start_server() {
	local name=$1 data
	shift
	local init_args=() run_args=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--chunk-size|--attr) init_args+=("$1" "$2"); shift 2 ;;
		*) run_args+=("$1"); shift ;;
		esac
	done
	data=$T/$name
	SRV_DATA[$name]=$data
	SRV_RUNARGS[$name]="${run_args[*]}"
	if [ ! -e "$data" ]; then
		local sid
		sid=$("$OFS_SERVER" init --data "$data" --ca "$CA" "${init_args[@]}" 2>"$T/$name.init.err")
		[ $? -eq 0 ] || fail "ofs-server init --data $data ${init_args[*]} failed: $(cat "$T/$name.init.err")"
		[[ "$sid" =~ ^[0-9a-f]{32}$ ]] || fail "ofs-server init printed '$sid', not a SID"
		SRV_SID[$name]=$sid
	fi
	_run_server "$name" "${run_args[@]}"
}

_run_server() {
	local name=$1 data=${SRV_DATA[$1]} out=$T/$1.out pid line listen=${LISTEN:-127.0.0.1:0}
	local tries=0 errs
	shift
	# (a server restarted on its old port may find it taken for a moment:
	# a client's outgoing connection - of this test or, with tests run two
	# at a time, of another - can get that port while it is free; tried
	# again for up to 10 s)
	while :; do
	: >"$out"
	errs=0
	[ "${listen##*:}" = 0 ] || errs=$({ wc -l <"$T/$name.err"; } 2>/dev/null || echo 0)
	# shellcheck disable=SC2086  # (EXTRA_RUN_ARGS: words for every server)
	LD_PRELOAD=$SERVER_PRELOAD ASAN_OPTIONS=$SERVER_ASAN_OPTIONS \
		"$OFS_SERVER" run --data "$data" --listen "$listen" --log "$T/$name.log" "$@" ${EXTRA_RUN_ARGS:-} \
		>"$out" 2>>"$T/$name.err" &
	pid=$!
	SRV_PID[$name]=$pid
	local deadline=$((EPOCHSECONDS + READY_TIMEOUT))
	while :; do
		# (a whole first line: read fails on one without its newline yet)
		if [ -s "$out" ] && read -r line <"$out"; then
			break 2
		fi
		if _proc_done "$pid"; then
			wait "$pid"
			local st=$?
			if [ "${listen##*:}" != 0 ] && [ $((tries += 1)) -le 40 ] &&
				grep -qi "in use" < <(tail -n +$((errs + 1)) "$T/$name.err"); then
				sleep 0.25
				continue 2
			fi
			fail "server $name exited ($st) before its ready line: $(tail -n 5 "$T/$name.err")"
		fi
		[ "$EPOCHSECONDS" -lt "$deadline" ] || fail "server $name: no ready line within ${READY_TIMEOUT}s"
		nap 0.01
	done
	done
	local word sid addr
	read -r word sid addr <<<"$line"
	[ "$word" = ready ] || fail "server $name printed '$line', expected 'ready SID HOST:PORT'"
	[[ "$sid" =~ ^[0-9a-f]{32}$ ]] || fail "server $name: bad SID in '$line'"
	[[ "$addr" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "server $name: bad address in '$line'"
	[ "${addr##*:}" != 0 ] || fail "server $name: ready line shows port 0"
	if [ -n "${SRV_SID[$name]:-}" ] && [ "${SRV_SID[$name]}" != "$sid" ]; then
		fail "server $name: ready line SID $sid differs from init's ${SRV_SID[$name]}"
	fi
	SRV_SID[$name]=$sid
	SRV_ADDR[$name]=$addr
	export OFS_CLUSTER=$addr
}

# _reap PID SECONDS : wait (bounded) for a child to exit; sets REAP_ST to
# its exit status or to "timeout". (Not in $(...): only the parent shell
# can wait for its children.)
_reap() {
	local pid=$1 deadline=$((EPOCHSECONDS + $2))
	while ! _proc_done "$pid"; do
		if [ "$EPOCHSECONDS" -ge "$deadline" ]; then
			REAP_ST=timeout
			return
		fi
		nap 0.01
	done
	wait "$pid" 2>/dev/null
	REAP_ST=$?
}

stop_server() { stop_servers "$1"; }

# stop_servers NAME... : SIGTERM them all at once, then stop_server's
# bounded wait and exit status check for each.
stop_servers() {
	local name pid st
	for name in "$@"; do
		pid=${SRV_PID[$name]:-}
		[ -n "$pid" ] || fail "stop_server $name: not running"
		kill -TERM "$pid" 2>/dev/null || fail "stop_server $name: cannot signal pid $pid"
	done
	for name in "$@"; do
		pid=${SRV_PID[$name]}
		_reap "$pid" "$STOP_TIMEOUT"
		st=$REAP_ST
		if [ "$st" = timeout ]; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			SRV_PID[$name]=""
			fail "server $name did not exit within ${STOP_TIMEOUT}s of SIGTERM; $(_stop_hang_log "$name")"
		fi
		SRV_PID[$name]=""
		[ "$st" -eq 0 ] || fail "server $name exited $st after SIGTERM, expected 0: $(tail -n 5 "$T/$name.err")"
	done
}

kill_server() {
	local name=$1 pid=${SRV_PID[$1]:-}
	[ -n "$pid" ] || fail "kill_server $name: not running"
	# (stderr hidden: bash reports the killed job as "Killed ...")
	{ kill -KILL "$pid"; _reap "$pid" 30; } 2>/dev/null
	[ "$REAP_ST" != timeout ] || fail "server $name survived SIGKILL"
	SRV_PID[$name]=""
}

restart_server() {
	local name=$1
	shift
	[ -z "${SRV_PID[$name]:-}" ] || stop_server "$name"
	# shellcheck disable=SC2086
	_run_server "$name" ${SRV_RUNARGS[$name]} "$@"
}

# restart_same_port NAME [RUN ARGS...] : restart NAME on the address it
# had (peers that all restart at once can only find each other where they
# were), with RUN ARGS added for this run.
restart_same_port() {
	local name=$1
	shift
	[ -z "${SRV_PID[$name]:-}" ] || stop_server "$name"
	# shellcheck disable=SC2086
	LISTEN=${SRV_ADDR[$name]} _run_server "$name" ${SRV_RUNARGS[$name]} "$@"
}

server_alive() { ! _proc_done "${SRV_PID[$1]}"; }

# bg CMD... : start CMD in the background; it is killed on exit. Sets BG.
bg() {
	"$@" &
	BG=$!
	BG_PIDS+=("$BG")
}

# wait_pid PID SECONDS : bounded wait for a child; sets REAP_ST to its
# exit status or "timeout" (call it directly, not inside $(...)).
wait_pid() { _reap "$1" "$2"; }

# assert_json FILE : FILE holds exactly one valid JSON document.
assert_json() {
	[ "$(jq -s length "$1" 2>/dev/null)" = 1 ] || fail "not one JSON document: $(head -c 400 "$1")"
}

# json FILE FILTER : jq -r FILTER on FILE (call assert_json first).
json() { jq -r "$2" "$1"; }

# ---- clusters -----------------------------------------------------------

OFS_PBJ=$OFS_BIN/ofs-pbj
ofs_pbj() { "$OFS_PBJ" "$@"; }

# start_cluster NAME[:RACK]... [-- OPTION...] : start one server per
# NAME (in rack RACK when given), the first on its own and every other one
# with --peer to the first, each with the OPTIONs too, then wait (bounded)
# until every one of them lists all of them as up. OFS_CLUSTER ends up
# pointing at the first.
start_cluster() {
	local first="" spec name names=() opts=() attr
	while [ $# -gt 0 ] && [ "$1" != -- ]; do names+=("$1"); shift; done
	[ $# -eq 0 ] || { shift; opts=("$@"); }
	for spec in "${names[@]}"; do
		name=${spec%%:*}
		attr=()
		[ "$spec" = "$name" ] || attr=(--attr "rack=${spec#*:}")
		if [ -z "$first" ]; then
			start_server "$name" "${attr[@]}" "${opts[@]}"
			first=$name
		else
			start_server "$name" "${attr[@]}" --peer "$(srv_addr "$first")" "${opts[@]}"
		fi
	done
	for spec in "${names[@]}"; do
		wait_until 30 "${spec%%:*} to list all ${#names[@]} servers as up" sees_up "${spec%%:*}" ${#names[@]}
	done
	use_server "$first"
}

# sees_up NAME COUNT : NAME's server table (through ofs-pbj) lists exactly
# COUNT servers, all up.
sees_up() {
	"$OFS_PBJ" --cluster "$(srv_addr "$1")" servers --json 2>/dev/null |
		jq -e --argjson n "$2" '(.servers | length) == $n and ([.servers[] | select(.up)] | length) == $n' >/dev/null
}

# sees_sid NAME SID : NAME's server table lists SID.
sees_sid() {
	"$OFS_PBJ" --cluster "$(srv_addr "$1")" servers --json 2>/dev/null |
		jq -e --arg s "$2" 'any(.servers[]; .sid == $s)' >/dev/null
}

# srv_by_sid SID : the name of the test's server with that SID.
srv_by_sid() {
	local n
	for n in "${!SRV_SID[@]}"; do
		[ "${SRV_SID[$n]}" = "$1" ] && { echo "$n"; return 0; }
	done
	return 1
}

# rack_of SID : the rack attribute the cluster's table gives SID.
rack_of() {
	"$OFS_PBJ" servers --json | jq -r --arg s "$1" '.servers[] | select(.sid == $s) | .attrs.rack'
}

# inspect_json NAME OID : ofs-server inspect --json of OID on NAME's data dir.
inspect_json() { "$OFS_SERVER" inspect --data "$(srv_data "$1")" "$2" --json; }

# ---- four-server clusters named PREFIX{a,b,c,d} (t_scrub, t_repair*, t_drain_kill)

# cluster_with_files PREFIX N SIZEFN STRIPED : a fresh cluster PREFIX{a,b,c,d}
# (racks r1 r1 r2 r3, job store $T/PREFIX.db, OFS_CLUSTER on PREFIXa) with N
# files of random bytes in /f, put through one client: file I, of
# $(SIZEFN I) bytes and kept in $T/PREFIX.srcI, is /f/sI with STRIPED
# ("COPIES STRIPES STRIP_SIZE") when I is a multiple of 4, else /f/pI with
# 3 copies in one stripe.
cluster_with_files() {
	local c=$1 n=$2 sizefn=$3 striped=$4 i
	start_cluster "${c}a:r1" "${c}b:r1" "${c}c:r2" "${c}d:r3"
	export OFS_PBJ_DB=$T/$c.db
	ok ofs mkdir /f
	: >"$T/$c.list"
	for i in $(seq 1 "$n"); do
		mkrand "$T/$c.src$i" "$("$sizefn" "$i")"
		if [ $((i % 4)) = 0 ]; then
			echo "$T/$c.src$i /f/s$i $striped" >>"$T/$c.list"
		else
			echo "$T/$c.src$i /f/p$i 3 1 1048576" >>"$T/$c.list"
		fi
	done
	# (one client for all the puts: a process start per file under the
	# sanitizers would dominate the test)
	"$OFS_ITEST_BIN/putmany" "$OFS_CLUSTER" <"$T/$c.list" || fail "putmany"
}

# stop_cluster PREFIX : stop its four servers (at once).
stop_cluster() { stop_servers "$1a" "$1b" "$1c" "$1d"; }

# all_up PREFIX : each of its four servers sees all four up.
all_up() {
	local c=$1 n
	for n in a b c d; do wait_until 30 "$c$n to see all four up" sees_up "$c$n" 4; done
}

# on_all_copies "SIDS" CMD... : stop the servers of SIDS (all at once),
# run CMD on each with $DATA set to its data dir, start them again where
# they were. (Started one after another: a server asks its peers for the
# server table before it serves, and peers starting together would each
# wait out the others' silence.)
on_all_copies() {
	local sids=$1 s n names=()
	shift
	for s in $sids; do
		n=$(srv_by_sid "$s") || fail "no server with SID $s"
		names+=("$n")
	done
	stop_servers "${names[@]}"
	for n in "${names[@]}"; do
		DATA=$(srv_data "$n") "$@" || fail "$* on $n"
	done
	for n in "${names[@]}"; do restart_same_port "$n"; done
}
