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

# Ordered lookups, range map, batches, latched values, liburcu reclamation (tests/api).
#   make check-api          the API tests and the examples that check themselves
#   make check-urcu-long    a long reclamation run under ASan (URCU_OPS frees)
URCU_OPS ?= 5000000
.PHONY: check-api check-urcu-long
check-api: all
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j $(JOBS) \
		-R '^(test-(ordered|range|batch|api-|value|cxx)|example-)' $(CTEST_ARGS)

check-urcu-long:
	$(MAKE) all BUILD=$(BUILD)-asan SANITIZE=address,undefined
	LATCH_TEST_URCU_OPS=$(URCU_OPS) $(BUILD)-asan/tests/api/test-range-urcu

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
