# Thin forwarder: meson builds and tests, the harness measures, the scripts
# read its CSV.  Every target installs missing Debian packages first.
BUILD   ?= build
# an interpreter that has matplotlib (Debian's; the first python3 on PATH may not)
PYTHON  ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import matplotlib, numpy' 2>/dev/null && echo $$p && break; done)
MATRIX  ?= matrices/quick.ini
SWEEP_REPS ?= 1
STAMP   := $(shell date -u +%Y%m%d-%H%M%S)
OUT     ?= results/compare-$(STAMP)

.PHONY: all deps build test bench compare sweep calibrate clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

test: build
	meson test -C $(BUILD) --print-errorlogs

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
	rm -rf $(BUILD)
