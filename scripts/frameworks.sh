#!/bin/sh
# frameworks.sh OUT - `make frameworks`: the framework suite (matrices/frameworks.ini) under
# every configuration -> OUT/fw.csv; a flame graph of the training step's worst configuration;
# each program recorded once and replayed under every configuration -> OUT/replay.csv; the
# synthetic workloads at the programs' shapes -> OUT/synth.csv; then OUT/frameworks.md.
# Environment: FW_REPS (blocks, default 6: the fewest whose paired CI exists at 95%),
# FW_SIDE_REPS (blocks of the replay and synthetic runs, default 3), FW_ALLOCATORS (labels of frameworks.ini's
# allocators line to keep, default all), FW_PROGRAMS (names of its workloads to keep, default
# all; `make frameworks` keeps the ones that carry docs/frameworks.md's findings unless FULL=1),
# BUILD (build), PYTHON (/usr/bin/python3).  What was left out is listed in the report.
set -eu
OUT=${1:-results/frameworks}
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
REPS=${FW_REPS:-6}
# the replay and the synthetic runs: fewer blocks, no warm-up (they compare rankings and counts)
SIDE_REPS=${FW_SIDE_REPS:-3}
MB=$BUILD/mallocbench
MATRIX=matrices/frameworks.ini
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "frameworks: $* ($(( $(date +%s) - T0 )) s)"; }

# the matrix, with only the configurations asked for: frameworks.ini names every labelled
# configuration's tunables, and `run` refuses a [tunables LABEL] whose label is not run
ALL=$(sed -n 's/^allocators *= *//p' "$MATRIX")
WANT=${FW_ALLOCATORS:-$ALL}
KEEP=""
for a in $(echo "$ALL" | tr ',' ' '); do
    case ",$WANT," in *",${a%%=*},"*|*",$a,"*) KEEP="$KEEP${KEEP:+,}$a" ;; esac
done
[ -n "$KEEP" ] || { echo "frameworks: FW_ALLOCATORS='$WANT' names none of $ALL" >&2; exit 2; }
PROGS=$(sed -n 's/^\[workload [a-z]* \([a-z_]*\)\]/\1/p' "$MATRIX" | tr '\n' ',' | sed 's/,$//')
WANT_P=${FW_PROGRAMS:-$PROGS}
KEEP_P=""
for p in $(echo "$PROGS" | tr ',' ' '); do
    case ",$WANT_P," in *",$p,"*) KEEP_P="$KEEP_P${KEEP_P:+,}$p" ;; esac
done
[ -n "$KEEP_P" ] || { echo "frameworks: FW_PROGRAMS='$WANT_P' names none of $PROGS" >&2; exit 2; }
# what the report says this run left out
left_out() {
    for x in $(echo "$1" | tr ',' ' '); do case ",$2," in *",$x,"*) ;; *) printf '%s ' "${x%%=*}" ;; esac; done
}
LEFT_A=$(left_out "$ALL" "$KEEP" | sed 's/ $//')
LEFT_P=$(left_out "$PROGS" "$KEEP_P" | sed 's/ $//')
# trim IN KEEP [PROGRAMS]: IN with only the configurations in KEEP (and only the workloads
# named in the comma list PROGRAMS)
trim() {
    awk -v keep=",$2," -v progs=",${3:-}," '
        /^allocators *=/ { print "allocators = " substr(keep, 2, length(keep) - 2); next }
        /^\[tunables / { l = $2; sub(/\]$/, "", l); skip = index(keep, "," l "=") == 0 && index(keep, "," l ",") == 0 }
        /^\[workload / { n = $3; sub(/\]$/, "", n); skip = progs != ",," && index(progs, "," n ",") == 0 }
        /^\[run\]/ { skip = 0 }
        !skip' "$1"
}
trim "$MATRIX" "$KEEP" "$KEEP_P" > "$OUT/frameworks.ini"
LABELS=$KEEP

# 1. the programs under every configuration
say "fw.csv: $MATRIX, $REPS blocks, $LABELS; programs $KEEP_P${LEFT_P:+ (left out: $LEFT_P)}"
# --keep-going: a configuration that fails every sample is a row the report names first (exit 4 otherwise)
$MB run -m "$OUT/frameworks.ini" -r "$REPS" -o "$OUT/fw.csv" --force --keep-going

