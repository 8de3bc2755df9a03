# Thin forwarder: meson builds and tests, the harness measures, the scripts
# read its CSV.  Every target installs missing Debian packages first.
BUILD   ?= build
# an interpreter that has matplotlib (Debian's; the first python3 on PATH may not)
PYTHON  ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import matplotlib, numpy, scipy' 2>/dev/null && echo $$p && break; done)
MATRIX  ?= matrices/quick.ini
SWEEP_REPS ?= 1
STAMP   := $(shell date -u +%Y%m%d-%H%M%S)
OUT     ?= results/compare-$(STAMP)
# the sanitizer and fuzz build (clang-14): harness and C tests under
# ASan+UBSan (worker and probe never), and the libFuzzer targets
SAN     ?= build-san
FUZZ_TEST_SECONDS ?= 60
FUZZ_SECONDS ?= 300

.PHONY: all deps deps-test build test fuzz bench compare sweep calibrate clean

all: build

deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh test

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

$(SAN)/build.ninja: | deps-test
	CC=clang-14 meson setup $(SAN) -Dbuildtype=debugoptimized \
	    -Dsanitize_harness=address,undefined -Dfuzz=true

# The whole suite, then the unit and integration suites against the
# sanitized harness (every report fails), then each fuzz target briefly;
# all three run, and any failure fails the target.
test: build $(SAN)/build.ninja
	@rc=0; \
	meson test -C $(BUILD) --print-errorlogs || rc=1; \
	rm -rf $(SAN)/sanitizer; \
	FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) meson test -C $(SAN) --print-errorlogs \
	    --suite unit --suite integration --suite fuzz || rc=1; \
	scripts/sanitizer-reports.sh $(SAN)/sanitizer || rc=1; \
	exit $$rc

# Each fuzz target for FUZZ_SECONDS on a scratch copy of its corpus
# (tests/fuzz/NAME/ is only read); crash inputs in $(SAN)/tests/fuzz/NAME/artifacts/.
fuzz: $(SAN)/build.ninja
	FUZZ_SECONDS=$(FUZZ_SECONDS) meson test -C $(SAN) --suite fuzz --verbose

bench: build
	meson test -C $(BUILD) --benchmark --suite benchmarks --verbose

compare: build
	@mkdir -p $(OUT)
	$(BUILD)/mallocbench run -m $(MATRIX) -o $(OUT)/run.csv
	$(PYTHON) scripts/summary.py $(OUT)/run.csv --markdown > $(OUT)/summary.md
	$(PYTHON) scripts/report.py $(OUT)/run.csv -o $(OUT)
	$(PYTHON) scripts/summary.py $(OUT)/run.csv
	@echo "report: $(OUT)/report.md"

# The fault cliff: faults per MiB and throughput against buffer size, 64 KiB
# to 256 MiB doubling, every installed allocator (1 GiB copied per point).
sweep: build
	@mkdir -p $(OUT)
	$(BUILD)/mallocbench run -w tensor_copy:count=2,bytes=1G,warmup=1 --sweep size=64K..256M -r $(SWEEP_REPS) -o $(OUT)/sweep.csv
	$(PYTHON) scripts/summary.py $(OUT)/sweep.csv --curve size --markdown > $(OUT)/sweep.md
	$(PYTHON) scripts/report.py $(OUT)/sweep.csv -o $(OUT)
	$(PYTHON) scripts/summary.py $(OUT)/sweep.csv --curve size

calibrate: build
	$(BUILD)/mallocbench calibrate

clean:
	rm -rf $(BUILD) $(SAN)
