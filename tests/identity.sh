#!/bin/sh
# tests/identity.sh ROOT BUILD OUTDIR - the deterministic outputs of one tree,
# for a byte-for-byte diff against another (a restructure keeps them: issue 30).
# Writes OUTDIR/<name> for: the harness's usage and every command's --help,
# `list` of each kind, `schema` and `schema --json`, `run --print-commands`,
# the cells of a fixed --seed run that do not measure anything (plan, labels,
# settings, status, checksums), and the scripts' outputs on tests/fixtures
# (summary, compare, report.md, detect on a made-up history, frameworks).
# Messages that name a path are written with ROOT and BUILD replaced by
# <root> and <build>.  Needs /usr/bin/python3 with scipy (compare).
set -u
root=$(cd "$1" && pwd) build=$(cd "$2" && pwd) out=$3
mkdir -p "$out"
mb="$build/mallocbench"
py=/usr/bin/python3
fx="$root/tests/fixtures"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# each command's output, stdout and stderr apart, and its exit code
o() {
    name=$1; shift
    "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo "$?" >"$out/$name.rc"
    sed -i "s#$root#<root>#g; s#$build#<build>#g; s#$work#<work>#g" "$out/$name.out" "$out/$name.err"
}

o usage "$mb" --help
for c in run exec serve record list tune compare merge calibrate schema; do
    o "help-$c" "$mb" "$c" --help
done
o trace-help "$mb" trace
o unknown "$mb" frobnicate
for k in allocators workloads events tunables "tunables jemalloc"; do
    # shellcheck disable=SC2086
    o "list-$(echo "$k" | tr ' ' -)" "$mb" list $k
done
o schema "$mb" schema
o schema-json "$mb" schema --json
o print-commands "$mb" run -w tensor_copy:size=1M -w arena_churn -a glibc,jemalloc,mimalloc \
    -t jemalloc:dirty_decay_ms=0,-1 -r 2 --seed 7 --print-commands
o print-commands-matrix "$mb" run -m "$root/matrices/quick.ini" --seed 3 --print-commands

# a fixed-seed run: only the cells that measure nothing
o seeded-run "$mb" run -w tensor_copy:size=1M,steps=5 -w arena_churn:ops=20000,warmup=1000 -a glibc,jemalloc \
    -t jemalloc:dirty_decay_ms=0,-1 -r 2 --seed 11 -o "$work/seeded.csv"
rm -f "$out/seeded-run.out" "$out/seeded-run.err"   # progress lines: measured figures
$py - "$work/seeded.csv" >"$out/seeded-cells.csv" <<'EOF'
import csv, sys
keep = ["schema_version", "sample", "matrix_id", "plan_seed", "block", "position", "shard",
        "workload", "workload_params", "work_scale", "allocator", "config", "lib_path",
        "alloc_version", "malloc_so", "requested_tunables", "effective_tunables", "repetition",
        "status", "message", "throughput_unit", "metric", "metric_better", "region_bytes",
        "region_ops", "checksum", "latency_what"]
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
w = csv.writer(sys.stdout)
w.writerow(keep)
for r in rows:
    w.writerow([r.get(k, "<missing>") for k in keep])
EOF

# the scripts on the fixtures
s="$root/scripts"
o summary $py "$s/summary.py" "$fx/small-run.csv"
o summary-md $py "$s/summary.py" --markdown "$fx/small-run.csv" "$fx/idle-release.csv"
o summary-exec $py "$s/summary.py" "$fx/exec-fixed.csv"
o summary-new $py "$s/summary.py" "$fx/new-families.csv"
o compare $py "$s/compare.py" "$fx/small-run.csv"
o compare-base $py "$s/compare.py" --baseline jemalloc "$fx/small-run.csv" --csv-out "$work/cmp.csv"
cp "$work/cmp.csv" "$out/compare-base.csv" 2>/dev/null
o compare-idle $py "$s/compare.py" "$fx/idle-release.csv"
o report $py "$s/report.py" "$fx/small-run.csv" -o "$work/report" --no-plots
cp "$work/report/report.md" "$out/report.md" 2>/dev/null
o frameworks $py "$s/frameworks.py" "$fx/frameworks-fw.csv" --replay "$fx/frameworks-replay.csv"
# the package and the tests' helpers on the path where this tree has the package (issue 30)
pp=""
[ -d "$root/scripts/mallocbench" ] && pp="$root/scripts:$root/tests"
PYTHONPATH=$pp $py "$root/tests/make_history.py" "$work/hist" --nights 12 --machines 1 --seed 4 >/dev/null 2>&1
o detect $py "$s/detect.py" "$work/hist" --out "$work/det" --json "$work/detect.json"
$py - "$work/detect.json" "$work" >"$out/detect.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
d.pop("generated", None)
print(json.dumps(d, sort_keys=True, indent=1).replace(sys.argv[2], "<work>"))
EOF
o history-latest $py "$s/history.py" latest "$work/hist"
o bad-csv $py "$s/summary.py" "$fx/series.json"
exit 0
