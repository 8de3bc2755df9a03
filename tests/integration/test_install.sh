#!/bin/sh
# test_install.sh - `meson install` of this build into a fresh --destdir,
# moved elsewhere, works on its own: version, list allocators (glibc
# installed), one real tensor_copy sample (one CSV row, status ok), compare
# and tune through the installed mallocbench Python package (python's
# purelib/mallocbench), and `python3 -m mallocbench.report` from that
# package, each run from another directory; no installed file names the
# build tree.  Usage: test_install.sh <builddir>/mallocbench MESON PYTHON.
set -u

usage="usage: test_install.sh HARNESS MESON PYTHON"
harness=${1:?$usage}
meson=${2:?$usage}
python=${3:?$usage}
build=$(cd "$(dirname "$harness")" && pwd -P) || exit 1
if [ ! -f "$build/meson-private/install.dat" ]; then
	echo "FAIL: '$build' (the directory of '$harness') is not a meson build directory" >&2
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

if ! "$meson" install -C "$build" --destdir "$tmp/dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log" >&2
	echo "FAIL: meson install into $tmp/dest failed" >&2
	exit 1
fi
# where it went did not matter: move the whole tree
mv "$tmp/dest" "$tmp/moved" || exit 1
bin=$(find "$tmp/moved" -type f -name mallocbench -perm -u+x)
if [ -z "$bin" ] || [ "$(printf '%s\n' "$bin" | wc -l)" -ne 1 ]; then
	echo "FAIL: expected one installed mallocbench, found: '$bin'" >&2
	exit 1
fi
echo "installed: $bin"
script=$(find "$tmp/moved" -type f -path '*-packages/mallocbench/compare.py')
[ -n "$script" ] || fail "no .../*-packages/mallocbench/compare.py installed (the Python package)"
pkg=$(dirname "$script")
# the package is installed whole (meson.build installs the folder, no list): every module of
# the source's scripts/mallocbench but dashboard.py, and the schema, nothing else
src=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
	"$build/meson-info/meson-info.json") || fail "no source directory in $build/meson-info/meson-info.json"
(cd "$src/scripts/mallocbench" && ls -- *.py | grep -vx dashboard.py; echo schema.json) | sort >"$tmp/want"
ls -A "$pkg" | sort >"$tmp/got"
[ "$(wc -l <"$tmp/want")" -ge 15 ] || fail "read too few modules in $src/scripts/mallocbench: $(cat "$tmp/want")"
diff "$tmp/want" "$tmp/got" >"$tmp/pkg.diff" ||
	fail "the installed package is not the source's modules (but dashboard.py) and schema.json: $(cat "$tmp/pkg.diff")"

# Nothing that runs may name the build tree (debug info aside: strip a copy).
for f in $(find "$tmp/moved" -type f); do
	case $f in
	*.py) cp "$f" "$tmp/stripped" ;;
	*) strip -o "$tmp/stripped" "$f" 2>/dev/null || cp "$f" "$tmp/stripped" ;;
	esac
	! grep -qaF "$build" "$tmp/stripped" || fail "$f names the build tree '$build'"
done

cd "$tmp" || exit 1
out=$("$bin" version 2>&1) || fail "version: $out"
case $out in
"mallocbench "[0-9]*) ;;
*) fail "version printed '$out'" ;;
esac

"$bin" list allocators >"$tmp/list.out" 2>&1 || fail "list allocators: $(cat "$tmp/list.out")"
awk '$1 == "glibc" && $2 == "yes" { found = 1 } END { exit !found }' "$tmp/list.out" ||
	fail "list allocators does not show glibc installed: $(cat "$tmp/list.out")"

if ! "$bin" run -q -w tensor_copy:size=1M,count=2,steps=5 -a glibc -r 1 -o "$tmp/out.csv" \
	>"$tmp/run.out" 2>&1; then
	fail "run: $(cat "$tmp/run.out")"
