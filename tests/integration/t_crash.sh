#!/bin/bash
# t_crash: SIGKILL loses no acknowledged write. A stream of puts (small and
# medium files to new paths, and every fifth put replacing one file over
# and over) runs against the server; once at least 20 have been
# acknowledged (`ofs put` exited 0) the server is killed with SIGKILL
# mid-stream and restarted on the same data dir. Every acknowledged file
# reads back whole and identical to its last acknowledged version (or to a
# later put that was cut short - whole, never a mix); a put that was not
# acknowledged left nothing or the whole file; and the server keeps
# serving. Three rounds, each checking the files of every earlier round.
OFS_ITEST_REAL_SYNC=1      # (about durability: its servers sync for real)
. "$(dirname "$0")/lib.sh"

ROUNDS=3
MIN_ACKED=20
KiB=1024 MiB=$((1024 * 1024))

start_server a
: >"$T/log.all"

# writer ROUND : put until $T/stop.ROUND exists. Put I goes to /rROUND/fI,
# or, when I is a multiple of 5, replaces /rROUND/o. Each put is logged in
# order to log.ROUND as "PATH LOCAL ok" (ofs put exited 0) or "... fail".
writer() {
	local r=$1 i=0 src size path
	while [ ! -e "$T/stop.$r" ] && [ $i -lt 2000 ]; do
		i=$((i + 1))
		src=$T/src/r$r.f$i
		if [ $((i % 4)) -eq 0 ]; then
			size=$((MiB + RANDOM * 64))             # medium: 1..3 MiB
		else
			size=$((1 + RANDOM % (64 * KiB)))       # small: up to 64 KiB
		fi
		head -c "$size" /dev/urandom >"$src"
		path=/r$r/f$i
		[ $((i % 5)) -eq 0 ] && path=/r$r/o
		if "$OFS_CLI" put "$src" "$path" 2>>"$T/writer.$r.err"; then
			echo "$path $src ok" >>"$T/log.$r"
		else
			echo "$path $src fail" >>"$T/log.$r"
		fi
	done
}

acked_at_least() { [ "$(grep -c ' ok$' "$T/log.$1")" -ge "$2" ]; }

# expectations LOG : per path, "PATH must|may SRC..." - the versions it may
# hold: its last acknowledged one and any put attempted after that (which
# may or may not have landed); "must" when some put of it was acknowledged.
expectations() {
	awk '{
		if (!($1 in allowed)) order[n++] = $1
		if ($3 == "ok") { allowed[$1] = $2; must[$1] = 1 }
		else allowed[$1] = allowed[$1] " " $2
	} END {
		for (i = 0; i < n; i++) {
			p = order[i]
			print p, (must[p] ? "must" : "may"), allowed[p]
		}
	}' "$1"
}

# check_all LOG : every path holds one whole allowed version.
check_all() {
	local path kind srcs src matched
	expectations "$1" >"$T/expect"
	while read -r path kind srcs; do
		rm -f "$T/got"
		if ! ofs get "$path" "$T/got" 2>"$T/last.err"; then
			if [ "$kind" = may ]; then
				# Not there is fine; listed but unreadable is not.
				ofs ls "${path%/*}" | sed 's#/$##' | grep -qx "${path##*/}" &&
					fail "$path is listed but cannot be read: $(cat "$T/last.err")"
				continue
			fi
			fail "acknowledged $path lost after SIGKILL: $(cat "$T/last.err")"
		fi
		matched=
		for src in $srcs; do
			cmp -s "$src" "$T/got" && { matched=$src; break; }
		done
		[ -n "$matched" ] || fail "$path after SIGKILL ($(stat -c %s "$T/got") bytes) is none of the versions put ($kind: $(for s in $srcs; do stat -c %s "$s"; done | tr '\n' ' ')bytes)"
		[ "$kind" = may ] && log "unacknowledged put of $path made it whole"
	done <"$T/expect"
}

mkdir -p "$T/src"
for r in $(seq 1 $ROUNDS); do
	ok ofs mkdir "/r$r"
	: >"$T/log.$r"
	bg writer "$r"
	wpid=$BG
	wait_until 180 "$MIN_ACKED acknowledged puts in round $r" acked_at_least "$r" "$MIN_ACKED"
	kill_server a
	touch "$T/stop.$r"
	wait_pid "$wpid" 120
	[ "$REAP_ST" != timeout ] || fail "round $r: the writer did not stop within 120s of the server's death"
	log "round $r: killed the server after $(grep -c ' ok$' "$T/log.$r") acknowledged puts ($(grep -c '/o .* ok$' "$T/log.$r") replacing /r$r/o)"

	restart_server a

	# Every file of this round and the earlier ones holds a whole version
	# it may hold.
	cat "$T/log.$r" >>"$T/log.all"
	check_all "$T/log.all"

	# Every name in the directory is one the writer put; every
	# acknowledged one is there.
	ofs ls "/r$r" >"$T/ls" 2>"$T/last.err" || fail "ofs ls /r$r: $(cat "$T/last.err")"
	while read -r name; do
		grep -q "^/r$r/$name " "$T/log.$r" || fail "round $r: ls lists '$name', which no put created"
	done <"$T/ls"
	grep ' ok$' "$T/log.$r" | while read -r path _; do
		grep -qx "${path##*/}" "$T/ls" || { echo "$path"; break; }
	done >"$T/missing"
	[ ! -s "$T/missing" ] || fail "round $r: ls /r$r does not list acknowledged $(cat "$T/missing")"

	# The server keeps serving: a new file, a new directory, a listing.
	mkrand "$T/after.$r" $((200 * KiB + r))
	ok ofs put "$T/after.$r" "/after$r"
	ok ofs get "/after$r" "$T/after.$r.got"
	assert_same_file "$T/after.$r" "$T/after.$r.got" "put after restart $r"
	ok ofs mkdir "/after$r.d"
	ok ofs ls /
done

stop_server a
exit 0
