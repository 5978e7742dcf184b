#!/bin/bash
# t_systemd: the systemd units of contrib/systemd are what `make
# install-units` installs, with the programs' folder in place of @BINDIR@,
# and `systemd-analyze verify` passes on them (their ExecStart pointed at
# the programs this tree built). Exit 0 when every case behaves, 1
# otherwise.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofs-systemd.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "t_systemd: $*"; fails=$((fails + 1)); }

make -s -C "$here" install-units DESTDIR="$tmp/root" PREFIX=/usr/local >"$tmp/out" 2>&1 ||
	bad "make install-units failed: $(cat "$tmp/out")"
units=$tmp/root/usr/local/lib/systemd/system
for u in ofs-server@.service ofs-pbj-serve.service; do
	[ -f "$units/$u" ] || { bad "make install-units did not install $u"; continue; }
	grep -q '@BINDIR@' "$units/$u" && bad "$u still says @BINDIR@"
	grep -q '^ExecStart=/usr/local/bin/ofs-' "$units/$u" || bad "$u: ExecStart is not in /usr/local/bin"
	[ "$(stat -c %a "$units/$u")" = 644 ] || bad "$u: mode $(stat -c %a "$units/$u"), expected 644"
	grep -q '^ProtectSystem=strict' "$units/$u" || bad "$u: not ProtectSystem=strict"
	grep -q '^NoNewPrivileges=yes' "$units/$u" || bad "$u: not NoNewPrivileges=yes"
	grep -q '^PrivateTmp=yes' "$units/$u" || bad "$u: not PrivateTmp=yes"
done

# systemd-analyze verify checks each directive and that ExecStart runs:
# point it at the programs built here.
bin=${OFS_BIN:-}
for b in "$here/build/san/bin" "$here/bin"; do
	[ -z "$bin" ] && [ -x "$b/ofs-server" ] && bin=$b
done
if [ -z "$bin" ]; then
	bad "no built ofs-server to point the units at (build first)"
elif ! command -v systemd-analyze >/dev/null; then
	bad "systemd-analyze is missing (scripts/install-deps installs systemd)"
else
	mkdir -p "$tmp/v"
	sed "s|@BINDIR@|$bin|g" "$here/contrib/systemd/ofs-server@.service.in" >"$tmp/v/ofs-server@s1.service"
	sed "s|@BINDIR@|$bin|g" "$here/contrib/systemd/ofs-pbj-serve.service.in" >"$tmp/v/ofs-pbj-serve.service"
	systemd-analyze verify --man=no "$tmp/v/ofs-server@s1.service" "$tmp/v/ofs-pbj-serve.service" \
		>"$tmp/out" 2>&1 || bad "systemd-analyze verify: $(cat "$tmp/out")"
	# (and it does find a fault: a unit whose program is not there)
	sed "s|@BINDIR@|$tmp/nowhere|g" "$here/contrib/systemd/ofs-pbj-serve.service.in" \
		>"$tmp/v/ofs-pbj-serve.service"
	systemd-analyze verify --man=no "$tmp/v/ofs-pbj-serve.service" >/dev/null 2>&1 &&
		bad "systemd-analyze verify passed a unit whose ExecStart is missing"
fi
[ "$fails" -eq 0 ]
