#!/bin/sh
# run.sh EXE SEEDS WORK [SECONDS] - run one libFuzzer target for SECONDS
# (FUZZ_SECONDS overrides; default 60) on a scratch copy of its seed corpus
# SEEDS, in WORK (WORK/corpus is remade, crash inputs are kept in
# WORK/artifacts).  The committed corpus is only read.  Fails on a crash,
# a leak, a sanitizer report or a hang of one input (10 s).
set -eu
exe=$1 seeds=$2 work=$3
secs=${FUZZ_SECONDS:-${4:-60}}
rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$seeds"/* "$work/corpus/"
dict=$seeds.dict
set -- -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -error_exitcode=1 -timeout_exitcode=1 \
    -artifact_prefix="$work/artifacts/"
[ -f "$dict" ] && set -- "$@" -dict="$dict"
# reports on stderr here (the test setup sends the harness's to files)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:log_path=stderr"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:log_path=stderr"
echo "run.sh: $exe $* $work/corpus" >&2
exec "$exe" "$@" "$work/corpus"
