# Thin forwarder: meson builds and tests, the harness measures, the scripts
# read its CSV.  Every target installs missing Debian packages first.
BUILD   ?= build
# an interpreter that has matplotlib (Debian's; the first python3 on PATH may not)
PYTHON  ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import matplotlib, numpy, scipy' 2>/dev/null && echo $$p && break; done)
MATRIX  ?= $(if $(FULL),matrices/compare-full.ini,matrices/quick.ini)
SWEEP_REPS ?= 1
STAMP   := $(shell date -u +%Y%m%d-%H%M%S)
OUT     ?= results/compare-$(STAMP)
# the CSV schema the scripts read (scripts/mallocbench/mbcsv.py), written by the build
export MB_SCHEMA ?= $(abspath $(BUILD)/schema.json)
# the sanitizer and fuzz build (clang-14): harness and C tests under
# ASan+UBSan (worker and probe never), and the libFuzzer targets
SAN     ?= build-san
FUZZ_SECONDS ?= 300

# the nightly dashboard: one night's run stored as HISTORY/<machine-id>/<NIGHT>.csv
NIGHT   ?= $(shell date -u +%Y-%m-%d)
HISTORY ?= results/history
SITE    ?= results/site
NIGHTLY_MATRIX = $(if $(filter command line environment,$(origin MATRIX)),$(MATRIX),matrices/nightly.ini)

.PHONY: all deps deps-test deps-site deps-frameworks node-deps site-deps build test test-full test-part fuzz bench compare sweep calibrate thp fleet-probe clean nightly dashboard frameworks

all: build

deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh test

deps-site:
	@scripts/deps.sh site

# the framework suite's packages (PyTorch, libtorch, numpy, wrk, memcached);
# then `meson setup --reconfigure $(BUILD)` builds workloads/frameworks/train_step
deps-frameworks:
	@scripts/deps.sh frameworks

# node_modules from package-lock.json (uPlot for the site, puppeteer-core for its
# browser test): `npm ci`, quietly, only when the lock file is newer than the install
# or the browser test's package is missing (site-deps installs uPlot alone).
node-deps:
	@[ -d node_modules/puppeteer-core ] && [ node_modules/.package-lock.json -nt package-lock.json ] || \
	    npm ci --no-audit --no-fund --loglevel=error >/dev/null

# what the dashboard needs: uPlot alone (no browser-test package), said as it installs
site-deps:
	@[ -f node_modules/uplot/package.json ] || { echo "npm ci --omit=dev: uPlot for the dashboard"; \
	    npm ci --omit=dev --no-audit --no-fund --loglevel=error; }

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

$(SAN)/build.ninja: | deps-test
	CC=clang-14 meson setup $(SAN) -Dbuildtype=debugoptimized \
	    -Dsanitize_harness=address,undefined -Dfuzz=true

# Two tiers (docs/testing.md): every test is `fast` or `slow` besides its kind.
# `make test` is the fast tier: in build/ every fast test (every unit test, the
# smokes of each command and family, the behaviour checks); in build-san/, under
# ASan+UBSan (any sanitizer report fails), the unit tests (but the Python
# statistics and views, py_units: no C of ours runs in them), the smokes and each
# fuzz target over its seed corpus, each input once (-Dfuzz_fast_seconds=0).  `make test-full` adds the slow
# tier: the measurements, searches and soaks, every other integration test
# under the sanitizers, and each fuzz target for 60 s more (-Dfuzz_seconds).
# Both print each part's wall time and the ten slowest tests at the end.
SUITES_fast_plain = --suite fast
SUITES_fast_san   = --suite unit --suite smoke --suite fuzz --no-suite slow
SUITES_slow_plain = --suite slow
SUITES_slow_san   = --suite integration --suite slow --no-suite smoke --no-suite benchmarks
TIMING = $(foreach t,$(1),$(foreach b,plain san,$(t)-$(b)=$($(b)_dir)/meson-logs/$(t).json:$$(cat $($(b)_dir)/meson-logs/$(t).wall 2>/dev/null || echo 0)))
plain_dir = $(BUILD)
san_dir = $(SAN)

