# OFS - one non-recursive Makefile (git's is the model).
#
#   make                 programs into bin/
#   make check           install deps, build with ASan+UBSan, the folder
#                        order (depcheck), unit + integration tests, man
#                        page lint, bounded fuzzing, cppcheck
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

LIB_SRCS := lib/error.c lib/ident.c lib/tls.c lib/ca.c lib/cap.c lib/crl.c lib/oid.c lib/wire.c lib/frame.c lib/proto.c \
	lib/checksum.c lib/log.c lib/net.c lib/path.c lib/parse.c lib/timefmt.c \
	lib/conn.c lib/backoff.c lib/placement.c lib/proto_reply.c lib/fdio.c lib/attr_json.c
SERVER_SRCS := server/kv.c server/records.c server/bstream.c server/store.c \
	server/store_object.c server/store_bytes.c server/store_kv.c server/store_stale.c \
	server/store_walk.c server/store_tool.c server/store_incoming.c server/store_inline.c \
	server/service.c server/access.c server/ops.c server/listener.c server/inspect.c \
	server/sidtab.c server/gossip.c server/replica.c server/behind.c server/tool.c \
	server/replaced.c server/removed.c server/changelog.c server/repair.c server/reconcile.c server/recover.c \
	server/taskhost.c server/mailbox.c
BACKREF_SRCS := backref/rules.c backref/points.c
REBALANCER_SRCS := rebalancer/move.c rebalancer/drain.c rebalancer/kinds.c
PBJ_SRCS := $(wildcard pbj/*.c)
SCRUBBER_SRCS := scrubber/scrub.c scrubber/scrub_copies.c scrubber/scrub_structure.c scrubber/scrub_mend.c scrubber/scrub_join.c
CLIENT_SRCS := client/ofs.c client/ofs_io.c client/ofs_repair.c client/ofs_cap.c client/ofs_dcache.c
CORE_SRCS := $(LIB_SRCS) $(SERVER_SRCS) $(BACKREF_SRCS) $(REBALANCER_SRCS) $(CLIENT_SRCS) $(PBJ_SRCS) $(SCRUBBER_SRCS)
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

$(BINDIR)/ofs-server: $(O)/cli/ofs-server.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BINDIR)/ofs: $(O)/cli/ofs.o $(O)/cli/common.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BINDIR)/ofs-pbj: $(O)/cli/ofs-pbj.o $(O)/cli/common.o $(O)/cli/pbj-ca.o $(O)/cli/pbj-jobs.o $(O)/cli/pbj-sched.o $(O)/cli/pbj-servers.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(O)/tests/unit/fake_server.o $(CORE_LIB)
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
	$(MAKE) -j$(NPROC) SANITIZE=address,undefined check-build
	$(MAKE) SANITIZE=address,undefined check-run

check-build: $(PROGS) $(UNIT_BINS) $(ITEST_BINS)

check-run: depcheck check-unit check-integration check-man check-fuzz cppcheck

check-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

check-integration: $(PROGS) $(ITEST_BINS)
	OFS_BIN=$(abspath $(BINDIR)) OFS_ITEST_BIN=$(abspath $(O)/itest) tests/integration/run-all

# The folders include each other in one order, never upward (scripts/depcheck);
# its own test plants upward includes and expects them refused.
depcheck:
	@scripts/depcheck && tests/scripts/t_depcheck.sh

check-man:
	@set -e; for m in $(MANS); do mandoc -Tlint -Wwarning $$m; done; echo "man pages: lint clean"

check-fuzz:
	@if command -v clang >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory fuzz && \
		mkdir -p build/fuzz/work && \
		{ build/fuzz/fuzz_frame -max_total_time=10 -rss_limit_mb=1024 \
			build/fuzz/work tests/fuzz/corpus >build/fuzz/log 2>&1 || \
			{ tail -40 build/fuzz/log; echo "fuzz_frame found a failure"; exit 1; }; } && \
		tail -1 build/fuzz/log && \
		mkdir -p build/fuzz/work_ident && \
		{ build/fuzz/fuzz_ident -max_total_time=5 -rss_limit_mb=1024 \
			build/fuzz/work_ident tests/fuzz/corpus_ident >build/fuzz/log_ident 2>&1 || \
			{ tail -40 build/fuzz/log_ident; echo "fuzz_ident found a failure"; exit 1; }; } && \
		tail -1 build/fuzz/log_ident && \
		mkdir -p build/fuzz/work_cap && \
		{ build/fuzz/fuzz_cap -max_total_time=5 -rss_limit_mb=1024 \
			build/fuzz/work_cap tests/fuzz/corpus_cap >build/fuzz/log_cap 2>&1 || \
			{ tail -40 build/fuzz/log_cap; echo "fuzz_cap found a failure"; exit 1; }; } && \
		tail -1 build/fuzz/log_cap; \
	else echo "clang not found: fuzzing skipped"; fi

FUZZ_SRCS := $(LIB_SRCS)
fuzz: build/fuzz/fuzz_frame build/fuzz/fuzz_ident build/fuzz/fuzz_cap

build/fuzz/fuzz_cap: tests/fuzz/fuzz_cap.c lib/cap.c lib/wire.c lib/oid.c lib/fdio.c lib/parse.c
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -I. -fsanitize=fuzzer,address,undefined -o $@ $^ -lcrypto

build/fuzz/fuzz_ident: tests/fuzz/fuzz_ident.c lib/ident.c lib/oid.c
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -I. -fsanitize=fuzzer,address,undefined -o $@ $^

build/fuzz/fuzz_frame: tests/fuzz/fuzz_frame.c $(FUZZ_SRCS)
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -DOFS_VERSION='"$(VERSION)"' -g -O1 -I. \
		-fsanitize=fuzzer,address,undefined -o $@ $^ -lssl -lcrypto -lxxhash -ljansson

cppcheck:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--std=c11 -I. --suppress=missingIncludeSystem \
		--library=scripts/jansson.cfg --inline-suppr \
		lib server client backref cli rebalancer $(wildcard pbj scrubber)

bench: deps all $(BENCH_BINS)
	OFS_BIN=$(abspath $(BINDIR)) OFS_BENCH_BIN=$(abspath $(O)/bench) bench/run

demo: deps all
	scripts/demo

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/

clean:
	rm -rf build bin demo

.PHONY: all unit deps check check-build check-run check-unit check-integration \
	check-man check-fuzz fuzz cppcheck depcheck bench demo install clean

-include $(CORE_OBJS:.o=.d) $(patsubst %.c,$(O)/%.d,$(wildcard cli/*.c)) \
	$(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%.d) $(O)/tests/unit/fake_server.d \
	$(BENCH_SRCS:%.c=$(O)/%.d) $(ITEST_SRCS:%.c=$(O)/%.d)
