# repair_lib.sh - helpers of the repair tests (t_repair, t_repair_structure):
# sourced after lib.sh.
# (orphans are moved at once here, the default grace being 10 minutes; the
# clusters are quiet while a job runs, so a suspect finding's second look
# comes after 100 ms, not the default second)
export EXTRA_RUN_ARGS="--orphan-grace 0 --settle-ms 100"

KiB=1024 MiB=$((1024 * 1024))
NFILES=${OFS_REPAIR_FILES:-24}

# cluster N : a fresh four-server cluster under $T/cN with files on it.
repair_size() { if [ $(($1 % 4)) = 0 ]; then echo $((MiB + $1 * 1000)); else echo $(($1 * 3 * KiB + 1)); fi; }
cluster() {
	cluster_with_files "$1" "$NFILES" repair_size "3 3 262144"
	CUR=$1
}


# read_back < LINES : for each line "SRC DST ..." the cluster's DST must
# read back (through $OFS_CLUSTER) byte for byte as the local file SRC.
# One client gets them all (getmany): a process start per file under the
# sanitizers costs more than the get.
read_back() {
	local d src dst _rest i res path code _ms msg srcs=() dsts=()
	while read -r src dst _rest; do
		srcs+=("$src")
		dsts+=("$dst")
	done
	[ ${#dsts[@]} -gt 0 ] || return 0
	d=$(mktemp -d "$T/rb.XXXXXX") || fail "cannot make a folder under $T"
	printf '%s\n' "${dsts[@]}" |
		timeout 300 "$OFS_ITEST_BIN/getmany" "$OFS_CLUSTER" "$d" >"$d/out" 2>"$d/err" ||
		fail "getmany through $OFS_CLUSTER failed: $(head -c 300 "$d/err")"
	mapfile -t res <"$d/out"
	for i in "${!dsts[@]}"; do
		read -r path code _ms msg <<<"${res[$i]:-}"
		[ "$path" = "${dsts[$i]}" ] && [ "$code" = 0 ] ||
			fail "get ${dsts[$i]}: '${res[$i]:-no answer}', expected it read"
		assert_same_file "${srcs[$i]}" "$d/$((i + 1))" "${dsts[$i]} read back"
	done
	rm -rf "$d"
}

# every file reads back with its original digest
all_read_back() { read_back <"$T/$CUR.list"; }

# run EXPECTED_EXIT ARGS... : a job to its end; $JOB, status.json, report.json
run() {
	local want=$1
	shift
	assert_exit "$want" ofs_pbj submit "$@" --wait --json
	# (one jq: exactly one JSON document, and its job id)
	JOB=$(jq -rs 'if length == 1 then .[0].id else empty end' "$T/last.out" 2>/dev/null)
	[[ "$JOB" =~ ^[0-9]+$ ]] || fail "not one JSON document with a job id: $(head -c 400 "$T/last.out")"
	cp "$T/last.out" "$T/status.json"
	ok ofs_pbj report "$JOB" --json
	assert_json "$T/last.out"
	cp "$T/last.out" "$T/report.json"
}

clean_scrub() {
	run 0 scrub --no-repair
	assert_eq 0 "$(json "$T/report.json" '.findings | length')" "findings after the repair ($(cat "$T/report.json"))"
}

# pick_copy PATH [N] : the first dfile of PATH, its copy number N (default
# 1, the second). Sets DF, VSID, VICTIM, VPATH (its byte stream; empty for
# a copy held inline: damage_copy), SIDS (all copies).
pick_copy() {
	local path=$1 n=${2:-1} j
	j=$(ofs stat --json "$path") || fail "stat $path"
	DF=$(jq -r '.dfiles[0].oid' <<<"$j")
	SIDS=$(jq -r '.dfiles[0].sids[]' <<<"$j")
	VSID=$(jq -r ".dfiles[0].sids[$n]" <<<"$j")
	VICTIM=$(srv_by_sid "$VSID") || fail "no server with SID $VSID"
	VPATH=$(inspect_json "$VICTIM" "$DF" | jq -r .path)
	[ "$VPATH" != null ] || VPATH=
	[ -z "$VPATH" ] || [ -f "$VPATH" ] || fail "no byte stream at $VPATH"
}

flip() { invert_byte "$1" "${2:-5000}"; }

# repaired_finding KIND : one finding, of KIND, on the damaged copy,
# repaired from one of the other copies.
repaired_finding() {
	assert_eq 1 "$(json "$T/report.json" '.findings | length')" "number of findings ($(cat "$T/report.json"))"
	assert_eq "$1" "$(json "$T/report.json" '.findings[0].kind')" "finding kind"
	assert_eq "$VSID" "$(json "$T/report.json" '.findings[0].server')" "finding server"
	assert_eq "$DF" "$(json "$T/report.json" '.findings[0].oid')" "finding oid"
	assert_eq true "$(json "$T/report.json" '.findings[0].repaired')" "finding repaired"
	assert_eq repaired "$(json "$T/report.json" '.findings[0].repair_state')" "repair_state"
	src=$(json "$T/report.json" '.findings[0].source')
	[ "$src" != "$VSID" ] && grep -qx "$src" <<<"$SIDS" ||
		fail "repaired from $src, not another copy of $DF ($SIDS)"
	assert_eq 1 "$(json "$T/status.json" .findings.repaired)" "status findings.repaired"
}

# the files of the list except those named
read_back_except() { read_back < <(awk -v skip=" $* " 'index(skip, " " $2 " ") == 0' "$T/$CUR.list"); }
