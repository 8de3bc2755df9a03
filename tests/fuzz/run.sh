#!/bin/sh
# run.sh EXE SEEDS WORK [SECONDS [MORE...]] - run one libFuzzer target for
# SECONDS (FUZZ_SECONDS overrides; default 60; 0: each seed once, no search) on a scratch copy of its seed
# corpus SEEDS, plus each MORE (a file, or a directory's files): real inputs
# kept elsewhere in the tree (matrices/*.ini), copied as they are today so
# the corpus holds no stale copy of them.  Runs in WORK (WORK/corpus is
# remade, crash inputs are kept in WORK/artifacts).  The committed files are
# only read.  Fails on a crash, a leak, a sanitizer report or a hang of one
# input (10 s).
set -eu
exe=$1 seeds=$2 work=$3
secs=${FUZZ_SECONDS:-${4:-60}}
[ $# -gt 4 ] && shift 4 || shift $#
rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$seeds"/* "$work/corpus/"
for more in "$@"; do
    if [ -d "$more" ]; then
        cp "$more"/* "$work/corpus/"
    else
        cp "$more" "$work/corpus/"
    fi
done
dict=$seeds.dict
# 0 seconds: every input of the corpus run once, no search (the fast tier's replay)
if [ "$secs" -eq 0 ]; then limit=-runs=0; else limit=-max_total_time="$secs"; fi
set -- "$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -error_exitcode=1 -timeout_exitcode=1 \
    -artifact_prefix="$work/artifacts/"
[ -f "$dict" ] && set -- "$@" -dict="$dict"
# reports on stderr here (the test setup sends the harness's to files)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:log_path=stderr"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1:log_path=stderr"
echo "run.sh: $exe $* $work/corpus" >&2
exec "$exe" "$@" "$work/corpus"
