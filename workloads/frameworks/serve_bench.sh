#!/bin/sh
# serve_bench.sh - the served model under `mallocbench exec` until the harness
# has its `serve` command: starts serve_model.py (it inherits the allocator
# preload), waits for its ready line, runs the load generator WITHOUT the
# preload (client.py, or wrk with wrk_predict.lua), stops the server, prints
# the client's `requests/s: R p50_ms: A p99_ms: B errors: E` line.
#
#     serve_bench.sh [client|wrk] [ARGS...]    (default: client --requests 200)
#     mallocbench exec --metric 'requests/s: ([0-9.]+)' --unit req/s -- \
#         sh workloads/frameworks/serve_bench.sh client --requests 200
#
# The measured region (MB_SYNC_FD) is the load only: from the ready line to
# the client's exit.  The counters still cover the client too (perf follows
# every descendant); the client is small next to the server, but `serve`
# will separate them.  ARGS go to client.py, or to wrk (default -t1 -c2 -d1s).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
kind=${1:-client}
[ $# -gt 0 ] && shift
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$py" "$here/serve_model.py" --port 0 >"$tmp/server.out" &
srv=$!
i=0
until grep -q '^ready: ' "$tmp/server.out" 2>/dev/null; do
    if ! kill -0 "$srv" 2>/dev/null || [ $i -ge 600 ]; then
        echo "serve_bench.sh: serve_model.py did not get ready" >&2
        cat "$tmp/server.out" >&2
        exit 1
    fi
    i=$((i + 1))
    sleep 0.05
done
url=$(sed -n 's/^ready: //p' "$tmp/server.out")

mark() {  # include/mallocbench.h's protocol; nothing outside the harness
    [ -n "${MB_SYNC_FD:-}" ] || return 0
    printf '%s\n' "$1" >&"$MB_SYNC_FD"
    # head, not dd: dd's page-aligned aligned_alloc(4096, 1) fails under scudo
    # (C11 wants the size a multiple of the alignment): "memory exhausted"
    head -c 1 <&"$MB_SYNC_FD" >/dev/null
}

mark begin
set +e  # the client's failure is the row's: report it after stopping the server
case $kind in
client) [ $# -gt 0 ] || set -- --requests 200
        env -u LD_PRELOAD "$py" "$here/client.py" "$url" "$@" ;;
wrk)    [ $# -gt 0 ] || set -- -t1 -c2 -d1s
        env -u LD_PRELOAD wrk "$@" -s "$here/wrk_predict.lua" "$url" ;;
*)      echo "serve_bench.sh: unknown client '$kind' (client or wrk)" >&2; exit 2 ;;
esac
rc=$?
set -e
mark end
kill -TERM "$srv"
wait "$srv" || true
cat "$tmp/server.out"
exit $rc
