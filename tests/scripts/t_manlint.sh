#!/bin/bash
# t_manlint: the man-page checks of `make check-man` fail on what they
# are for and pass otherwise: scripts/man-flags on a word an Fl macro
# swallows (".Fl -x , else" renders "-else"); scripts/help-vs-man on a
# flag only the page names, a flag or a command only --help shows. Exit 0
# when every case behaves, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofs-manlint.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect CODE WHAT CMD... : CMD exits CODE.
expect() {
	local want=$1 what=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "t_manlint: $what: exit $rc, expected $want: $(cat "$tmp/out")"
		fails=$((fails + 1))
	fi
}

printf '.Dd x\n.Dt T 8\n.Os\n.Sh NAME\n.Pq on stdout with Fl -x , else on stderr\n' >"$tmp/bad.8"
printf '.Dd x\n.Dt T 8\n.Os\n.Sh NAME\n.Pq on stdout with Fl -x , No else on stderr\n' >"$tmp/good.8"
expect 1 "man-flags on a swallowed word" "$here/scripts/man-flags" "$tmp/bad.8"
grep -q "'else'" "$tmp/out" || { echo "t_manlint: man-flags does not name 'else'"; fails=$((fails + 1)); }
expect 0 "man-flags on a flag ended by No" "$here/scripts/man-flags" "$tmp/good.8"

# fake [EXTRA] : a program whose --help shows "run [--alpha]" and EXTRA.
fake() {
	printf '#!/bin/sh\necho "usage: fake run [--alpha] %s"\n' "${1:-}" >"$tmp/fake"
	chmod +x "$tmp/fake"
}
page() {   # page EXTRA-LINE : a page whose synopsis is run [--alpha] and EXTRA-LINE
	printf '.Dd x\n.Dt FAKE 8\n.Os\n.Sh NAME\n.Nm fake\n.Sh SYNOPSIS\n.Nm\n.Cm run\n.Op Fl -alpha\n%s\n' \
		"${1:-}" >"$tmp/fake.8"
}
fake; page
expect 0 "help-vs-man on agreeing help and page" "$here/scripts/help-vs-man" "$tmp/fake" "$tmp/fake.8"
fake; page ".Op Fl -beta"
expect 1 "help-vs-man on a flag only the page names" "$here/scripts/help-vs-man" "$tmp/fake" "$tmp/fake.8"
fake "[--gamma]"; page
expect 1 "help-vs-man on a flag only --help shows" "$here/scripts/help-vs-man" "$tmp/fake" "$tmp/fake.8"
printf '#!/bin/sh\nprintf "usage: fake run [--alpha]\\n       fake zap\\n"\n' >"$tmp/fake"
page
expect 1 "help-vs-man on a command only --help shows" "$here/scripts/help-vs-man" "$tmp/fake" "$tmp/fake.8"
[ "$fails" -eq 0 ]
