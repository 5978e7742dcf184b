#!/bin/bash
# t_suspect: suspects first (server/suspect.h). A byte flipped in the
# first copy of a file's dfile; a client reads the file: it reads past the
# bad copy to a good one and tells that server (REPORT), which asks the
# bad copy's server to verify and mend it at once - no job submitted.
# Then the bad copy is good again (a scrub of the file finds nothing),
# the log says so, and the copy thrown away is in quarantine. A second
# read, clean now, asks nothing. (What a REPORT may queue is
# test_suspect's.)
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
start_cluster a b c
export OFS_PBJ_DB=$T/pbj.db
mkrand "$T/f" $((2 * MiB + 77))
ok ofs put --replicas 3 "$T/f" /f
ofs stat --json /f >"$T/f.json" || fail "stat /f"
DF=$(jq -r '.dfiles[0].oid' "$T/f.json")
BAD=$(jq -r '.dfiles[0].sids[0]' "$T/f.json")     # (read first)
N=$(srv_by_sid "$BAD")
say "flip a byte of $DF's copy on $N, the first a reader tries"
damage_copy "$N" "$DF" flip 100000
t0=$(now_ms)
ok ofs get /f "$T/g"
assert_same_file "$T/f" "$T/g" "the file read past the bad copy"

mended() { grep -h "suspect: copy of $DF on $BAD" "$T"/[abc].log | grep -q 'fetched version'; }
await 30 "the bad copy to be mended (no job submitted)" mended
say "mended $(($(now_ms) - t0)) ms after the read began"
assert_eq 0 "$(ofs_pbj list --json 2>/dev/null | jq '.jobs | length' || echo 0)" "jobs submitted"
ok ofs_pbj submit scrub --path /f --wait --json
assert_eq 0 "$(jq .findings.total "$T/last.out")" "findings of a scrub of /f after the read"
ls "$(srv_data "$N")/quarantine/" | grep -q "^$DF\." ||
	fail "the bad copy is not in $N's quarantine: $(ls "$(srv_data "$N")/quarantine/")"

say "a second read, clean now, asks nothing"
ok ofs get /f "$T/g2"
assert_same_file "$T/f" "$T/g2" "the file read again"
n=$(grep -h "suspect: copy of $DF" "$T"/[abc].log | wc -l)
assert_eq 1 "$n" "suspect lines after a second, clean read"
finish
