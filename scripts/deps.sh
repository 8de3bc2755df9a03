#!/bin/sh
# deps.sh [test|site|frameworks|fleet] - install the Debian packages mallocbench needs, only those
# that are missing, so `make test` and `make compare` work on a fresh Debian 12
# machine.
# Needs root (or sudo) only when something is missing.
set -eu

PKGS="gcc libc6-dev make meson ninja-build pkg-config python3 python3-numpy python3-matplotlib python3-scipy
python3-statsmodels
libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev libpfm4-dev linux-perf"
PKGS="$PKGS libclang-rt-14-dev"  # scudo (allocators/scudo.c)
PKGS="$PKGS libtbbmalloc2"  # tbbmalloc (allocators/tbbmalloc.c)
# `deps.sh test`: also what `make test` needs for its sanitizer and fuzz build
# (clang, compiler-rt with ASan/UBSan/libFuzzer, llvm-symbolizer for reports)
[ "${1:-}" = test ] && PKGS="$PKGS clang-14 libclang-rt-14-dev llvm-14"
# and the dashboard's browser test (tests/integration/test_site.mjs drives Debian's chromium)
[ "${1:-}" = test ] && PKGS="$PKGS chromium"
# and the real programs tests/integration/test_exec.py runs under every allocator (xz, sort)
[ "${1:-}" = test ] && PKGS="$PKGS xz-utils coreutils"
# and the small framework tests: the PyTorch programs (test_frameworks.py; train_step's
# libtorch-dev is left to `deps.sh frameworks`, so its case skips with the reason) and a
# real Debian server under `serve` (memcached loaded by libmemcached-tools' memcaslap)
[ "${1:-}" = test ] && PKGS="$PKGS python3-torch memcached libmemcached-tools"
# and the CPU hog of the stopping benchmark's real runs (tests/bench/bench_stopping.py: stress-ng
# --cpu 2; without it the benchmark spins two processes of its own)
[ "${1:-}" = test ] && PKGS="$PKGS stress-ng"
# (statsmodels: compare's answer pooled across machines, docs/fleet.md)
# `deps.sh fleet`: a plan over several machines (docs/fleet.md): Slurm and munge (the test starts
# a one-node cluster of its own), a YAML parser for the Kubernetes manifest's test; `deps.sh test`
# installs them too, so CI runs that test
FLEET="slurm-wlm munge python3-yaml"
[ "${1:-}" = fleet ] && PKGS="$PKGS $FLEET"
[ "${1:-}" = test ] && PKGS="$PKGS $FLEET"
# `deps.sh frameworks`: the framework suite (workloads/frameworks/, matrices/frameworks.ini):
# PyTorch and numpy from Debian, libtorch's C++ API for train_step, wrk as the served
# model's load generator, and memcached with its load tools for the other server
[ "${1:-}" = frameworks ] && PKGS="$PKGS python3-torch libtorch-dev python3-numpy wrk memcached libmemcached-tools g++"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done
# node and npm for the site (uPlot) and its test (puppeteer-core), from Debian
# unless some other package (NodeSource's nodejs) already provides them
# (`deps.sh site`: only these, for make dashboard)
if { [ "${1:-}" = test ] || [ "${1:-}" = site ]; } && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
    missing="$missing nodejs npm"
fi
[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps.sh: missing Debian packages:$missing (run as root: apt-get install$missing)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# an old package index gives 404s: refresh it once, then install
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
