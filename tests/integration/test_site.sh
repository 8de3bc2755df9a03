#!/bin/sh
# test_site.sh PYTHON NODE SRCROOT OUTDIR [history|hostile] - the dashboard checked in
# chromium.  Default: scripts/dashboard.py builds OUTDIR/site-fixture from the
# hand-made fixture series.json (every status); with `history`, a synthetic
# history of 30 nights x 3 machines (tests/make_history.py) goes through the
# detector first (PYTHON needs scipy), as `make dashboard` does, with two
# families no script names (scudo, tbbmalloc).  Each family's swatch must be
# its sidecar colour (the fallback for the fixture, which has none).  With
# `hostile`, the histories of tests/integration/test_hostile.py's hostile labels and commands
# (issue 18): any dialog, console error or request outside the site fails.
# tests/integration/test_site.mjs opens every page and writes the overview's screenshot.
# Exit 77 (skip) without node, node_modules (`npm ci`) or chromium.
set -eu
PYTHON=$1 NODE=$2 SRC=$3 OUT=$4
if [ -z "$NODE" ] || ! [ -x "$NODE" ]; then
    echo "test_site: SKIP: node not found (scripts/deps.sh test installs it)"; exit 77
fi
if ! [ -d "$SRC/node_modules/uplot" ] || ! [ -d "$SRC/node_modules/puppeteer-core" ]; then
    echo "test_site: SKIP: node_modules missing (run \`npm ci\` in $SRC; make test does)"; exit 77
fi
if ! [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "test_site: SKIP: no chromium (scripts/deps.sh test installs it)"; exit 77
fi
# swatch SITE CONFIG COLOUR: CONFIG's series pages and its overview column show COLOUR
swatch() {
    pages=$(ls "$1"/series/*-"$2"-*.html 2>/dev/null || true)
    [ -n "$pages" ] || { echo "test_site: FAIL: no series page of $2"; exit 1; }
    for f in $pages; do
        grep -q "<h1><span class=\"sw\" style=\"background:$3\">" "$f" \
            || { echo "test_site: FAIL: $f: $2's swatch is not $3"; exit 1; }
    done
    grep -q "<th><span class=\"sw\" style=\"background:$3\"></span>$2</th>" "$1/index.html" \
        || { echo "test_site: FAIL: index.html: $2's column swatch is not $3"; exit 1; }
}
if [ "${5:-}" = hostile ]; then
    # tests/integration/test_hostile.py's seeded cases (hostile labels, units, parameters, commands), each
    # kept as a history's site in $OUT/site-hostile/site-K, every one opened in chromium
    rm -rf "$OUT/site-hostile"
    mkdir -p "$OUT/site-hostile"
    MB_HOSTILE_SITE="$OUT/site-hostile" "$PYTHON" "$SRC/tests/integration/test_hostile.py" \
        "$SRC/tests/fixtures/small-run.csv" "" 8 || { echo "test_site: test_hostile.py failed"; exit 1; }
    n=0
    for site in "$OUT"/site-hostile/site-*; do
        [ -f "$site/index.html" ] || continue
        "$NODE" "$SRC/tests/integration/test_site.mjs" "$site" || exit 1
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || { echo "test_site: FAIL: no hostile site was built"; exit 1; }
    exit 0
fi
if [ "${5:-}" = history ]; then
    rm -rf "$OUT/site-history-data" "$OUT/site-history"
    # scudo and tbbmalloc: families no script names, coloured by their sidecars only
    "$PYTHON" "$SRC/tests/make_history.py" "$OUT/site-history-data" --nights 30 --machines 3 \
        --family scudo=#E69F00 --family tbbmalloc=#56B4E9
    rc=0
    "$PYTHON" "$SRC/scripts/detect.py" "$OUT/site-history-data" --out "$OUT/site-history" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "test_site: detect.py exit $rc"; exit 1; }
    "$PYTHON" "$SRC/scripts/dashboard.py" "$OUT/site-history/series.json" "$OUT/site-history"
    swatch "$OUT/site-history" scudo "#E69F00"
    swatch "$OUT/site-history" tbbmalloc "#56B4E9"
    swatch "$OUT/site-history" jemalloc "#D55E00"
    exec "$NODE" "$SRC/tests/integration/test_site.mjs" "$OUT/site-history" "$OUT/site-history-overview.png"
fi
"$PYTHON" "$SRC/scripts/dashboard.py" "$SRC/tests/fixtures/series.json" "$OUT/site-fixture"
# a series.json without colours (written before the sidecars carried them): the fallback, in family order
swatch "$OUT/site-fixture" glibc "#0072B2"
swatch "$OUT/site-fixture" mimalloc "#CC79A7"
exec "$NODE" "$SRC/tests/integration/test_site.mjs" "$OUT/site-fixture" "$OUT/site-overview.png"
