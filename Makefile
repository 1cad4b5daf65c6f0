# SPDX-License-Identifier: BSD-3-Clause
# Drives CMake, the one build truth. `make demo` and `make test` work on a
# fresh Debian machine: both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure
# Tests run two per core: the integration tests mostly wait on their
# redis-servers (at -j2 on 2 cores, `ctest` used 165 s of CPU in 325 s; at -j4,
# 174 s in 160 s). They must pass on a loaded machine, so this is safe too.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))

# hiredis: 1.2 with TLS, built from Debian trixie's source into build-deps/
# (scripts/hiredis.sh, a few seconds, once), unless HIREDIS=system: the
# system's libhiredis-dev (bookworm: 0.14, no TLS).
HIREDIS ?= 1.2
ifeq ($(HIREDIS),system)
HIREDIS_FLAGS :=
else
HIREDIS_PREFIX ?= $(CURDIR)/build-deps/hiredis
HIREDIS_FLAGS := -DEDGELOCK_HIREDIS_PREFIX=$(HIREDIS_PREFIX)
endif

.PHONY: all deps configure test test-unit chaos test-hiredis-system test-asan test-tsan demo clean format format-check arm size trace-path packaging fuzz

all: configure
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@./scripts/bootstrap.sh
ifneq ($(HIREDIS),system)
	@EDGELOCK_EXTRA_PACKAGES="libssl-dev dpkg-dev" ./scripts/bootstrap.sh
	@JOBS=$(JOBS) ./scripts/hiredis.sh $(HIREDIS_PREFIX)
endif

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) $(HIREDIS_FLAGS) $(CMAKE_FLAGS)

test: all
	cd $(BUILD) && ctest $(CTEST_FLAGS) -j$(TEST_JOBS)

test-unit: all
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L unit

# Packaging as distributions do it (docs/PACKAGING.md): the Debian packages
# built, linted, unpacked and used (debhelper and lintian installed here); the
# Buildroot package and the Yocto recipe built for armhf as those systems do.
# DEB_INSTALL=1: also dpkg -i them on this machine, use them, remove them.
DEB_INSTALL ?= 0
packaging: deps
	@EDGELOCK_EXTRA_PACKAGES="debhelper lintian man-db ninja-build $(ARM_PACKAGES)" ./scripts/bootstrap.sh
	EDGELOCK_DEB_INSTALL=$(DEB_INSTALL) bash tests/packaging/test_deb.sh .
	JOBS=$(JOBS) bash tests/packaging/test_recipes.sh .

# The whole suite on the system's hiredis (bookworm's 0.14) in its own build dir.
test-hiredis-system:
	$(MAKE) test HIREDIS=system BUILD=build-hiredis-system

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B build-asan -DEDGELOCK_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug $(HIREDIS_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ctest $(CTEST_FLAGS) -j$(TEST_JOBS)

# The blocking API (threads) under ThreadSanitizer: one test per core, as its
# tests spend their time computing (1000 threads under TSan), not waiting.
test-tsan: deps
	cmake -S . -B build-tsan -DEDGELOCK_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug $(HIREDIS_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-tsan -j$(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp \
		ctest $(CTEST_FLAGS) -L blocking -j$(JOBS)

demo: all
	./scripts/demo.sh $(BUILD)

# Coverage-guided fuzzing (tests/fuzz/: the engine under a hostile server, the
# real link, plain and TLS, and the blocking face's threads under one writing
# any bytes, the parsers, the CLI's input and output) with clang's libFuzzer,
# ASan and UBSan, FUZZ_SECONDS each (default 60); scripts/fuzz.sh says more.
# Not part of `make test`, which replays the saved corpus.
FUZZ_SECONDS ?= 60
fuzz: deps
	JOBS=$(JOBS) FUZZ_SECONDS=$(FUZZ_SECONDS) HIREDIS_FLAGS="$(HIREDIS_FLAGS)" ./scripts/fuzz.sh

# The fault-injection checker (tools/chaos/, docs/RELIABILITY.md): 8 worker
# processes against a lock Redis it starts and faults, about 2 minutes. Not
# part of `make test`, which runs its short form (ctest chaos_short).
# CHAOS_FLAGS="--rounds 3" for a longer run; --help lists the rest.
CHAOS_FLAGS ?=
chaos: all
	$(BUILD)/tools/edgelock_chaos $(CHAOS_FLAGS)

# Cross builds for armhf and aarch64 (MinSizeRel) in build-arm/, the target's
# libevent and OpenSSL taken from Debian's .debs and hiredis 1.2 with TLS built
# for it from the same trixie source as the native one (HIREDIS=system: the
# target's own hiredis .debs, 0.14, no TLS); unit and integration tests run
# under qemu-user. See docs/CROSS.md.
ARM_PACKAGES = g++-arm-linux-gnueabihf g++-aarch64-linux-gnu qemu-user dpkg-dev

arm:
	@EDGELOCK_EXTRA_PACKAGES="$(ARM_PACKAGES)" ./scripts/bootstrap.sh
	JOBS=$(JOBS) TEST_JOBS=$(TEST_JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" ARM_HIREDIS=$(HIREDIS) ./scripts/arm.sh

# Footprint per ARM target: .text/.data/.bss of libedgelock.a and of a
# statically linked example, table bytes per configured slot. docs/FOOTPRINT.md.
size:
	@EDGELOCK_EXTRA_PACKAGES="$(ARM_PACKAGES)" ./scripts/bootstrap.sh
	JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" ARM_HIREDIS=$(HIREDIS) ./scripts/size.sh

# Which src/ files a blocking and an async try_lock enter, and how often, from
# an instrumented build (docs/ARCHITECTURE.md). Starts its own redis-server.
trace-path: deps
	./scripts/trace/trace_path.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.cpp' '*.h' '*.hpp')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.cpp' '*.h' '*.hpp')

clean:
	rm -rf $(BUILD) build-asan build-tsan build-trace build-hiredis-system build-deps build-fuzz

# Benchmarks (bench/, BENCHMARKS.md, bench/results.json); never part of `make test`.
# Installs the Debian packages it needs; node + npm are optional (without them
# the node-redlock rows are skipped and BENCHMARKS.md says so).
BENCH_BUILD ?= bench/build
.PHONY: bench
bench:
	@EDGELOCK_EXTRA_PACKAGES="python3 python3-redis gnuplot-nox redis-tools" ./scripts/bootstrap.sh
	@command -v npm >/dev/null 2>&1 || EDGELOCK_EXTRA_PACKAGES="nodejs npm" ./scripts/bootstrap.sh || \
		echo "bench: node/npm could not be installed; the node-redlock rows will be skipped"
	@[ "$(HIREDIS)" = system ] || { EDGELOCK_EXTRA_PACKAGES="libssl-dev dpkg-dev" ./scripts/bootstrap.sh && \
		JOBS=$(JOBS) ./scripts/hiredis.sh $(HIREDIS_PREFIX); }
	cmake -S bench -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(HIREDIS_FLAGS)
	cmake --build $(BENCH_BUILD) -j$(JOBS)
	/usr/bin/python3 bench/run_bench.py --build $(BENCH_BUILD) $(BENCH_FLAGS)
