#!/bin/bash
# stall_repro.sh: t_hang with a server whose disk stalls too (not run by
# make check: run-all takes t_*.sh only). b runs with the test build's
# OFS_SERVER_FAULT=stall-syncs: while $T/stall exists its commits wait;
# after 2 s it goes quiet (no gossip, no table, STATS refused:
# OFS_ESTALLED) and is shown down. OPEN: about one run in three, once its
# disk comes back and it catches up, acknowledged replacing puts read
# back as their older versions on every server - a fault of catch-up's
# reconciling of a copy that committed changes late (docs/design.md, "A
# hung server is a down server"). Run it by hand:
#   OFS_BIN=build/san/bin OFS_ITEST_BIN=build/san/itest bash tests/integration/stall_repro.sh
HANG_STALL=1 exec bash "$(dirname "$0")/t_hang.sh" "$@"
