# OFS - one non-recursive Makefile (git's is the model).
#
#   make                 programs into bin/
#   make check           install deps, build with ASan+UBSan, the folder
#                        order (depcheck), unit + integration tests, man
#                        page lint, bounded fuzzing, cppcheck; its last
#                        line "N passed, M failed" counts the tests
#   make fuzz-long       every fuzz target FUZZ_SECONDS (600) each, one at a time
#   make fuzz-seeds      rewrite the on-disk decoders' seed corpora
#   make bench           benchmarks (figures as ratios to same-run baselines)
#   make demo            a local cluster under ./demo/ showing what OFS does
#   make install PREFIX=/usr/local
#   make RELEASE=1       programs without the test hooks, into build/release/bin
#   make clean
#
# Objects go under build/<flavour>/ so objects built with different flags
# never mix; SANITIZE=address,undefined selects build/san, RELEASE=1
# build/release.

.DELETE_ON_ERROR:
.SUFFIXES:

CC ?= cc
NPROC := $(shell nproc 2>/dev/null || echo 1)
PREFIX ?= /usr/local
VERSION := 0.1.0

ifdef SANITIZE
O ?= build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
BINDIR ?= $(O)/bin
else ifdef RELEASE
O ?= build/release
SANFLAGS :=
BINDIR ?= $(O)/bin
else
O ?= build/normal
SANFLAGS :=
BINDIR ?= bin
endif
# RELEASE=1 leaves out the test hooks (OFS_FAULT, OFS_SERVER_FAULT, OFS_PBJ_CRON_UNIT_S,
# OFS_PBJ_MAX_RETRIES: environment the tests and the demo set).
HOOKFLAGS := $(if $(RELEASE),-DOFS_NO_TEST_HOOKS,)

WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -DOFS_VERSION='"$(VERSION)"' $(HOOKFLAGS) $(WARN) \
	$(CFLAGS) $(SANFLAGS) -pthread -I. -MMD -MP
LDLIBS := -lssl -lcrypto -llmdb -lxxhash -ljansson -lsqlite3 -lpthread -lm
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS) -pthread

LIB_SRCS := lib/error.c lib/optable.c lib/ident.c lib/tls.c lib/ca.c lib/cap.c lib/crl.c lib/oid.c lib/wire.c lib/frame.c lib/proto.c \
	lib/checksum.c lib/log.c lib/net.c lib/path.c lib/parse.c lib/timefmt.c \
	lib/conn.c lib/backoff.c lib/placement.c lib/proto_reply.c lib/proto_check.c lib/fdio.c lib/attr_json.c
STORE_SRCS := store/kv.c store/records.c store/bstream.c store/store.c \
	store/store_object.c store/store_bytes.c store/store_kv.c store/store_stale.c \
	store/store_walk.c store/store_tool.c store/store_incoming.c store/store_inline.c \
	store/inspect.c store/replaced.c store/removed.c store/changelog.c
SERVER_SRCS := server/service.c server/access.c server/ops.c server/listener.c \
	server/sidtab.c server/gossip.c server/replica.c server/behind.c server/tool.c \
	server/repair.c server/reconcile.c server/recover.c server/suspect.c \
	server/taskhost.c server/mailbox.c server/stopping.c server/server.c