test: build $(SAN)/build.ninja node-deps
	@echo "make test: the fast tier (make test-full runs both)"
	@rc=0; rm -rf $(SAN)/sanitizer; \
	$(MAKE) --no-print-directory test-part T=fast B=plain || rc=1; \
	$(MAKE) --no-print-directory test-part T=fast B=san || rc=1; \
	scripts/sanitizer-reports.sh $(SAN)/sanitizer || rc=1; \
	python3 tests/timing.py $(call TIMING,fast); \
	exit $$rc

test-full: build $(SAN)/build.ninja node-deps
	@echo "make test-full: the fast and the slow tier"
	@rc=0; rm -rf $(SAN)/sanitizer; \
	for t in fast slow; do for b in plain san; do \
	    $(MAKE) --no-print-directory test-part T=$$t B=$$b || rc=1; \
	done; done; \
	scripts/sanitizer-reports.sh $(SAN)/sanitizer || rc=1; \
	python3 tests/timing.py $(call TIMING,fast slow); \
	exit $$rc

# one tier in one build (internal: make test, test-full): its log in
# BUILDDIR/meson-logs/TIER.json, its wall time beside it in TIER.wall
test-part:
	@t0=$$(date +%s); \
	$(if $(filter san,$(B)),TUNE_SEEDS=3) meson test -C $($(B)_dir) --print-errorlogs --logbase $(T) $(SUITES_$(T)_$(B)); \
	rc=$$?; echo $$(( $$(date +%s) - t0 )) > $($(B)_dir)/meson-logs/$(T).wall; exit $$rc

# Each fuzz target for FUZZ_SECONDS on a scratch copy of its corpus
# (tests/fuzz/NAME/ is only read); crash inputs in $(SAN)/tests/fuzz/NAME/slow/artifacts/.
fuzz: $(SAN)/build.ninja
	FUZZ_SECONDS=$(FUZZ_SECONDS) meson test -C $(SAN) --suite fuzz --no-suite fast --verbose

bench: build
	meson test -C $(BUILD) --benchmark --suite benchmarks --verbose

# A configuration with no ok sample (run's exit 4) still gets its report, which names it
# first; make then exits 4 too.
compare: build
	@mkdir -p $(OUT)
	@rc=0; $(BUILD)/mallocbench run -m $(MATRIX) -o $(OUT)/run.csv || rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 4 ] || exit $$rc; \
	$(PYTHON) scripts/summary.py $(OUT)/run.csv --markdown > $(OUT)/summary.md && \
	$(PYTHON) scripts/report.py $(OUT)/run.csv -o $(OUT) --force && \
	$(PYTHON) scripts/summary.py $(OUT)/run.csv && \
	echo "report: $(OUT)/report.md" && \
	{ [ "$(MATRIX)" != matrices/quick.ini ] || echo "quick: each sample's work cut and at most 10 blocks (matrices/quick.ini); the comparisons it left at the cap get finer CIs from 'make compare FULL=1' (matrices/compare-full.ini: the fuller work per sample, up to 30 blocks: several times as long)"; } && exit $$rc

# The fault cliff: faults per MiB and throughput against buffer size, 64 KiB
# to 256 MiB doubling, every installed allocator (1 GiB copied per point).
sweep: build
	@mkdir -p $(OUT)
	$(BUILD)/mallocbench run -w tensor_copy:count=2,bytes=1G,warmup=1 --sweep size=64K..256M -r $(SWEEP_REPS) --keep-going -o $(OUT)/sweep.csv
	$(PYTHON) scripts/summary.py $(OUT)/sweep.csv --curve size --markdown > $(OUT)/sweep.md
	$(PYTHON) scripts/report.py $(OUT)/sweep.csv -o $(OUT) --force
	$(PYTHON) scripts/summary.py $(OUT)/sweep.csv --curve size

# One night: the nightly matrix (resumed if an earlier attempt of this night
# was cut short), stored in the history under this machine's id, then the
# dashboard.  `scripts/detect.py HISTORY` exits 3 while a confirmed regression is unresolved.
nightly: build
	@mkdir -p $(HISTORY)
	$(BUILD)/mallocbench run -m $(NIGHTLY_MATRIX) --resume --keep-going -o results/nightly-$(NIGHT).csv
	$(PYTHON) scripts/history.py store results/nightly-$(NIGHT).csv $(HISTORY) $(NIGHT)
	$(MAKE) --no-print-directory dashboard HISTORY=$(HISTORY) SITE=$(SITE)

