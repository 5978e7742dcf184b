# putwriter.sh - a client that puts files the whole time, and the checks
# on what it wrote, for the availability tests (t_rolling, t_partition).
# Sourced after lib.sh. Settings, before `bg writer`:
#   PW_DIR      the directory written into (it must exist)
#   PW_BIG      1: every fourth put is about 200 KiB (else 1-8 KiB each)
#   PW_PACE     seconds between puts (0: none)
#   PW_TIMEOUT  the bound on one put, seconds
# The writer contacts the addresses in $T/addrs (set_addrs), read afresh
# for each put, and records $T/phase (set_phase) with each put. Every
# fifth put replaces a file it wrote before; every put is
# `--replicas 3 --confidence 2`, one `ofs` process each.
#
# $T/writer.log, one line a put:
#   B SEQ NAME SHA256 BYTES PHASE T .  before the put (T: now_ms)
#   E SEQ EXIT MS .                    after it (MS: how long it took);
#                                      stderr in $T/put.SEQ.err
# (the trailing "." marks a whole line: the log is read while written)
PW_DIR=${PW_DIR:-/w} PW_BIG=${PW_BIG:-0} PW_PACE=${PW_PACE:-0} PW_TIMEOUT=${PW_TIMEOUT:-60}

writer() {
	local n=0 name size sha rc t names=()
	while [ ! -e "$T/stop-writer" ]; do
		n=$((n + 1))
		if [ $((n % 5)) = 0 ] && [ ${#names[@]} -gt 0 ]; then
			name=${names[RANDOM % ${#names[@]}]}     # a replacement
		else
			name=$PW_DIR/f$n
		fi
		if [ "$PW_BIG" = 1 ] && [ $((n % 4)) = 0 ]; then
			size=$((200 * 1024 + RANDOM % 4096))
		else
			size=$((1024 + RANDOM % 7168))
		fi
		head -c "$size" /dev/urandom >"$T/w.src"
		sha=$(sha256sum "$T/w.src" | cut -d' ' -f1)
		t=$(now_ms)
		echo "B $n $name $sha $size $(cat "$T/phase") $t ." >>"$T/writer.log"
		OFS_CLUSTER=$(cat "$T/addrs") timeout "$PW_TIMEOUT" "$OFS_CLI" put --replicas 3 --confidence 2 \
			"$T/w.src" "$name" 2>"$T/put.$n.err"
		rc=$?
		echo "E $n $rc $(($(now_ms) - t)) ." >>"$T/writer.log"
		[ -s "$T/put.$n.err" ] || rm -f "$T/put.$n.err"
		if [ "$rc" = 0 ] && [ "$name" = "$PW_DIR/f$n" ]; then names+=("$name"); fi
		[ "$PW_PACE" = 0 ] || sleep "$PW_PACE"
	done
	exit 0
}

# acked_at_least N : N puts acknowledged; $T/why says how many and what
# the put under way (if any) is doing.
acked_at_least() {
	local k
	k=$(acked)
	awk -v k="$k" -v now="$(now_ms)" '
	$1 == "B" && $NF == "." { b[$2] = $0; t[$2] = $7; last = $2 }
	$1 == "E" && $NF == "." { delete b[$2] }
	END {
		printf "%d acknowledged", k
		if (last in b) {
			split(b[last], f, " ")
			printf "; put %s (%s, begun in phase %s) under way for %d ms", last, f[3], f[6], now - t[last]
		}
	}' "$T/writer.log" >"$T/why"
	[ "$k" -ge "$1" ]
}

# put_stats PHASE : "N puts, K acknowledged, R refused, X killed (by the
# writer's timeout), slowest MS ms, median MS ms" for the puts that ended,
# of those begun during PHASE (all when empty).
put_stats() {
	awk -v want="$1" '
	$1 == "B" && $NF == "." { ph[$2] = $6 }
	$1 == "E" && $NF == "." && (want == "" || ph[$2] == want) { print $3, $4 }' "$T/writer.log" |
		sort -k2n | awk '
		{ n++; if ($1 == 0) ok++; else if ($1 == 124 || $1 == 137) killed++; else bad++; ms[n] = $2 }
		END {
			printf "%d puts, %d acknowledged, %d refused, %d killed, slowest %d ms, median %d ms",
				n, ok, bad, killed, n ? ms[n] : 0, n ? ms[int((n + 1) / 2)] : 0
		}'
}

# writer_summary : all puts, and the failed ones' messages counted.
writer_summary() {
	printf '%s' "$(put_stats "")"
	if grep -q '^E [0-9]* [1-9][0-9]* [0-9]* \.$' "$T/writer.log"; then
		printf '; failed puts by phase, exit status and message (count, text): %s' "$(
			awk '$1 == "B" && $NF == "." { ph[$2] = $6 }
			$1 == "E" && $NF == "." && $3 != 0 { print $2, ph[$2], $3 }' "$T/writer.log" |
			while read -r s p rc; do
				printf '[%s exit %s] %s\n' "$p" "$rc" "$(head -c 300 "$T/put.$s.err" 2>/dev/null | tr '\n' ' ')"
			done | sed "s|$PW_DIR/f[0-9]*|$PW_DIR/fN|g" | sort | uniq -c | sort -rn | head -n 6 | tr -s ' \n' ' ')"
	fi
}

# expected LOG : for each name acknowledged in LOG, "NAME SHA SEQ": the
# content (and put) of its last acknowledged version.
expected() {
	awk '
	$1 == "B" && $NF == "." { nm[$2] = $3; sh[$2] = $4 }
	$1 == "E" && $NF == "." && $3 == 0 { last[nm[$2]] = sh[$2]; seq[nm[$2]] = $2 }
	END { for (n in last) print n, last[n], seq[n] }' "$1" | sort
}

# version_of NAME SHA : the puts of NAME with that content, "SEQ STATE"
# a line (STATE: acked, refused:EXIT, killed - by the writer's timeout,
# its outcome unknown - or running), from the log as it is now.
version_of() {
	awk -v n="$1" -v s="$2" '
	$1 == "B" && $NF == "." && $3 == n && $4 == s { want[$2] = 1; order[++k] = $2 }
	$1 == "E" && $NF == "." && ($2 in want) {
		st[$2] = ($3 == 0) ? "acked" : ($3 == 124 || $3 == 137) ? "killed" : "refused:" $3
	}
	END { for (i = 1; i <= k; i++) print order[i], (order[i] in st) ? st[order[i]] : "running" }' "$T/writer.log"
}

# check_all WHEN SERVER : every file acknowledged so far reads back through
# SERVER as its last acknowledged version. A newer version of the name is
# accepted too when that put was acknowledged or is still running (the
# writer goes on while the check runs) or was killed by the writer's
# timeout (like a client that died: its outcome is unknown); an older or a
# refused one is not.
check_all() {
	local when=$1 via=$2 name sha seq rc got n=0 newer=0 bad=() v slow=0 t0
	t0=$(now_ms)
	cp "$T/writer.log" "$T/snap.log"
	expected "$T/snap.log" >"$T/exp"
	: >"$T/got"
	cut -d' ' -f1 "$T/exp" | readmany "$(srv_addr "$via")" >"$T/got" ||
		fail "$when: the files could not be read back through $via"
	declare -A GOT_RC=() GOT=()
	while read -r name rc got ms; do
		GOT_RC[$name]=$rc
		GOT[$name]=$got
		[ "$rc" != 0 ] || [ "$ms" -le "$slow" ] || slow=$ms
	done <"$T/got"
	while read -r name sha seq; do
		n=$((n + 1))
		rc=${GOT_RC[$name]:-none}
		got=${GOT[$name]:-}
		if [ "$rc" != 0 ]; then
			bad+=("get $name exited $rc (expected its put $seq, sha ${sha:0:12}): $(grep "^$name " "$T/got" | cut -d' ' -f3- | head -c 300)")
		elif [ "$got" != "$sha" ]; then
			v=$(version_of "$name" "$got")
			if [ -n "$v" ] && [ "${v%% *}" -gt "$seq" ] && [[ "${v#* }" =~ ^(acked|running|killed)$ ]]; then
				newer=$((newer + 1))
			else
				bad+=("$name read back as ${got:0:12} (${v:-no version put}), expected its last acknowledged put $seq, ${sha:0:12}")
			fi
		fi
	done <"$T/exp"
	say "read back $n files through $via $when in $(($(now_ms) - t0)) ms, slowest get $slow ms ($newer replaced meanwhile, ${#bad[@]} wrong)"
	[ "${#bad[@]}" = 0 ] ||
		fail "$when: ${#bad[@]} of $n acknowledged files did not read back through $via: $(printf '%s; ' "${bad[@]:0:5}")writer: $(writer_summary)"
}