BACKREF_SRCS := backref/rules.c backref/points.c
REBALANCER_SRCS := rebalancer/move.c rebalancer/drain.c rebalancer/kinds.c
PBJ_SRCS := $(wildcard pbj/*.c)
SCRUBBER_SRCS := scrubber/scrub.c scrubber/scrub_copies.c scrubber/scrub_structure.c scrubber/scrub_mend.c scrubber/scrub_join.c
CLIENT_SRCS := client/ofs.c client/ofs_resolve.c client/ofs_client.c client/ofs_namespace.c client/ofs_io.c \
	client/ofs_repair.c client/ofs_cap.c client/ofs_dcache.c
CORE_SRCS := $(LIB_SRCS) $(STORE_SRCS) $(SERVER_SRCS) $(BACKREF_SRCS) $(REBALANCER_SRCS) $(CLIENT_SRCS) $(PBJ_SRCS) $(SCRUBBER_SRCS)
CORE_OBJS := $(CORE_SRCS:%.c=$(O)/%.o)
CORE_LIB := $(O)/libofscore.a

PROGS := $(BINDIR)/ofs-server $(BINDIR)/ofs $(BINDIR)/ofs-pbj
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)
MANS := man/ofs.1 man/ofs-server.8 man/ofs-pbj.8
# Helper programs of the benchmarks and integration tests (one .c each,
# linked with the core library).
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(O)/bench/%)
ITEST_SRCS := $(wildcard tests/integration/*.c)
ITEST_BINS := $(ITEST_SRCS:tests/integration/%.c=$(O)/itest/%)

all: $(PROGS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BINDIR)/ofs-server: $(O)/cli/ofs-server.o $(O)/cli/common.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BINDIR)/ofs: $(O)/cli/ofs.o $(O)/cli/common.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BINDIR)/ofs-pbj: $(O)/cli/ofs-pbj.o $(O)/cli/common.o $(O)/cli/pbj-ca.o $(O)/cli/pbj-jobs.o $(O)/cli/pbj-sched.o $(O)/cli/pbj-servers.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(O)/tests/unit/fake_server.o $(O)/tests/unit/tmpstore.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# (the programs' common words live in cli/, outside the core library)
$(O)/tests/test_cli_common: $(O)/tests/unit/test_cli_common.o $(O)/cli/common.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

$(O)/bench/%: $(O)/bench/%.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/itest/%: $(O)/tests/integration/%.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

unit: $(UNIT_BINS)

# ---- tests -----------------------------------------------------------

deps:
	@scripts/install-deps

check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) SANITIZE=address,undefined check-build || \
		{ echo "0 passed, 1 failed (the build)"; exit 1; }
	@$(MAKE) --no-print-directory SANITIZE=address,undefined check-run

check-build: $(PROGS) $(UNIT_BINS) $(ITEST_BINS)

# check-run runs every step, whatever fails, and ends with one line CI can
# count, "N passed, M failed" (scripts/check-summary): each unit test
# program, integration test and script test writes PASS or FAIL under
# $(TALLY); a step that failed with no test of its own failed (the man
# page lint, the fuzzing, cppcheck, depcheck on the tree) counts as one
# failed more. It fails when anything failed.
TALLY := $(O)/tally
CHECK_STEPS := depcheck check-unit check-integration check-man check-fuzz cppcheck

check-run:
	@rm -rf $(TALLY); failed=""; \
	for step in $(CHECK_STEPS); do \
		$(MAKE) --no-print-directory $$step || failed="$$failed $$step"; \
	done; \
	scripts/check-summary $(TALLY) $$failed

# run_tests GROUP PROGRAM... : run each (all of them, whatever fails),
# "PASS PROGRAM" or "FAIL PROGRAM" into $(TALLY)/GROUP; fails if any failed.
run_tests = mkdir -p $(TALLY) && : >$(TALLY)/$(1) && rc=0; \
	for t in $(2); do \
		echo "== $$t"; \
		if $$t; then echo "PASS $$t" >>$(TALLY)/$(1); \
		else echo "FAIL $$t" >>$(TALLY)/$(1); echo "FAIL $$t"; rc=1; fi; \
	done; exit $$rc

check-unit: $(UNIT_BINS)
	@$(call run_tests,unit,$(UNIT_BINS))

check-integration: $(PROGS) $(ITEST_BINS)
	@mkdir -p $(TALLY)
	OFS_BIN=$(abspath $(BINDIR)) OFS_ITEST_BIN=$(abspath $(O)/itest) \
		OFS_ITEST_TALLY=$(abspath $(TALLY))/integration tests/integration/run-all

# The folders include each other in one order, never upward (scripts/depcheck);
# its own test, tests/scripts/t_depcheck.sh, plants upward includes and
# expects them refused. depcheck runs every script test (tests/scripts/t_*.sh).
SCRIPT_TESTS := $(wildcard tests/scripts/t_*.sh)
depcheck:
	@scripts/depcheck
	@$(call run_tests,scripts,$(SCRIPT_TESTS))

# The man pages: mandoc's lint; no word an Fl macro swallows as a flag
# (scripts/man-flags); each program's --help and its page name the same
# commands and flags (scripts/help-vs-man).
check-man: $(PROGS)
	@set -e; for m in $(MANS); do mandoc -Tlint -Wwarning $$m; done; \
	scripts/man-flags $(MANS); \
	scripts/help-vs-man $(BINDIR)/ofs man/ofs.1; \
	scripts/help-vs-man $(BINDIR)/ofs-pbj man/ofs-pbj.8; \
	scripts/help-vs-man $(BINDIR)/ofs-server man/ofs-server.8; \
	echo "man pages: lint clean, flags whole, --help and pages agree"

# Each fuzz target runs a few seconds from its seed corpus (tests/fuzz/
# corpus_NAME; fuzz_frame's: corpus) into a scratch corpus under
# build/fuzz; a failure prints the end of its log. fuzz-long runs every
# target FUZZ_SECONDS each, one after another, into build/fuzz-long.
FUZZ_NEW := records changelog names capkeys jobargs casigned
FUZZ_ALL := frame ident cap $(FUZZ_NEW)
FUZZ_SECONDS ?= 600

check-fuzz:
	@if command -v clang >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory fuzz && \
		run() { mkdir -p build/fuzz/work_$$1 && \
			{ build/fuzz/fuzz_$$1 -max_total_time=$$2 -rss_limit_mb=1024 \
				-artifact_prefix=build/fuzz/$$1- build/fuzz/work_$$1 $$3 \
				>build/fuzz/log_$$1 2>&1 || \
			{ tail -40 build/fuzz/log_$$1; echo "fuzz_$$1 found a failure"; return 1; }; } && \
			tail -1 build/fuzz/log_$$1; } && \
		run frame 10 tests/fuzz/corpus && \
		run ident 5 tests/fuzz/corpus_ident && \
		run cap 5 tests/fuzz/corpus_cap && \
		for t in $(FUZZ_NEW); do run $$t 5 tests/fuzz/corpus_$$t || exit 1; done; \
	else echo "clang not found: fuzzing skipped"; fi

fuzz-long: fuzz
	tests/fuzz/run-long $(FUZZ_SECONDS) build/fuzz-long $(FUZZ_ALL)

# The fuzz targets link the sources they test, compiled once with
# coverage for libFuzzer, from one archive (so each takes only what it
# calls); make-seeds, with the same sanitizers and no libFuzzer, writes
# the seed corpora of the on-disk decoders from their encoders.
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -DOFS_VERSION='"$(VERSION)"' -g -O1 -I. \
	-Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
FUZZ_SRCS := $(LIB_SRCS) store/records.c store/changelog.c store/kv.c store/bstream.c \
	pbj/jobargs.c
FUZZ_OBJS := $(FUZZ_SRCS:%.c=build/fuzz/obj/%.o)
FUZZ_LIBS := -lssl -lcrypto -lxxhash -ljansson -llmdb -lpthread
FUZZ_BINS := $(FUZZ_ALL:%=build/fuzz/fuzz_%)

fuzz: $(FUZZ_BINS) build/fuzz/make-seeds
.SECONDARY: $(FUZZ_ALL:%=build/fuzz/obj/tests/fuzz/fuzz_%.o)

fuzz-seeds: build/fuzz/make-seeds
	build/fuzz/make-seeds tests/fuzz

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<

build/fuzz/libfuzzcore.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^

build/fuzz/fuzz_%: build/fuzz/obj/tests/fuzz/fuzz_%.o build/fuzz/libfuzzcore.a
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(FUZZ_LIBS)

build/fuzz/make-seeds: build/fuzz/obj/tests/fuzz/make-seeds.o build/fuzz/libfuzzcore.a
	clang -fsanitize=address,undefined -o $@ $^ $(FUZZ_LIBS)

cppcheck:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--std=c11 -I. --suppress=missingIncludeSystem \
		--library=scripts/jansson.cfg --inline-suppr \
		lib store server client backref cli rebalancer $(wildcard pbj scrubber)

bench: deps all $(BENCH_BINS)
	OFS_BIN=$(abspath $(BINDIR)) OFS_BENCH_BIN=$(abspath $(O)/bench) bench/run

# The build's output goes to build/demo-build.log (its end is shown when it
# fails), so the demo's own output is what a reader sees.
demo: deps
	@mkdir -p build; echo "building bin/ (the compiler's output: build/demo-build.log)"; \
	$(MAKE) --no-print-directory all >build/demo-build.log 2>&1 || \
		{ tail -30 build/demo-build.log; echo "demo: the build failed"; exit 1; }
	@scripts/demo

# The systemd units (contrib/systemd/*.in), their @BINDIR@ the installed
# programs' folder, under PREFIX/lib/systemd/system (systemd reads
# /usr/local/lib/systemd/system too). ofs-server(8), "Running under systemd".
UNITS := $(wildcard contrib/systemd/*.service.in)
UNITDIR ?= $(PREFIX)/lib/systemd/system
install-units:
	install -d $(DESTDIR)$(UNITDIR)
	@for u in $(UNITS); do \
		n=$$(basename "$$u" .in); \
		sed 's|@BINDIR@|$(PREFIX)/bin|g' "$$u" >$(DESTDIR)$(UNITDIR)/$$n.tmp && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$n.tmp && \
		mv $(DESTDIR)$(UNITDIR)/$$n.tmp $(DESTDIR)$(UNITDIR)/$$n && \
		echo "installed $(DESTDIR)$(UNITDIR)/$$n"; \
	done

install: all install-units
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/

clean:
	rm -rf build bin demo

.PHONY: install-units all unit deps check check-build check-run check-unit check-integration \
	check-man check-fuzz fuzz fuzz-long fuzz-seeds cppcheck depcheck bench demo install clean

-include $(CORE_OBJS:.o=.d) $(patsubst %.c,$(O)/%.d,$(wildcard cli/*.c)) \
	$(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%.d) $(O)/tests/unit/fake_server.d $(O)/tests/unit/tmpstore.d \
	$(BENCH_SRCS:%.c=$(O)/%.d) $(ITEST_SRCS:%.c=$(O)/%.d) \
	$(wildcard build/fuzz/obj/*/*.d build/fuzz/obj/*/*/*.d)
