# liblatch front door: a thin wrapper around CMake + CTest.
#
#   make              build (RelWithDebInfo) into $(BUILD)
#   make check        build and run every test through CTest
#   make demo         run the demo
#   make install      install under $(PREFIX) (and $(DESTDIR))
#
# Variables: BUILD (build folder), BUILD_TYPE, CC/CXX (compilers),
# SANITIZE (e.g. address,undefined or thread), PREFIX, DESTDIR, JOBS.

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
SANITIZE   ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake
CTEST      ?= ctest
GENERATOR  := $(if $(shell command -v ninja 2>/dev/null),-G Ninja,)

.PHONY: all configure check demo install clean
.DEFAULT_GOAL := all

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) -DLATCH_SANITIZE=$(SANITIZE) $(CMAKE_ARGS)

configure: $(BUILD)/CMakeCache.txt

all: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

check: all
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo: all
	$(BUILD)/examples/latch-demo $(DEMO_ARGS)

# Re-configure first: PREFIX is baked into latch.pc and the CMake package.
install: configure
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	$(CMAKE) --build $(BUILD) -j $(JOBS)
	DESTDIR=$(DESTDIR) $(CMAKE) --install $(BUILD)

clean:
	rm -rf $(BUILD)

# Ordered lookups, range map, batches, latched values, liburcu reclamation
# (the tests labelled api: tests/api, and the others in tests/tree, value, range).
#   make check-api          the API tests and the examples that check themselves
#   make check-urcu-long    a long reclamation run under ASan (URCU_OPS frees)
URCU_OPS ?= 5000000
.PHONY: check-api check-urcu-long
check-api: all
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L '^api$$' $(CTEST_ARGS)

check-urcu-long:
	$(MAKE) all BUILD=$(BUILD)-asan SANITIZE=address,undefined
	LATCH_TEST_URCU_OPS=$(URCU_OPS) $(BUILD)-asan/tests/range/test-range-urcu

# --- Portability: arm64 under qemu-user, 32-bit x86, and the CI matrix ---
#
#   make check-arm64   cross-build for arm64, run the tests under qemu-user
#   make check-m32     32-bit x86 build (-m32) and tests
#   make ci-matrix     every CI configuration in turn (.ci/matrix), each
#                      stage timed; STAGES="arm64 m32" runs only those
#
# Debian packages: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
# libc6-dev-arm64-cross qemu-user (arm64); gcc-12-multilib g++-12-multilib (-m32).
ARM64_BUILD ?= build-arm64
M32_BUILD   ?= build-m32
STAGES      ?=

.PHONY: check-arm64 check-m32 ci-matrix

check-arm64:
	$(MAKE) check BUILD=$(ARM64_BUILD) \
		CMAKE_ARGS="-DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/toolchain-aarch64.cmake $(CMAKE_ARGS)"

check-m32:
	$(MAKE) check BUILD=$(M32_BUILD) \
		CMAKE_ARGS="-DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/toolchain-m32.cmake $(CMAKE_ARGS)"

ci-matrix:
	bash .ci/matrix $(STAGES)

# --- Proof of the guarantee: long harness runs, valgrind, fuzzing ---
#
#   make stress     the single-step, signal-storm and linearizability harnesses
#                   at their long settings over the latch tree, the range map,
#                   the latched value and latch_map, every mutant against them,
#                   and test-map up to 10^6 keys
#   make memcheck   the tests under valgrind memcheck (any error fails)
#   make fuzz       each libFuzzer target for FUZZ_SECONDS (clang, ASan+UBSan)
#
# Counts: STRESS_STEPS (writer instructions single-stepped), STRESS_SIGNALS
# (handler lookups in the storm), STRESS_LOOKUPS (linearizability lookups).
STRESS_STEPS   ?= 1000000
STRESS_SIGNALS ?= 1000000
STRESS_LOOKUPS ?= 10000000
PROOF          := $(BUILD)/tests/proof
MEMCHECK_BUILD ?= build-memcheck
# --fair-sched=yes: valgrind runs one thread at a time, and with its default
# lock a thread that spins (a writer pacing itself, a reader polling a stop
# flag) can keep the CPU from the thread it waits for; latchbench's
# readers-beside-a-writer workload never ended that way on some hosts.
VALGRIND_OPTS  ?= --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
                  --fair-sched=yes --suppressions=$(CURDIR)/tests/proof/valgrind.supp
FUZZ_BUILD     ?= build-fuzz
FUZZ_SECONDS   ?= 60
FUZZ_ARGS      ?= -max_len=64

.PHONY: stress memcheck fuzz

