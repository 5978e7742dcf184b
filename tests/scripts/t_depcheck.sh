#!/bin/bash
# t_depcheck: scripts/depcheck passes on the tree and fails on an include
# planted against the folder order: upward (lib including server, store
# including server), between the side-by-side server and client, client
# including store (which it reaches only through the network), and without
# its folder; downward includes (cli including server, server including
# store) pass. Each planted tree is a temp folder of a few files. Exit 0
# when every case behaves, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
dc=$here/scripts/depcheck
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofs-depcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

# plant NAME FILE LINE : a tree NAME with lib/base.h, store/st.h,
# server/s.h, client/c.h and FILE holding LINE.
plant() {
	local t=$tmp/$1
	mkdir -p "$t/lib" "$t/store" "$t/server" "$t/client" "$t/cli"
	echo '/* base */' >"$t/lib/base.h"
	echo '#include "lib/base.h"' >"$t/store/st.h"
	echo '#include "lib/base.h"' >"$t/server/s.h"
	echo '#include "lib/base.h"' >"$t/client/c.h"
	mkdir -p "$(dirname "$t/$2")"
	printf '%s\n' "$3" >>"$t/$2"
	echo "$t"
}

# expect CODE WHAT TREE [PATTERN]
expect() {
	local want=$1 what=$2 tree=$3 pat=${4:-} out rc
	out=$(DEPCHECK_NONE_ALLOWED=1 "$dc" "$tree" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ] || { [ -n "$pat" ] && ! grep -q -- "$pat" <<<"$out"; }; then
		echo "FAIL: $what: exit $rc (wanted $want${pat:+ and '$pat'}): $out"
		fails=1
	else
		echo "ok: $what"
	fi
}

out=$("$dc" "$here" 2>&1) || { echo "FAIL: the tree itself: $out"; fails=1; }
expect 1 "lib including server" "$(plant up lib/up.c '#include "server/s.h"')" \
	'lib/up.c:1: lib may not include server/s.h'
expect 1 "store including server" "$(plant under store/under.c '#include "server/s.h"')" \
	'store/under.c:1: store may not include server/s.h (server is not below store)'
expect 1 "server including client" "$(plant side server/side.c '#include "client/c.h"')" \
	'server/side.c:1: server may not include client/c.h'
expect 1 "client including store" "$(plant apart client/apart.c '#include "store/st.h"')" \
	'client/apart.c:1: client may not include store/st.h (client stays apart from store)'
expect 1 "an include without its folder" "$(plant bare cli/bare.c '#include "s.h"')" \
	'does not name its folder (server/s.h)'
expect 0 "cli including server and lib" "$(plant down cli/down.c '#include "server/s.h"')"
expect 0 "server including store" "$(plant over server/over.c '#include "store/st.h"')"
exit $fails