else
	rows=$("$python" -c 'import csv, sys; print(" ".join(r["status"] for r in csv.DictReader(open(sys.argv[1]))))' \
		"$tmp/out.csv" 2>&1)
	[ "$rows" = ok ] || fail "out.csv: expected one row with status ok, got statuses '$rows'"
fi

# compare through the installed script: a real run, then a marker proves
# that the installed copy, not the source tree's, is the one run.
if [ -f "$tmp/out.csv" ] && [ -n "$script" ]; then
	# two runs (one run against itself is refused: its samples would be compared with themselves)
	"$bin" run -q -w tensor_copy:size=1M,count=2,steps=5 -a glibc -r 1 -o "$tmp/out2.csv" >"$tmp/run2.out" 2>&1 ||
		fail "run 2: $(cat "$tmp/run2.out")"
	"$bin" compare "$tmp/out.csv" "$tmp/out2.csv" >"$tmp/compare.out" 2>&1 ||
		fail "compare: $(tail -n 3 "$tmp/compare.out")"
	# the installed package read from another directory, no PYTHONPATH, no schema but its own
	mkdir -p "$tmp/elsewhere"
	(cd "$tmp/elsewhere" && env -u PYTHONPATH -u MB_SCHEMA PYTHONPATH="$(dirname "$pkg")" "$python" -m mallocbench.report \
		"$tmp/out.csv" -o "$tmp/report" --no-plots) >"$tmp/report.out" 2>&1 ||
		fail "python3 -m mallocbench.report from the installed package: $(tail -n 3 "$tmp/report.out")"
	grep -q "tensor_copy" "$tmp/report/report.md" 2>/dev/null || fail "the installed report.md does not name the workload"
	# the Python API from the installed package: every module it names is installed
	(cd "$tmp/elsewhere" && env -u PYTHONPATH -u MB_SCHEMA PYTHONPATH="$(dirname "$pkg")" "$python" -c \
		'import sys, mallocbench
r = mallocbench.load(sys.argv[1])
try:
    c = mallocbench.compare(r)["schema"]
except ImportError as e:  # no scipy in this interpreter: said, by package
    c = str(e)
    assert "is missing: apt-get install python3-" in c, c
with mallocbench.region():
    pass
print("api", len(r.rows), c)' "$tmp/out.csv") >"$tmp/api.out" 2>&1 ||
		fail "the installed Python API: $(tail -n 3 "$tmp/api.out")"
	# python3 -m puts the current directory first: the harness keeps it out (PYTHONSAFEPATH)
	printf 'raise SystemExit("the csv.py of the current directory was imported")\n' >"$tmp/elsewhere/csv.py"
	(cd "$tmp/elsewhere" && env -u PYTHONPATH -u PYTHONSAFEPATH "$bin" compare "$tmp/out.csv" "$tmp/out2.csv") \
		>"$tmp/compare2.out" 2>&1 || fail "compare from a folder holding a csv.py: $(tail -n 3 "$tmp/compare2.out")"
	rm -f "$tmp/elsewhere/csv.py"
	printf 'import os, sys\nprint("installed-copy", sys.argv[1:], os.environ.get("PYTHONPATH"))\n' >"$script"
	got=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$bin" compare x.csv 2>&1)
	[ "$got" = "installed-copy ['x.csv'] $(dirname "$pkg")" ] ||
		fail "compare did not run the installed package's module: '$got'"
	printf 'import sys\nprint("installed-tune", sys.argv[1:4])\n' >"$pkg/tune.py"
	got=$(cd "$tmp/elsewhere" && env -u PYTHONPATH "$bin" tune -w tensor_copy:size=1M -a glibc -o "$tmp/tune.md" 2>&1)
	case $got in
	"installed-tune ['--families', "*) ;;
	*) fail "tune did not run the installed package's module: '$got'" ;;
	esac
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "ok: installed, moved, and ran from $tmp/moved"
exit 0