stress: all
	LATCH_PROOF_STEPS=$(STRESS_STEPS) nice -n 10 $(PROOF)/proof-singlestep
	LATCH_STORM_LOOKUPS=$(STRESS_SIGNALS) LATCH_STORM_MAX_MS=600000 nice -n 10 $(PROOF)/proof-storm
	nice -n 10 $(PROOF)/proof-storm seqlock-tree --expect-caught
	LATCH_LINEAR_LOOKUPS=$(STRESS_LOOKUPS) nice -n 10 $(PROOF)/proof-linear
	for s in range-map latched-value latch-map; do \
		LATCH_PROOF_STEPS=$(STRESS_STEPS) nice -n 10 $(PROOF)/proof-singlestep $$s || exit 1; \
		LATCH_STORM_LOOKUPS=$(STRESS_SIGNALS) LATCH_STORM_MAX_MS=600000 \
			nice -n 10 $(PROOF)/proof-storm $$s || exit 1; \
		LATCH_LINEAR_LOOKUPS=$(STRESS_LOOKUPS) nice -n 10 $(PROOF)/proof-linear $$s || exit 1; \
	done
	for m in wrong-copy skip-retry flip-first readers-copy map-wrong-copy map-skip-retry; do \
		nice -n 10 $(PROOF)/proof-singlestep mutant-$$m --expect-caught || exit 1; \
		LATCH_LINEAR_LOOKUPS=$(STRESS_LOOKUPS) nice -n 10 \
			$(PROOF)/proof-linear mutant-$$m --expect-caught || exit 1; \
	done
	LATCH_MAP_MAX=1000000 nice -n 10 $(BUILD)/tests/map/test-map

memcheck:
	$(MAKE) all BUILD=$(MEMCHECK_BUILD) SANITIZE=
	cd $(MEMCHECK_BUILD) && LATCH_TEST_MAX_SIZE=4096 nice -n 10 $(CTEST) --output-on-failure \
		-LE no-memcheck -T memcheck --overwrite MemoryCheckCommand=$$(command -v valgrind) \
		--overwrite "MemoryCheckCommandOptions=$(VALGRIND_OPTS)" $(CTEST_ARGS)

fuzz:
	$(MAKE) all BUILD=$(FUZZ_BUILD) CC=clang CXX=clang++ SANITIZE=address,undefined
	mkdir -p $(FUZZ_BUILD)/fuzz-corpus
	mkdir -p $(FUZZ_BUILD)/fuzz-corpus-map
	nice -n 10 $(FUZZ_BUILD)/tests/fuzz/fuzz-tree -max_total_time=$(FUZZ_SECONDS) \
		-print_final_stats=1 $(FUZZ_ARGS) $(FUZZ_BUILD)/fuzz-corpus tests/fuzz/corpus
	nice -n 10 $(FUZZ_BUILD)/tests/fuzz/fuzz-map -max_total_time=$(FUZZ_SECONDS) \
		-print_final_stats=1 $(FUZZ_ARGS) $(FUZZ_BUILD)/fuzz-corpus-map tests/fuzz/corpus-map

# Model checking of the memory ordering with GenMC (tests/model/README.md).
#   make model-check  every GenMC harness on the real sources, then every mutant
#                     (GenMC must be on PATH, or GENMC=/path/to/genmc; without
#                     it the target says so and succeeds).  Not part of check.
.PHONY: model-check
model-check:
	GENMC='$(GENMC)' bash tests/model/run.sh $(BUILD)

# Documentation and packaging: man pages, ABI and consumer checks.
#   make man              build the man pages (needs scdoc) into $(BUILD)/docs/man3
#   make packaging-check  run only the ABI, man page, consumer, install and embedding tests
#   make abi-baseline     store the ABI of this build as the release's (tests/abi/liblatch.abi;
#                         needs abigail-tools; see CONTRIBUTING.md)
.PHONY: man packaging-check abi-baseline
man: configure
	$(CMAKE) --build $(BUILD) --target man

abi-baseline: all
	abidw --no-corpus-path --drop-private-types --headers-dir include/latch \
		$$(readlink -f $(BUILD)/liblatch.so) >tests/abi/liblatch.abi

packaging-check: all
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L '^packaging$$' $(CTEST_ARGS)

# latchbench: the benchmark against every peer (docs/benchmarks.md).
#   make bench        full run (several minutes); table on stdout, CSV in $(BENCH_CSV)
#   make bench-quick  the same in under a minute
#   make bench-plot   PNG plots under docs/ from $(BENCH_CSV) (needs gnuplot-nox)
BENCH_CSV  ?= $(BUILD)/latchbench.csv
BENCH_ARGS ?=
.PHONY: bench bench-quick bench-plot

bench: all
	$(BUILD)/bench/latchbench --csv $(BENCH_CSV) $(BENCH_ARGS)

bench-quick: all
	$(BUILD)/bench/latchbench --quick --csv $(BENCH_CSV) $(BENCH_ARGS)

bench-plot:
	mkdir -p docs
	gnuplot -e "csv='$(BENCH_CSV)'; outdir='docs'" bench/plot.gp
