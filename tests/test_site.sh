#!/bin/sh
# test_site.sh PYTHON NODE SRCROOT OUTDIR [history] - the dashboard checked in
# chromium.  Default: scripts/site.py builds OUTDIR/site-fixture from the
# hand-made fixture series.json (every status); with `history`, a synthetic
# history of 30 nights x 2 machines (tests/make_history.py) goes through the
# detector first (PYTHON needs scipy), as `make dashboard` does.
# tests/test_site.mjs opens every page and writes the overview's screenshot.
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
if [ "${5:-}" = history ]; then
    rm -rf "$OUT/site-history-data" "$OUT/site-history"
    "$PYTHON" "$SRC/tests/make_history.py" "$OUT/site-history-data" --nights 30 --machines 2
    rc=0
    "$PYTHON" "$SRC/scripts/detect.py" "$OUT/site-history-data" --out "$OUT/site-history" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "test_site: detect.py exit $rc"; exit 1; }
    "$PYTHON" "$SRC/scripts/site.py" "$OUT/site-history/series.json" "$OUT/site-history"
    exec "$NODE" "$SRC/tests/test_site.mjs" "$OUT/site-history" "$OUT/site-history-overview.png"
fi
"$PYTHON" "$SRC/scripts/site.py" "$SRC/tests/fixtures/series.json" "$OUT/site-fixture"
exec "$NODE" "$SRC/tests/test_site.mjs" "$OUT/site-fixture" "$OUT/site-overview.png"