# 2. the training step's worst configuration (lowest throughput against glibc), profiled
worst=$($PYTHON scripts/frameworks.py --worst train "$OUT/fw.csv") || worst=""
if [ -n "$worst" ]; then
    say "profile: train under $worst"
    trim "$OUT/frameworks.ini" "$(echo "$KEEP" | tr ',' '\n' | grep -E "^$worst(=|\$)")" train > "$OUT/profile.ini"
    rm -rf "$OUT/profile.profile"
    $MB run -m "$OUT/profile.ini" -r 1 --warmup-runs 0 --profile -o "$OUT/profile.csv" --force ||
        echo "frameworks: the profile failed; the report says so" >&2
else
    echo "frameworks: no ok train rows with a glibc baseline: no profile" >&2
fi

# 3. each program recorded once (under glibc), replayed under every configuration
rm -f "$OUT/replay.csv"
REPLAY_W=""
for prog in $(sed -n 's/^\[workload exec \([a-z_]*\)\]/\1/p' "$OUT/frameworks.ini"); do
    cmd=$(awk -v p="$prog" '/^\[/ { on = ($0 == "[workload exec " p "]") } on && /^cmd *=/ { sub(/^cmd *= */, ""); print }' "$OUT/frameworks.ini")
    case $cmd in sh\ *) echo "frameworks: $prog not recorded: a server and its client in one trace would replay as one program" >&2; continue ;; esac
    prog_bin=${cmd%% *}
    [ -x "$prog_bin" ] || { echo "frameworks: $prog not recorded: $prog_bin is not built" >&2; continue; }
    # the trace is named as frameworks.py names the program: its script's or binary's stem
    stem=""
    for w in $cmd; do case $w in *.py) stem=$(basename "$w" .py); break ;; esac; done
    [ -n "$stem" ] || stem=$(basename "$prog_bin")
    say "record $prog ($stem.mbt)"
    # shellcheck disable=SC2086
    $MB record -o "$OUT/$stem.mbt" --force -- $cmd > "$OUT/$stem.record.log" 2>&1 ||
        { echo "frameworks: recording $prog failed (see $OUT/$stem.record.log)" >&2; continue; }
    # fast: the allocators ranked by their own speed; recorded: each call at its recorded
    # time, so that an allocator that purges on a timer does so as in the program (the counts)
    REPLAY_W="$REPLAY_W -w replay:trace=$OUT/$stem.mbt -w replay:trace=$OUT/$stem.mbt,timing=recorded"
done
if [ -n "$REPLAY_W" ]; then
    say "replay.csv"
    # shellcheck disable=SC2086
    $MB run -m "$OUT/frameworks.ini" $REPLAY_W -r "$SIDE_REPS" --warmup-runs 0 -o "$OUT/replay.csv" --force --keep-going
fi

# 4. the synthetic workloads at the programs' shapes: elementwise.py's 16 MiB tensors,
# asked for as PyTorch asks (posix_memalign(64): mimalloc 2.0.9 caches an exact 16 MiB
# malloc block and unmaps an aligned one), train.py's 16384 x 128 x 4 B = 8 MiB
# activations; from a trace (sizes and alignments) where this build takes trace:FILE
SYNTH_W="-w tensor_copy:size=16M,count=4,align=64 -w train_step:layers=8M/8M/8M/8M,threads=1"
if [ -f "$OUT/elementwise.mbt" ] && $MB run -w "tensor_copy:size=trace:$OUT/elementwise.mbt,align=trace" -a glibc --print-commands >/dev/null 2>&1; then
    SYNTH_W="$SYNTH_W -w tensor_copy:size=trace:$OUT/elementwise.mbt,align=trace"
    [ -f "$OUT/train.mbt" ] && SYNTH_W="$SYNTH_W -w train_step:layers=trace:$OUT/train.mbt,steps=5,threads=1"
else
    echo "frameworks: no trace-driven synthetic rows: this build's size specs take no trace:FILE (workloads/dist.c)" >&2
fi
say "synth.csv"
# shellcheck disable=SC2086
$MB run -m "$OUT/frameworks.ini" $SYNTH_W -r "$SIDE_REPS" --warmup-runs 0 -o "$OUT/synth.csv" --force --keep-going

say "report"
$PYTHON scripts/frameworks.py "$OUT/fw.csv" --replay "$OUT/replay.csv" --synth "$OUT/synth.csv" \
    --match tensor_copy elementwise --match train_step train \
    ${LEFT_A:+--left-out "configurations: $LEFT_A"} ${LEFT_P:+--left-out "programs: $LEFT_P"} \
    --profile-dir "$OUT/profile.profile" -o "$OUT/frameworks.md" --force  # the suite's own folder, rewritten
say "done: $OUT/frameworks.md"
