"""benchlib.py - shared by the benchmark scripts: run the harness, read its
CSV by column name, get the command it prints for a sample, run a command
under perf stat and read the counts back."""
import csv
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile


def harness_rows(mb, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.csv")
        subprocess.run([mb, "run", "-q", "-o", out, *args], check=True)
        with open(out, newline="") as f:
            return list(csv.DictReader(f))


def installed(mb):
    lines = subprocess.run([mb, "list", "allocators"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[1:]
    return [l.split()[0] for l in lines if l.split()[1] == "yes"]


def printed_command(mb, *args):
    """argv of the first sample's command as --print-commands shows it."""
    out = subprocess.run([mb, "run", "--print-commands", "-r", "1", *args], capture_output=True,
                         text=True, check=True).stdout
    return shlex.split([l for l in out.splitlines() if not l.startswith("#")][0])


PERF_EVENTS = {
    "page-faults": "total_minor_faults",
    "syscalls:sys_enter_madvise": "total_madvise_calls",
    "syscalls:sys_enter_munmap": "total_munmap_calls",
    "syscalls:sys_enter_brk": "total_brk_calls",
    "syscalls:sys_enter_mmap": "total_mmap_calls",
}


def perf_stat(argv):
    """Counts, user and sys seconds of one run of argv under perf stat."""
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as tmp:
        subprocess.run(["perf", "stat", "--no-big-num", "-o", tmp.name, "-e", ",".join(PERF_EVENTS), "--", *argv],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = open(tmp.name).read()
    got = {}
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.]+)\s+(\S+)", line)
        if m and m.group(2) in PERF_EVENTS:
            got[PERF_EVENTS[m.group(2)]] = float(m.group(1))
        m = re.match(r"\s*([0-9.]+) seconds (user|sys)", line)
        if m:
            got["total_" + m.group(2) + "_s"] = float(m.group(1))
    return got


def median(xs):
    return statistics.median(xs)


def skip_unless(cond, why):
    if not cond:
        print("SKIP:", why, file=sys.stderr)
        sys.exit(77)