# The detector over the whole history (SITE/alerts.csv, SITE/series.json),
# the latest night's report, and the static site.
dashboard: deps deps-site site-deps
	@mkdir -p $(SITE)
	$(PYTHON) scripts/detect.py $(HISTORY) --out $(SITE) --force; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 3 ]
	@latest=$$($(PYTHON) scripts/history.py latest $(HISTORY)) || exit 2; \
	if [ -n "$$latest" ]; then $(PYTHON) scripts/report.py "$$latest" -o $(SITE)/report --force; fi
	$(PYTHON) scripts/dashboard.py $(SITE)/series.json $(SITE) --report $(SITE)/report --force

calibrate: build
	$(BUILD)/mallocbench calibrate

# Huge pages as a condition (docs/thp.md): the machine's fault costs, then
# matrices/thp.ini (every family with THP off and with its own huge-page
# setting on, paired by block; 15-20 minutes on a 2-core VM) and its report.
thp: build deps-frameworks
	@mkdir -p $(OUT)
	$(BUILD)/mallocbench calibrate > $(OUT)/calibrate.txt && cat $(OUT)/calibrate.txt
	@rc=0; $(BUILD)/mallocbench run -m matrices/thp.ini --keep-going -o $(OUT)/thp.csv || rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 4 ] || exit $$rc; \
	$(PYTHON) scripts/thp.py $(OUT)/thp.csv -o $(OUT)/thp.md && cat $(OUT)/thp.md && echo "report: $(OUT)/thp.md"

# One machine's run of matrices/fleet-probe.ini kept in the fleet history
# (tests/fixtures/fleet-history/HOST-BOOT.csv, never replaced: a machine is a host in one
# boot); compare --fleet over the folder pools each cell across the machines there.
FLEET_HISTORY ?= tests/fixtures/fleet-history
fleet-probe: build
	@mkdir -p $(FLEET_HISTORY)
	@name=$$(hostname -s)-$$(tr -d - < /proc/sys/kernel/random/boot_id | cut -c1-6); \
	$(BUILD)/mallocbench run -m matrices/fleet-probe.ini -o $(FLEET_HISTORY)/$$name.csv && \
	rm -f $(FLEET_HISTORY)/$$name.rss.csv && \
	$(PYTHON) scripts/compare.py --fleet $(FLEET_HISTORY)/*.csv --metric throughput

clean:
	rm -rf $(BUILD) $(SAN)

# The framework suite (docs/frameworks.md, `make frameworks`): the programs under every
# configuration, the training step's worst one profiled, replay fidelity, the synthetic
# workloads at the programs' shapes, and the report, all under FW_OUT.
# FW_REPS=1 FW_ALLOCATORS=glibc,jemalloc,je-keep FW_PROGRAMS=train for a quicker run.
# By default the programs and configurations that carry docs/frameworks.md's findings,
# the replays and synthetic runs in 2 blocks (about 13 minutes; 16 with 3: the report lists
# what it left out); FULL=1 runs all of them, side runs in 3 blocks (~50 min).
FW_OUT  ?= results/frameworks
FW_REPS ?= 6
FW_QUICK_ALLOCATORS := glibc,jemalloc,je-keep,mimalloc
FW_QUICK_PROGRAMS := elementwise,train,train_step
FW_ALLOCATORS ?= $(if $(FULL),,$(FW_QUICK_ALLOCATORS))
FW_PROGRAMS ?= $(if $(FULL),,$(FW_QUICK_PROGRAMS))
FW_SIDE_REPS ?= $(if $(FULL),3,2)
frameworks: build deps-frameworks
	@[ -x $(BUILD)/workloads/frameworks/train_step ] || meson setup --reconfigure $(BUILD) >/dev/null
	meson compile -C $(BUILD)
	FW_REPS=$(FW_REPS) FW_SIDE_REPS=$(FW_SIDE_REPS) FW_ALLOCATORS=$(FW_ALLOCATORS) FW_PROGRAMS=$(FW_PROGRAMS) \
	    BUILD=$(BUILD) \
	    PYTHON=/usr/bin/python3 scripts/frameworks.sh $(FW_OUT)
	@echo "report: $(FW_OUT)/frameworks.md"
