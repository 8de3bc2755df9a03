#!/bin/sh
# sanitizer-reports.sh DIR - after the sanitizer build's tests: print every
# ASan/LSan/UBSan report the harness and the C tests left in DIR (the test
# setup's log_path), and fail when there is one, even if the test that
# caused it passed (a report in a run that was expected to fail anyway).
set -u
dir=$1
n=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    echo "==== $f"
    cat "$f"
done
if [ "$n" -gt 0 ]; then
    echo "sanitizer-reports.sh: $n report(s) in $dir" >&2
    exit 1
fi
echo "sanitizer-reports.sh: no sanitizer reports"
