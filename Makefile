# Thin forwarder: meson builds and tests, the harness measures, the scripts
# read its CSV.  Every target installs missing Debian packages first.
BUILD   ?= build
PYTHON  ?= python3
REPS    ?= 5
WORKLOAD ?= tensor_copy:size=16M,count=4,steps=100
STAMP   := $(shell date -u +%Y%m%d-%H%M%S)
OUT     ?= results/compare-$(STAMP)

.PHONY: all deps build test bench compare clean

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
	$(BUILD)/mallocbench run -w $(WORKLOAD) -r $(REPS) -o $(OUT)/run.csv
	$(PYTHON) scripts/summary.py $(OUT)/run.csv --markdown > $(OUT)/summary.md
	$(PYTHON) scripts/summary.py $(OUT)/run.csv

clean:
	rm -rf $(BUILD)
