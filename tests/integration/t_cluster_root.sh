#!/bin/bash
# t_cluster_root: the namespace root a client makes is taken by every
# server at once, not a gossip round later: a fresh cluster whose first
# server (the one the client made the root through) is killed right after
# the first mkdir still shows that directory through every other server,
# under the same root (before, the others could answer "no root", and the
# next client made a second one, hiding everything).
. "$(dirname "$0")/lib.sh"

for round in 1 2 3; do
	log "round $round: mkdir through the first server, kill it at once"
	start_cluster "k${round}a:r1" "k${round}b:r1" "k${round}c:r2"
	ok ofs mkdir /x
	root=$(ofs stat --json / | jq -r .oid)
	kill_server "k${round}a"
	for n in b c; do
		use_server "k${round}$n"
		ok ofs stat /x
		assert_eq "$root" "$(ofs stat --json / | jq -r .oid)" "the root through k${round}$n"
	done
	for n in b c; do stop_server "k${round}$n"; done
done

finish
