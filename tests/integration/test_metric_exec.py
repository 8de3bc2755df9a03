#!/usr/bin/env python3
"""test_metric_exec.py - `exec --metric` reports the figure the command printed last, or the
row is an error saying why not (issue 43), end to end through the sample's output window
(its first and last 4 KiB kept).

Usage: test_metric_exec.py MALLOCBENCH.  One case, each command a printf of sh:
  - a figure only in the first 4 KiB, then more than 8 KiB of other output: the figure
    printed last is unknown (it may lie in the output not kept), so the row is an error
    that says so, not `ok` with the head's figure; with the figure also in the last 4 KiB,
    that one, ok; an output of 4097 bytes, all of it in the two, whose figure straddles their
    seam: whole, ok;
  - a progress line rewritten with \\r ("rate: 12.0\\rrate: 15.0"): 15.0, what was printed last;
  - a NUL byte before the last figure: the output is read by its length, so the figure
    after the NUL, not the one before it."""
import os

from mbtest import check, check_eq, main, rows, run


def exec_row(mb, tmp, name, script, *opts):
    out = os.path.join(tmp, f"{name}.csv")
    run(mb, "exec", "-q", "--force", "-o", out, "-a", "glibc", "-r", "1", *opts, "--", "sh", "-c", script,
        expect_rc=None)
    got = rows(out)
    check_eq(len(got), 1, f"{name}: one row")
    return got[0]


def case_last(mb, tmp):
    filler = "head -c 9000 /dev/zero | tr '\\0' x; echo"
    r = exec_row(mb, tmp, "gap", f"echo 'rate: 1'; {filler}", "--metric", r"rate: ([0-9.]+)")
    check(r["status"] == "error" and "printed last is unknown" in r["message"] and r["throughput"] == "",
          f"a figure only before output not kept: {r['status']}: {r['message']!r}: {r['throughput']!r}")
    r = exec_row(mb, tmp, "gap_tail", f"echo 'rate: 1'; {filler}; echo 'rate: 3'", "--metric",
                 r"rate: ([0-9.]+)")
    check_eq((r["status"], r["throughput"]), ("ok", "3"), "the figure in the last 4 KiB")
    # 4097 bytes: the first and last 4095 kept hold all of it, so "123456" across their seam is whole
    r = exec_row(mb, tmp, "seam", "printf '123456\\n'; head -c 4089 /dev/zero | tr '\\0' x; echo", "--metric",
                 "^([0-9]+)$")
    check_eq((r["status"], r["throughput"]), ("ok", "123456"), "a line across the seam of head and tail")
    r = exec_row(mb, tmp, "cr", r"printf 'rate: 12.0\rrate: 15.0\n'", "--metric", r"rate: (.*)")
    check_eq((r["status"], r["throughput"]), ("ok", "15"), "a line rewritten with \\r: the text after the \\r")
    r = exec_row(mb, tmp, "nul", r"printf 'rate: 5\n\000\nrate: 7\n'", "--metric", r"rate: ([0-9]+)")
    check_eq((r["status"], r["throughput"]), ("ok", "7"), "a NUL byte hides nothing after it")


if __name__ == "__main__":
    raise SystemExit(main({"last": case_last}))
