#!/usr/bin/env python3
"""test_run.py - mallocbench run end to end, as a user runs it.

Usage: test_run.py MALLOCBENCH CASE.  Each case runs the harness and checks
what it wrote: rows with a proven allocator, faults counted, equal
checksums; bad input refused before any run; a crashing or hanging child
becomes a row with its status while the other runs go on.  Exit 77 = skip.
"""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys

from mbtest import SKIP, check, installed, main, rows, run

def case_allocators(mb, tmp):
    """Every installed allocator runs tensor_copy, is proven, counts faults."""
    allocs = installed(mb)
    check("glibc" in allocs, "glibc listed as installed")
    out = os.path.join(tmp, "a.csv")
    run(mb, "run", "-q", "-w", "tensor_copy:size=4M,count=2,steps=3,warmup=1", "-a", ",".join(allocs),
        "-r", "1", "-o", out)
    rs = rows(out)
    check(len(rs) == len(allocs), f"{len(rs)} rows for {len(allocs)} allocators")
    sums = set()
    for r in rs:
        a = r["allocator"]
        check(r["schema_version"] == "9", "schema_version 9")
        check(r["status"] == "ok", f"{a}: status {r['status']} {r['message']}")
        if a == "glibc":
            check(os.path.basename(r["malloc_so"]).startswith("libc.so"), f"glibc served by {r['malloc_so']}")
        else:
            check(os.path.realpath(r["malloc_so"]) == os.path.realpath(r["lib_path"]),
                  f"{a}: malloc served by {r['malloc_so']}, asked {r['lib_path']}")
        check(r["alloc_version"] != "", f"{a}: version read")
        check(int(r["total_minor_faults"]) > 4 * 1024 * 1024 // 4096, f"{a}: faults {r['total_minor_faults']}")
        check(int(r["region_bytes"]) == 4 * 1024 * 1024 * 2 * 3, f"{a}: region bytes {r['region_bytes']}")
        check(float(r["throughput"]) > 0 and r["throughput_unit"] == "B/s", f"{a}: throughput")
        check(float(r["region_wall_s"]) < float(r["total_wall_s"]), f"{a}: region inside the run")
        check(int(r["region_minor_faults"]) <= int(r["total_minor_faults"]), f"{a}: region faults <= total")
        check(int(r["rss_peak_kib"]) >= 4 * 1024, f"{a}: sampled peak RSS {r['rss_peak_kib']}")
        check(r["counter_notes"] == "" or os.geteuid() != 0, f"{a}: all counters counted as root: {r['counter_notes']}")
        sums.add(r["checksum"])
    check(len(sums) == 1, f"one checksum across allocators: {sums}")
    meta = out[:-4] + ".meta.json"
    check(os.path.exists(meta), "sidecar written")
    with open(meta) as f:
        side = json.load(f)
    described = json.loads(run(mb, "list", "workloads", "--json").stdout)["workloads"]
    check(list(side)[-1] == "workloads", f"\"workloads\" is the sidecar's last key: {list(side)}")
    check(side["workloads"] == [{k: w[k] for k in ("name", "metric", "lower_is_better", "traits")} for w in described],
          f"the sidecar's workloads are list --json's, in table order: {side['workloads']}")
    series = rows(out[:-4] + ".rss.csv")
    check(len(series) > 0 and set(series[0]) == {"run_id", "sample", "t_s", "rss_kib"}, "RSS series")


def case_tunables(mb, tmp):
    """A verified setting changes the figures; one the allocator ignores is an error."""
    allocs = installed(mb)
    if "jemalloc" not in allocs:
        sys.exit(SKIP)
    out = os.path.join(tmp, "t.csv")
    run(mb, "run", "-q", "-w", "tensor_copy:size=16M,count=2,steps=6,warmup=2", "-a", "jemalloc",
        "-t", "jemalloc:dirty_decay_ms=10000,-1", "-r", "1", "-o", out)
    rs = {r["config"]: r for r in rows(out)}
    d, k = rs.get("jemalloc[dirty_decay_ms=10000]"), rs.get("jemalloc[dirty_decay_ms=-1]")
    check(d is not None and k is not None, f"both configurations: {list(rs)}")
    if d and k:
        check("dirty_decay_ms=-1" in k["effective_tunables"].split(";"), "effective -1 read back")
        check(k["requested_tunables"] == "dirty_decay_ms=-1", "requested recorded")
        # defaults purge 16 MiB buffers on free: ~4096 faults per buffer per step
        check(int(d["region_minor_faults"]) > 2 * 6 * 4000, f"default re-faults: {d['region_minor_faults']}")
        check(int(k["region_minor_faults"]) < int(d["region_minor_faults"]) / 10,
              f"dirty_decay_ms=-1 removes faults: {k['region_minor_faults']}")
        check(int(d["region_madvise_calls"]) >= 2 * 6, f"default madvises: {d['region_madvise_calls']}")
    # jemalloc carries on after clamping narenas; we do not
    p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-a", "jemalloc", "-t", "jemalloc:narenas=100000",
            "-r", "1", "-o", os.path.join(tmp, "n.csv"), expect_rc=1)
    check("narenas" in p.stderr and len(p.stderr.strip().splitlines()) == 1, f"narenas refused: {p.stderr!r}")
    check(not os.path.exists(os.path.join(tmp, "n.csv")), "no CSV left by a refused run")
    if "tcmalloc" in allocs:
        p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-a", "tcmalloc",
                "-t", "tcmalloc:max_total_thread_cache_bytes=1", "-r", "1", "-o", os.path.join(tmp, "c.csv"),
                expect_rc=1)
        check("did not take effect" in p.stderr, f"tcmalloc clamp caught: {p.stderr!r}")


def case_pin_threads(mb, tmp):
    """--pin-threads: the sample's command carries MB_PIN_THREADS=1, and under it each
    thread arena_churn starts is pinned to one CPU of the process's set, a different
    one each while there are enough; a run with it gives ok rows."""
    import time
    spec = "arena_churn:threads=2,ops=4000000"
    p = run(mb, "run", "--print-commands", "-w", spec, "-a", "glibc", "-r", "1", "--pin-threads")
    cmd = [l for l in p.stdout.splitlines() if not l.startswith("#")][0]
    check("MB_PIN_THREADS=1" in cmd, f"the printed command pins threads: {cmd}")
    child = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}
    try:
        for _ in range(200):
            time.sleep(0.02)
            pids = subprocess.run(["pgrep", "-f", "mallocbench-worker arena_churn threads=2 ops=4000000"],
                                  capture_output=True, text=True).stdout.split()
            for pid in pids:
                tasks = os.path.join("/proc", pid, "task")
                try:
                    for t in os.listdir(tasks):
                        with open(os.path.join(tasks, t, "status")) as f:
                            seen[t] = re.search(r"Cpus_allowed_list:\s*(\S+)", f.read()).group(1)
                except OSError:
                    pass
            if len(seen) >= 3:
                break
    finally:
        child.kill()
        child.wait()
    ncpu = len(os.sched_getaffinity(0))
    single = sorted(v for v in seen.values() if re.fullmatch(r"\d+", v))
    want = 2 if ncpu >= 2 else 1
    check(len(single) >= 2 and len(set(single)) == want,
          f"the two churn threads each on one CPU, {want} distinct: {seen}")
    out = os.path.join(tmp, "p.csv")
    run(mb, "run", "-q", "-w", "arena_churn:threads=2,ops=20000", "-a", "glibc", "-r", "2", "--pin-threads",
        "--no-limit", "--warmup-runs", "0", "-o", out)  # the two rows checked, no warm-up beside them
    check([r["status"] for r in rows(out)] == ["ok", "ok"], "ok rows with --pin-threads")


def case_require_quiet(mb, tmp):
    """A busy machine: run warns with the figures, and refuses under
    --require-quiet after the proof (whose lines come first) and before any
    sample or output (no CSV)."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() + 2)]
    try:
        import time
        time.sleep(0.5)
        out = os.path.join(tmp, "q.csv")
        p = run(mb, "run", "-w", "tensor_copy:size=1M,count=1,steps=1,warmup=0", "-a", "glibc", "-r", "1",
                "--require-quiet", "-o", out, expect_rc=1)
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
        check(last.startswith("mallocbench: the machine is not quiet: ") and "runnable" in last,
              f"it ends on one line with the figures: {p.stderr!r}")
        check(not os.path.exists(out), "no CSV when refused")
        p = run(mb, "run", "-w", "tensor_copy:size=1M,count=1,steps=1,warmup=0", "-a", "glibc", "-r", "1",
                "-o", os.path.join(tmp, "w.csv"))
        check("warning: the machine is not quiet" in p.stderr, f"a warning without it: {p.stderr!r}")
    finally:
        for b in busy:
            b.kill()
            b.wait()


def case_bad_input(mb, tmp):
    """Bad input: one line naming the cause, exit 2, before anything runs."""
    out = os.path.join(tmp, "bad.csv")
    cases = [
        (["-w", "nope"], "unknown workload 'nope'"),
        (["-w", "tensor_copy:size=16Q"], "'16Q'"),
        (["-w", "tensor_copy:bogus=1"], "unknown parameter 'bogus'"),
        (["-a", "foo"], "unknown allocator 'foo'"),
        (["-a", "jemalloc=/nonexistent/libjemalloc.so"], "/nonexistent/libjemalloc.so"),
        (["-t", "jemalloc:bogus=1"], "dirty_decay_ms"),
        (["-t", "glibc:mmap_threshold=64M"], "out of range"),
        (["-t", "mimalloc:purge_delay=0"], "2.1"),
        (["-r", "0"], "repetition"),
        (["--timeout", "5x"], "--timeout"),
        (["-e", "no-such-event-xyz"], "no-such-event-xyz"),
        # an exclusive minimum excludes the minimum itself
        (["--adaptive", "0"], "--adaptive: bad value '0'"),
        (["-a", "glibc,jemalloc", "--resolution", "0"], "--resolution: bad value '0'"),
    ]
    for args, needle in cases:
        p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-r", "1", "-o", out, *args, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and needle in p.stderr, f"{args}: {p.stderr!r}")
        check(not os.path.exists(out), f"{args}: nothing written")
    # a folder that cannot be made (a file stands where one would be): refused before any run
    afile = os.path.join(tmp, "afile")
    open(afile, "w").close()
    bad = os.path.join(afile, "sub", "x.csv")
    p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-r", "1", "-o", bad, expect_rc=2)
    check(f"cannot write '{bad}'" in p.stderr and "is not a folder" in p.stderr, f"unwritable output: {p.stderr!r}")


def case_wrong_library(mb, tmp):
    """A library of another family is refused with the allocator that really served malloc."""
    allocs = installed(mb)
    if "jemalloc" not in allocs or "mimalloc" not in allocs:
        sys.exit(SKIP)
    lib = [l.split()[2] for l in run(mb, "list", "allocators").stdout.splitlines() if l.startswith("mimalloc")][0]
    out = os.path.join(tmp, "w.csv")
    p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-a", "jemalloc=" + lib, "-r", "1", "-o", out,
            expect_rc=1)
    check("not by jemalloc" in p.stderr and "mimalloc" in p.stderr, f"wrong library: {p.stderr!r}")
    check(not os.path.exists(out), "no rows for a refused configuration")


def case_crash(mb, tmp):
    """Crash, abort, failure and time-out are rows; the runs after them go on."""
    out = os.path.join(tmp, "c.csv")
    p = run(mb, "run", "-q", "-w", "selftest:mode=segv", "-w", "selftest:mode=abort", "-w", "selftest:mode=fail",
            "-w", "selftest:mode=hang", "-w", "tensor_copy:size=1M,steps=2", "-a", "glibc", "--timeout", "1s",
            "--warmup-runs", "0", "-r", "1", "-o", out, expect_rc=4)
    # exit 4: a configuration without an ok sample, each named in one line
    named = [l for l in p.stderr.splitlines() if l.startswith("mallocbench: no ok sample: glibc on selftest")]
    check(len(named) == 4 and "exit 4: 4 configurations without an ok sample" in p.stderr,
          f"each configuration with no ok sample named, exit 4 said: {p.stderr[-600:]!r}")
    rs = {r["workload_params"]: r for r in rows(out)}  # blocks run in a shuffled order
    got = {k: r["status"] for k, r in rs.items()}
    check(got == {"mode=segv": "crashed", "mode=abort": "crashed", "mode=fail": "error", "mode=hang": "timeout",
                  "size=1M,count=4,steps=2,warmup=5,bytes=0,reuse=no,seed=1": "ok"}, f"statuses {got}")
    check("signal 11" in rs["mode=segv"]["message"], f"segv message {rs['mode=segv']['message']!r}")
    check("signal 6" in rs["mode=abort"]["message"], f"abort message {rs['mode=abort']['message']!r}")
    check("asked to fail" in rs["mode=fail"]["message"], f"fail message {rs['mode=fail']['message']!r}")
    check(rs["mode=hang"]["throughput"] == "", "no throughput for a timed-out run")


def case_warmup_stop(mb, tmp):
    """A configuration whose warm-up and first sample fail the same way stops (one row, its
    status), the others run on; --keep-going exits 0 where the same run exits 4."""
    out = os.path.join(tmp, "w.csv")
    args = ["run", "-w", "selftest:mode=segv", "-w", "tensor_copy:size=1M,count=2,steps=2,warmup=0", "-a", "glibc",
            "-r", "3", "--no-limit", "-o", out]
    p = run(mb, *args, expect_rc=4)
    rs = rows(out)
    seg = [r for r in rs if r["workload"] == "selftest"]
    check(len(seg) == 1 and seg[0]["status"] == "crashed", f"the crashing configuration: one row, crashed: {seg}")
    check(sum(r["workload"] == "tensor_copy" and r["status"] == "ok" for r in rs) == 3, "the others ran on")
    check("its warm-up ended crashed" in p.stderr and "glibc on selftest stopped: its warm-up and its sample of block"
          in p.stderr, f"the stop is said, with its message: {p.stderr[-800:]!r}")
    p = run(mb, *args, "--force", "--keep-going", expect_rc=0)
    check("no ok sample: glibc on selftest" in p.stderr, "--keep-going still names it")


def case_default_plan(mb, tmp):
    """No -r: the run is sized for a verdict (--resolution 2%, at least 6 blocks, here at most
    the 8 --max-blocks allows) and says so; -r 3 runs 3 and says no verdict is possible."""
    out = os.path.join(tmp, "d.csv")
    spec = "tensor_copy:size=1M,count=2,steps=2,warmup=0"
    p = run(mb, "run", "-w", spec, "-a", "glibc,jemalloc", "--max-blocks", "8", "--no-limit", "--warmup-runs", "0",
            "-o", out)
    blocks = {r["config"]: len({x["block"] for x in rows(out) if x["config"] == r["config"]}) for r in rows(out)}
    check(blocks and all(n == 8 for n in blocks.values()), f"8 blocks per configuration, one look: {blocks}")
    check("the default without -r" in p.stderr and "tensor_copy jemalloc vs glibc: s" in p.stderr
          and "sequential: " in p.stderr, f"the plan and the stop are said: {p.stderr[-600:]!r}")
    # --resume of a finished default plan: the file's samples count, so nothing is added
    before = len(rows(out))
    p = run(mb, "run", "-w", spec, "-a", "glibc,jemalloc", "--max-blocks", "8", "--no-limit", "--warmup-runs", "0",
            "-o", out, "--resume")
    check(len(rows(out)) == before and "0 samples" in p.stderr,
          f"a finished plan resumed adds nothing: {before} -> {len(rows(out))}: {p.stderr[-300:]!r}")
    out = os.path.join(tmp, "r3.csv")
    p = run(mb, "run", "-w", spec, "-a", "glibc,jemalloc", "-r", "3", "--no-limit", "--warmup-runs", "0", "-o", out)
    check(len({(r["block"], r["config"]) for r in rows(out)}) == 6 and "-r 3: 3 blocks give no verdict" in p.stderr
          and "leave out -r" in p.stderr,
          f"-r 3: 3 blocks and the note: {p.stderr[-400:]!r}")


def case_sequential(mb, tmp):
    """The default plan stops a comparison at its first look once it is settled: jemalloc purging
    every free page against glibc on tensor_copy differs ~100x, so all 8 ratios lie beyond the
    floor and the run stops at block 8 of --max-blocks 10 (looks at 8 and 10); the sidecar's stop
    is what sequential.stop() makes of the CSV's rows (each block's last attempt), and stderr says
    it.  --figure takes throughput or cpu, nothing else."""
    from mallocbench import sequential
    out = os.path.join(tmp, "s.csv")
    p = run(mb, "run", "-w", "tensor_copy:size=1M,count=1,steps=2", "-a", "glibc,jk=jemalloc",
            "-t", "jk:dirty_decay_ms=0", "--max-blocks", "10", "--no-limit", "--warmup-runs", "0", "-o", out)
    got = rows(out)
    check(max(int(r["block"]) for r in got) == 7, f"stopped after block 8: {sorted({r['block'] for r in got})}")
    check("vs glibc: settled at block 8: " in p.stderr and "(99.2% CI, look 1 of 2)" in p.stderr,
          f"the stop on stderr: {p.stderr[-500:]!r}")
    meta = json.load(open(os.path.join(tmp, "s.meta.json")))
    seq = meta.get("sequential") or {}
    check(meta.get("figure") == "throughput" and seq.get("looks") == [{"blocks": 8, "alpha": 0.008},
          {"blocks": 10, "alpha": 0.042}] and seq.get("cap") == 10, f"the schedule planned: {seq}")
    stop = (seq.get("stops") or [{}])[0]
    last = {}                      # (block, config) -> throughput of the block's last attempt
    for r in sorted(got, key=lambda r: int(r.get("attempt") or 0)):
        last[(int(r["block"]), r["config"])] = float(r["throughput"])
    d = [math.log(last[(b, stop.get("config"))] / last[(b, "glibc")]) for b in range(8)]
    want = sequential.stop(d, 10, better=got[0]["metric_better"])
    check(stop.get("look") == 1 and stop.get("blocks") == 8 and stop.get("alpha") == 0.008
          and stop.get("why") == want["why"] and stop.get("params") == got[0]["workload_params"],
          f"the stop recorded: {stop} against {want}")
    for k in ("estimate", "lo", "hi"):
        check(abs(stop.get(k, 0) - want[k]) <= 1e-12 * abs(want[k]), f"{k}: {stop.get(k)} == {want[k]}")
    p = run(mb, "run", "-w", "tensor_copy", "--figure", "wall", "-o", os.path.join(tmp, "f.csv"), expect_rc=2)
    check("--figure: unknown figure 'wall': expected throughput or cpu" in p.stderr and
          not os.path.exists(os.path.join(tmp, "f.csv")), f"a bad --figure refused first: {p.stderr!r}")


def case_new_folder(mb, tmp):
    """-o in folders that do not exist: made after the proof, as tune makes its own; none made
    when the run is refused before it starts."""
    out = os.path.join(tmp, "day", "one", "x.csv")
    run(mb, "run", "-q", "-w", "tensor_copy:size=1M,count=2,steps=2,warmup=0", "-a", "glibc", "-r", "1",
        "--no-limit", "-o", out)
    check(len(rows(out)) == 1 and os.path.exists(os.path.join(tmp, "day", "one", "x.meta.json")),
          "the CSV and its sidecars in the folders made for them")
    refused = os.path.join(tmp, "never", "x.csv")
    run(mb, "run", "-q", "-w", "tensor_copy", "-a", "nosuch", "-o", refused, expect_rc=2)
    check(not os.path.exists(os.path.join(tmp, "never")), "a refused run makes no folder")
    p = run(mb, "run", "-q", "-w", "tensor_copy", "-a", "glibc", "-o", os.path.join(tmp, "a", "..", "x.csv"),
            expect_rc=2)
    check("does not exist" in p.stderr, f"'..' through a missing folder is refused: {p.stderr!r}")


def case_print_commands(mb, tmp):
    """--print-commands prints a runnable command that does the same work."""
    p = run(mb, "run", "--print-commands", "-w", "tensor_copy:size=1M,count=2,steps=2,warmup=0", "-a", "glibc",
            "-t", "glibc:trim_threshold=64M", "-r", "2")
    cmds = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    check(len(cmds) == 2, f"one command per sample: {cmds}")
    check("GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864" in cmds[0], f"tunable in command {cmds[0]}")
    r = subprocess.run(cmds[0], shell=True, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "checksum=" in r.stdout, f"command runs by hand: {r.stdout!r} {r.stderr!r}")


def case_list(mb, tmp):
    for topic in ("allocators", "workloads", "events", "tunables"):
        p = run(mb, "list", topic)
        check(p.stdout.strip() != "", f"list {topic} prints")
    check("dirty_decay_ms" in run(mb, "list", "tunables", "jemalloc").stdout, "jemalloc tunables")
    check("selftest" not in run(mb, "list", "workloads").stdout, "test-only workload hidden")
    ws = json.loads(run(mb, "list", "workloads", "--json").stdout)["workloads"]
    check(ws[0]["name"] == "tensor_copy" and "selftest" not in [w["name"] for w in ws],
          f"list --json in table order, test-only workload hidden: {[w['name'] for w in ws]}")
    tc = ws[0]
    check(tc["traits"] == ["size_curve"] and tc["metric"] == "copy bandwidth" and tc["lower_is_better"] is False
          and tc["params"][0]["name"] == "size" and len(tc["smoke"]) == 3, f"tensor_copy described: {tc}")
    check([w["traits"] for w in ws if w["name"] == "idle_release"] == [["idle_region", "trade_off"]],
          "idle_release's traits: an idle region, a trade-off")
    run(mb, "list", "workloads", "--json", "x", expect_rc=2)
    run(mb, "list", "events", "--json", expect_rc=2)
    for sub in ("run", "list", "schema"):
        check(run(mb, sub, "--help").stdout.startswith("usage:"), f"{sub} --help")
    run(mb, "list", "nonsense", expect_rc=2)


def case_schema(mb, tmp):
    """results/SCHEMA.md is what `mallocbench schema` prints (regenerate it when columns change)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "..", "results", "SCHEMA.md")) as f:
        check(f.read() == run(mb, "schema").stdout, "results/SCHEMA.md is current: run "
              "`build/mallocbench schema > results/SCHEMA.md`")


def case_workloads(mb, tmp):
    """Every visible workload, briefly, by the smoke specs of its descriptor
    (`list workloads --json`); the checksum for a seed must not depend on the allocator."""
    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
    listed = [l.split(":")[0] for l in run(mb, "list", "workloads").stdout.splitlines() if not l.startswith(" ")]
    described = json.loads(run(mb, "list", "workloads", "--json").stdout)["workloads"]
    check([w["name"] for w in described] == listed, f"list --json names what list does: {listed}")
    check(all(w["smoke"] for w in described), f"a smoke spec for every workload: {[w['name'] for w in described]}")
    allocs = installed(mb)
    specs = [sp.replace("{fixtures}", fixtures) for w in described for sp in w["smoke"]]
    out = os.path.join(tmp, "w.csv")
    # no warm-up sample: nothing here reads one, and it doubled the samples of this serial test
    args = ["run", "-q", "--no-limit", "--warmup-runs", "0", "-a", ",".join(allocs), "-r", "1", "-o", out]
    for sp in specs:
        args += ["-w", sp]
    run(mb, *args)
    rs = rows(out)
    check(len(rs) == len(specs) * len(allocs), f"{len(rs)} rows for {len(specs)} specs x {len(allocs)} allocators")
    sums = {}
    for r in rs:
        what = f"{r['workload']}({r['workload_params']}) under {r['config']}"
        check(r["status"] == "ok", f"{what}: {r['status']} {r['message']}")
        check(r["throughput"] != "" and float(r["throughput"]) >= 0, f"{what}: throughput")
        check(r["region_wall_s"] != "", f"{what}: measured region")
        sums.setdefault((r["workload"], r["workload_params"]), set()).add(r["checksum"])
    for key, s in sums.items():
        check(len(s) == 1, f"{key}: one checksum across allocators, got {s}")
    # a bad shapes file is refused by line, before anything runs
    bad = os.path.join(tmp, "bad-shapes.txt")
    with open(bad, "w") as f:
        f.write("1024 float32\n\n1024x1024 float8\n")
    p = run(mb, "run", "-q", "-w", f"tensor_copy:size=@{bad}", "-o", out, expect_rc=2)
    check(f"{bad}:3: unknown dtype 'float8'" in p.stderr, f"bad shapes line: {p.stderr!r}")


def case_sweep(mb, tmp):
    """--sweep gives one workload per doubling value; the curve has a point per size and allocator."""
    out = os.path.join(tmp, "s.csv")
    run(mb, "run", "-q", "-w", "tensor_copy:count=2,bytes=8M,warmup=1", "--sweep", "size=64K..1M", "-a", "glibc",
        "-r", "1", "-o", out)
    got = [param(r["workload_params"], "size") for r in rows(out)]
    check(sorted(got, key=lambda v: int(v[:-1]) * (1024 if v[-1] == "M" else 1)) == ["64K", "128K", "256K", "512K", "1M"]
          and len(set(got)) == 5, f"sweep sizes {got}")
    for r in rows(out):
        check(int(r["region_bytes"]) >= 8 * 2**20, f"bytes= keeps the work per point: {r['region_bytes']}")
        check(r["limit_throughput"] != "" and r["fraction_of_limit"] != "", "limit measured per point")
    run(mb, "run", "-q", "-w", "tensor_copy", "--sweep", "nothere=1/2", "-o", out, expect_rc=2)


def keys(path):
    return sorted((int(r["block"]), int(r["position"]), r["workload_params"], r["config"]) for r in rows(path))


MATRIX = """; a small plan for the tests
[run]
repetitions = 2
warmup_runs = 0
seed = 11
allocators = glibc

[workload tensor_copy a]
size = 1M
count = 2
steps = 20

[workload tensor_copy b]
size = 2M
count = 2
steps = 20

[tunables glibc]
trim_threshold = default,64M
"""


def case_matrix(mb, tmp):
    """A matrix file runs like the command line; its errors name file and line."""
    m = os.path.join(tmp, "m.ini")
    with open(m, "w") as f:
        f.write(MATRIX)
    out = os.path.join(tmp, "m.csv")
    run(mb, "run", "-q", "-m", m, "-o", out, "--no-limit")
    rs = rows(out)
    check(len(rs) == 2 * 2 * 2, f"2 workloads x 2 configs x 2 blocks: {len(rs)} rows")
    check({r["config"] for r in rs} == {"glibc", "glibc[trim_threshold=64M]"}, "configs from [tunables]")
    check({r["plan_seed"] for r in rs} == {"11"}, "seed recorded")
    check(len({r["matrix_id"] for r in rs}) == 1, "one plan")
    for b in (0, 1):
        check(sorted(int(r["position"]) for r in rs if r["block"] == str(b)) == [0, 1, 2, 3],
              f"block {b}: every cell once")
    # options after the matrix override it
    run(mb, "run", "-q", "-m", m, "-r", "1", "-o", out, "--no-limit", "--force")
    check(len(rows(out)) == 4, "-r overrides repetitions")
    for text, line, needle in [("[run]\nrepetitions = x\n", 2, "repetitions: bad value 'x'"),
                               ("[run]\nbogus = 1\n", 2, "unknown key 'bogus'"),
                               ("[workload tensor_copy]\nsize = 1M\n[nonsense]\nx = 1\n", 3, "unknown section"),
                               ("[workload tensor_copy]\nsize = 16Q\n", 2, "'16Q'"),
                               ("[workload tensor_copy]\nsize = 1M\n[tunables jemalloc]\nbogus = 1\n", 4,
                                "dirty_decay_ms")]:
        with open(m, "w") as f:
            f.write(text)
        p = run(mb, "run", "-q", "-m", m, "-o", out, expect_rc=2)
        want = f"{m}:{line}: " if line else ""
        check(want in p.stderr and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"matrix error {text!r}: {p.stderr!r}")
    p = run(mb, "run", "-m", os.path.join(tmp, "none.ini"), expect_rc=2)
    check("cannot open matrix" in p.stderr, f"missing matrix: {p.stderr!r}")
    # the shipped matrices parse and plan
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "matrices")
    for name in ("quick", "seed", "decay", "full"):
        p = run(mb, "run", "-m", os.path.join(here, name + ".ini"), "--print-commands", "-r", "1")
        check(p.stdout.count("# block 0") > 0, f"matrices/{name}.ini plans samples")


def case_resume(mb, tmp):
    """Interrupted, then resumed once: the same sample set as a run left alone."""
    m = os.path.join(tmp, "m.ini")
    with open(m, "w") as f:
        f.write(MATRIX.replace("repetitions = 2", "repetitions = 3"))
    whole = os.path.join(tmp, "whole.csv")
    run(mb, "run", "-q", "-m", m, "-o", whole, "--no-limit")
    part = os.path.join(tmp, "part.csv")
    proc = subprocess.Popen([mb, "run", "-q", "-m", m, "-o", part, "--no-limit"], stderr=subprocess.PIPE, text=True)
    import time
    deadline = time.time() + 60
    while time.time() < deadline and (not os.path.exists(part) or len(rows(part)) < 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    check(proc.returncode == 130, f"interrupted run exits 130, got {proc.returncode}")
    check("--resume" in err, f"says how to continue: {err!r}")
    n_part = len(rows(part))
    check(0 < n_part < 12, f"interrupted part has {n_part} of 12 samples")
    run(mb, "run", "-q", "-m", m, "-o", part, "--no-limit", "--resume")
    check(keys(part) == keys(whole), f"resumed set equals the whole: {len(keys(part))} vs {len(keys(whole))}")
    # resuming a finished run does nothing; resuming into another plan is refused
    run(mb, "run", "-q", "-m", m, "-o", part, "--no-limit", "--resume")
    check(len(rows(part)) == 12, "nothing repeated")
    p = run(mb, "run", "-q", "-m", m, "-o", part, "--no-limit", "--resume", "--seed", "12", expect_rc=2)
    check("another plan" in p.stderr, f"other plan refused: {p.stderr!r}")


def case_shard(mb, tmp):
    """Shards merged cover exactly the unsharded sample set, each shard whole blocks (a block's
    pairs on one machine); merge names a missing shard and refuses it without --partial, and
    refuses mixtures; a split with more shards than blocks is refused before it runs.  The plan
    is MATRIX's first workload alone (its two configurations are a block's pair): the second
    only doubled the samples of this serial test's five runs."""
    m = os.path.join(tmp, "m.ini")
    with open(m, "w") as f:
        f.write(MATRIX[:MATRIX.index("[workload tensor_copy b]")] + MATRIX[MATRIX.index("[tunables glibc]"):])
    whole = os.path.join(tmp, "whole.csv")
    run(mb, "run", "-q", "-m", m, "-r", "4", "-o", whole, "--no-limit")
    ncells = len({(r["workload_params"], r["config"]) for r in rows(whole)})
    parts = []
    for k in (1, 2, 3):
        parts.append(os.path.join(tmp, f"s{k}.csv"))
        run(mb, "run", "-q", "-m", m, "-r", "4", "-o", parts[-1], "--no-limit", "--shard", f"{k}/3")
        got = rows(parts[-1])
        check({r["shard"] for r in got} <= {f"{k}/3"}, "shard recorded")
        blocks = {int(r["block"]) for r in got}
        check(blocks == {b for b in range(4) if b % 3 == k - 1}, f"shard {k}/3 holds blocks {sorted(blocks)}")
        check(len(got) == ncells * len(blocks), f"shard {k}/3: every cell of each of its blocks: {len(got)}")
    merged = os.path.join(tmp, "merged.csv")
    run(mb, "merge", "-o", merged, *parts)
    check(keys(merged) == keys(whole), "merged shards == unsharded plan")
    check([(int(r["block"]), int(r["position"])) for r in rows(merged)] ==
          sorted((int(r["block"]), int(r["position"])) for r in rows(merged)), "merged in plan order")
    p = run(mb, "merge", "--force", "-o", merged, parts[0], parts[0], expect_rc=2)
    check("twice" in p.stderr, f"duplicate refused: {p.stderr!r}")
    before = open(merged).read()
    p = run(mb, "merge", "--force", "-o", merged, parts[0], parts[2], expect_rc=2)
    check("shard 2/3 has no rows" in p.stderr and "--partial" in p.stderr, f"missing shard named: {p.stderr!r}")
    check(open(merged).read() == before, "a refused merge leaves the output as it was")
    p = run(mb, "merge", "--force", "--partial", "-o", merged, parts[0], parts[2])
    check("2/3 missing" in p.stderr and len(rows(merged)) == ncells * 3, f"--partial merges the rest: {p.stderr!r}")
    other = os.path.join(tmp, "other.csv")
    run(mb, "run", "-q", "-m", m, "-r", "4", "-o", other, "--no-limit", "--seed", "99", "--shard", "2/3")
    p = run(mb, "merge", "--force", "-o", merged, parts[0], other, parts[2], expect_rc=2)
    check("not shards of one run" in p.stderr, f"other plan refused: {p.stderr!r}")
    p = run(mb, "run", "-q", "-m", m, "--shard", "4/3", expect_rc=2)
    check("--shard" in p.stderr, "bad shard refused")
    # a shard row whose block is not its shard's (samples dealt, not blocks): refused, named
    dealt = os.path.join(tmp, "dealt.csv")
    with open(parts[1]) as f:
        text = f.read()
    with open(dealt, "w") as f:
        f.write(text.replace(",2/3,", ",3/3,", 1))
    p = run(mb, "merge", "--force", "-o", merged, parts[0], dealt, expect_rc=2)
    check("not a shard of whole blocks" in p.stderr, f"a dealt shard refused: {p.stderr!r}")
    few = os.path.join(tmp, "few.csv")
    p = run(mb, "run", "-q", "-m", m, "-r", "2", "--shard", "1/3", "-o", few, expect_rc=2)
    check("2 blocks" in p.stderr and "whole blocks" in p.stderr and not os.path.exists(few),
          f"more shards than blocks refused before anything runs: {p.stderr!r}")


def case_adaptive(mb, tmp):
    """--adaptive stops when every CI is narrow enough, and names what did not converge."""
    out = os.path.join(tmp, "a.csv")
    spec = "tensor_copy:size=256K,count=2,steps=50,warmup=1"
    p = run(mb, "run", "-w", spec, "-a", "glibc", "--adaptive", "100%", "--warmup-runs", "0", "--no-limit",
            "-r", "1", "-o", out)
    check(len(rows(out)) == 6, f"a loose target converges at the 6-sample minimum: {len(rows(out))}")
    check("1 of 1 configurations converged" in p.stderr, f"says so: {p.stderr[-300:]!r}")
    p = run(mb, "run", "-w", spec, "-a", "glibc", "--adaptive", "0.0001%", "--budget", "2s", "--max-blocks", "8",
            "--warmup-runs", "0", "--no-limit", "-o", out, "--force")
    n = len(rows(out))
    check(6 <= n <= 8, f"an impossible target stops at the budget or max blocks: {n}")
    check("not converged: tensor_copy glibc" in p.stderr, f"names the cell: {p.stderr[-300:]!r}")
    p = run(mb, "run", "-w", spec, "--adaptive", "1%", "--shard", "1/2", "-o", out, expect_rc=2)
    check("do not mix" in p.stderr, "adaptive with shards refused")
    # --resolution: the paired ratio to the first configuration (an A/A pair here)
    aa = ["-a", "glibc,glibc-b=glibc", "--warmup-runs", "0", "--no-limit"]
    p = run(mb, "run", "-w", spec, *aa, "--resolution", "100%", "-r", "1", "-o", out, "--force")
    check(len({r["block"] for r in rows(out)}) == 8, f"a loose resolution settles at the first look, block 8: "
          f"{len(rows(out))} rows")
    check("tensor_copy glibc-b vs glibc: settled at block 8" in p.stderr and "1 of 1 comparison settled" in p.stderr,
          f"says where it settled: {p.stderr[-400:]!r}")
    p = run(mb, "run", "-w", spec, *aa, "--resolution", "0.0001%", "--max-blocks", "7", "-o", out, "--force")
    blocks = {r["block"] for r in rows(out)}
    check(len(blocks) == 7 and "block 7" in p.stderr,
          f"an impossible resolution runs to --max-blocks, one look there: {sorted(blocks)} {p.stderr[-300:]!r}")
    p = run(mb, "run", "-w", spec, "--adaptive", "1%", "--resolution", "1%", "-o", out, expect_rc=2)
    check("do not mix" in p.stderr, "--adaptive with --resolution refused")


def case_labels(mb, tmp):
    """-a LABEL=FAMILY[:LIBRARY]: configurations under the user's names (an A/A pair, a
    build of an allocator); -t LABEL:... tunes only that one; ambiguous names refused."""
    allocs = installed(mb)
    out = os.path.join(tmp, "l.csv")
    spec = "tensor_copy:size=1M,count=1,steps=2,warmup=1"
    aa = ["glibc", "glibc-b=glibc"]
    je = []
    if "jemalloc" in allocs:
        lib = next(l.split()[2] for l in run(mb, "list", "allocators").stdout.splitlines()
                   if l.startswith("jemalloc "))
        je = ["jemalloc", f"je-new=jemalloc:{lib}"]
    run(mb, "run", "-q", "-w", spec, "-a", ",".join(aa + je), *(["-t", "je-new:dirty_decay_ms=-1"] if je else []),
        "-r", "1", "--no-limit", "-o", out)
    rs = {r["config"]: r for r in rows(out)}
    want = {"glibc", "glibc-b"} | ({"jemalloc", "je-new[dirty_decay_ms=-1]"} if je else set())
    check(set(rs) == want, f"configs by label: {sorted(rs)}")
    check(all(r["status"] == "ok" for r in rs.values()), "every labelled configuration proven")
    check(rs.get("glibc-b", {}).get("allocator") == "glibc", "the family stays in the allocator column")
    if je:
        check(rs["je-new[dirty_decay_ms=-1]"]["lib_path"] == lib and rs["jemalloc"]["requested_tunables"] == "",
              "the label's library, and its tunable on it alone")
    for bad, needle in (("glibc,glibc", "given twice"), ("glibc,glibc=glibc", "given twice"),
                        ("a b=glibc", "bad label"), ("x=nosuch", "unknown allocator")):
        p = run(mb, "run", "-w", spec, "-a", bad, "--print-commands", expect_rc=2)
        check(needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, f"-a {bad!r} refused: {p.stderr!r}")
    p = run(mb, "run", "-w", spec, "-a", "glibc", "-t", "g2:trim_threshold=64M", "--print-commands", expect_rc=2)
    check("unknown allocator or label 'g2'" in p.stderr, f"a tunable for no such label: {p.stderr!r}")
    m = os.path.join(tmp, "l.ini")
    with open(m, "w") as f:
        f.write("[run]\nallocators = glibc,g2=glibc\n[workload tensor_copy]\nsteps = 1\n"
                "[tunables g2]\ntrim_threshold = 64M\n")
    p = run(mb, "run", "-m", m, "-r", "1", "--print-commands")
    check("g2[trim_threshold=64M]" in p.stdout and ") glibc\n" in p.stdout, f"labels in a matrix: {p.stdout!r}")


def case_min_time(mb, tmp):
    """--min-time lengthens each configuration's measured region by a factor fixed for its
    blocks (work_scale), leaves fixed schedules alone, and a resume keeps the factors."""
    out = os.path.join(tmp, "m.csv")
    args = ["-w", "tensor_copy:size=1M,count=2,steps=4,warmup=1", "-w", "idle_release:peak=8M,idle_ms=20",
            "-a", "glibc", "--no-limit", "--seed", "4"]
    run(mb, "run", "-q", *args, "--min-time", "150ms", "-r", "2", "-o", out)
    rs = rows(out)
    tc = [r for r in rs if r["workload"] == "tensor_copy"]
    ir = [r for r in rs if r["workload"] == "idle_release"]
    check(len(tc) == 2 and len(ir) == 2, f"2 + 2 rows: {len(rs)}")
    scales = {r["work_scale"] for r in tc}
    check(len(scales) == 1 and int(next(iter(scales))) > 1, f"one factor > 1 for tensor_copy: {scales}")
    s = int(next(iter(scales)))
    check(all(int(r["region_bytes"]) == s * 4 * 2 * 1024 * 1024 for r in tc), "the work done is scaled by it")
    check(all(r["workload_params"].startswith("size=1M,count=2,steps=4,") for r in tc),
          "workload_params keep the spec as asked")
    check(all(float(r["region_wall_s"]) > 0.075 for r in tc), f"regions lengthened: "
          f"{[r['region_wall_s'] for r in tc]}")
    check({r["work_scale"] for r in ir} == {"1"}, "a fixed schedule is not scaled")
    check({(r["metric"], r["metric_better"]) for r in tc} == {("copy bandwidth", "higher")} and
          {r["metric"] for r in ir} == {"fraction of freed memory returned"}, "the primary metric is named")
    # a resume (without --min-time) runs the new blocks with the file's factors
    run(mb, "run", "-q", *args, "-r", "3", "-o", out, "--resume")
    check({r["work_scale"] for r in rows(out) if r["workload"] == "tensor_copy"} == scales,
          "resumed blocks keep the factor")
    p = run(mb, "run", *args, "--min-time", "x", "--print-commands", expect_rc=2)
    check("--min-time" in p.stderr, f"bad --min-time refused: {p.stderr!r}")


# The same option as a flag and as a matrix key, with a value both must refuse.
REFUSED = [("--adaptive", "adaptive", "0"), ("--adaptive", "adaptive", "101%"), ("--budget", "budget", "0"),
           ("--repetitions", "repetitions", "0"), ("--repetitions", "repetitions", "100001"),
           ("--timeout", "timeout", "5x"), ("--sample-interval", "sample_interval", "0.5ms"),
           ("--warmup-runs", "warmup_runs", "101"), ("--min-time", "min_time", "2h"),
           ("--max-blocks", "max_blocks", "0"), ("--seed", "seed", "-1"), ("--pin", "pin", "4096"),
           ("--sweep", "sweep", "x" * 200)]


def option_table():
    """(flag, short flag or None, matrix key or None) of every row of harness/plan/options.c."""
    import re
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "..", "harness", "plan", "options.c")) as f:
        text = f.read()
    row = re.compile(r'\{\.flag = "([a-z-]+)"(?:, \.short_flag = \'(.)\')?(?:, \.key = "([a-z_]+)")?')
    return [m.groups() for m in row.finditer(text)]


def case_options(mb, tmp):
    """One option table: a flag and its matrix key refuse a value with the same reason and
    accept one to the same plan; an unknown key lists every key; --help lists every option."""
    m = os.path.join(tmp, "o.ini")
    wl = "[workload tensor_copy]\nsteps = 1\n"
    for flag, key, value in REFUSED:
        p = run(mb, "run", "-w", "tensor_copy:steps=1", "--print-commands", f"{flag}={value}", expect_rc=2)
        with open(m, "w") as f:
            f.write(f"[run]\n{key} = {value}\n" + wl)
        q = run(mb, "run", "-m", m, "--print-commands", expect_rc=2)
        cli, mat = p.stderr.strip(), q.stderr.strip()
        head_cli, head_mat = f"mallocbench: {flag}: ", f"mallocbench: {m}:2: {key}: "
        check(cli.startswith(head_cli) and len(cli.splitlines()) == 1, f"{flag}={value}: {cli!r}")
        check(mat.startswith(head_mat) and len(mat.splitlines()) == 1, f"{key} = {value}: {mat!r}")
        check(cli[len(head_cli):] == mat[len(head_mat):] != "",
              f"{flag} and {key} refuse {value!r} alike: {cli!r} vs {mat!r}")
    with open(m, "w") as f:
        f.write("[run]\nlimit = maybe\n" + wl)
    p = run(mb, "run", "-m", m, "--print-commands", expect_rc=2)
    check(f"{m}:2: limit: bad value 'maybe': expected yes or no" in p.stderr, f"limit = maybe: {p.stderr!r}")
    # accepted alike: the same plan, sample for sample
    flags = ["-r", "3", "--seed", "7", "--sweep", "size=1M..2M", "-a", "glibc", "--warmup-runs", "0",
             "--adaptive", "50%", "--budget", "1m", "--max-blocks", "7", "--timeout", "1m", "--no-limit"]
    with open(m, "w") as f:
        f.write("[run]\nrepetitions = 3\nseed = 7\nsweep = size=1M..2M\nallocators = glibc\nwarmup_runs = 0\n"
                "adaptive = 50%\nbudget = 1m\nmax_blocks = 7\ntimeout = 1m\nlimit = no\n" + wl)
    by_flags = run(mb, "run", "-w", "tensor_copy:steps=1", *flags, "--print-commands").stdout
    by_keys = run(mb, "run", "-m", m, "--print-commands").stdout
    check(by_flags == by_keys and by_flags.count("# block") == 2 * 3, f"the same plan both ways: "
          f"{by_flags[:300]!r} vs {by_keys[:300]!r}")
    table = option_table()
    keys = [k for _, _, k in table if k]
    check(len(table) >= 25 and len(keys) >= 15, f"the option table read: {len(table)} rows, {len(keys)} keys")
    with open(m, "w") as f:
        f.write("[run]\nrepetition = 2\n" + wl)
    p = run(mb, "run", "-m", m, "--print-commands", expect_rc=2)
    listed = p.stderr.split("(valid: ", 1)[-1]
    check("unknown key 'repetition'" in p.stderr and all(k in listed for k in keys),
          f"an unknown key lists every key {keys}: {p.stderr!r}")
    usage = run(mb, "run", "--help").stdout
    keys_part = usage.split("[run] section", 1)[-1]
    for flag, short, key in table:
        check(f"--{flag}" in usage and (not short or f"-{short}, --{flag}" in usage), f"--help lists --{flag}")
        check(not key or key in keys_part, f"--help lists the matrix key {key}")
        # getopt knows it (a value may still be refused)
        given = f"--{flag}" if f"--{flag}" in FLAGS else f"--{flag}=1"
        p = run(mb, "run", "-w", "tensor_copy:steps=1", "-a", "glibc", given, "--print-commands", expect_rc=None)
        check(p.returncode in (0, 2) and "unknown option" not in p.stderr and "needs a value" not in p.stderr,
              f"{given} is an option: {p.stderr!r}")


def case_families(mb, tmp):
    """The families proven without an API of their own: scudo (environment plus its
    own parser's complaints) and tbbmalloc (its start-up report on stderr); an
    allocator's complaint on stderr stops the run before anything is measured."""
    allocs = installed(mb)
    if "scudo" not in allocs and "tbbmalloc" not in allocs:
        sys.exit(SKIP)
    out = os.path.join(tmp, "f.csv")
    fams = [a for a in ("scudo", "tbbmalloc") if a in allocs]
    args = ["run", "-q", "-w", "tensor_copy:size=4M,count=2,steps=3,warmup=1", "-r", "1", "-o", out,
            "-a", ",".join(fams)]
    if "scudo" in fams:
        args += ["-t", "scudo:release_to_os_interval_ms=-1,1000"]
    if "tbbmalloc" in fams:
        args += ["-t", "tbbmalloc:use_huge_pages=0,1"]
    run(mb, *args)
    rs = {r["config"]: r for r in rows(out)}
    for r in rs.values():
        check(r["status"] == "ok", f"{r['config']}: {r['status']} {r['message']}")
        check(r["alloc_version"] not in ("", "(from its start-up report)"), f"{r['config']}: version {r['alloc_version']!r}")
    if "scudo" in allocs:
        r = rs.get("scudo[release_to_os_interval_ms=-1]")
        check(r is not None and r["effective_tunables"] == "release_to_os_interval_ms=-1", f"scudo effective: {r and r['effective_tunables']}")
        check(r is not None and "/clang/" in r["malloc_so"], f"scudo served malloc: {r and r['malloc_so']}")
    if "tbbmalloc" in allocs:
        on, off = rs.get("tbbmalloc[use_huge_pages=1]"), rs.get("tbbmalloc[use_huge_pages=0]")
        check(on is not None and "use_huge_pages=1" in on["effective_tunables"].split(";"), f"huge pages read back on: {on and on['effective_tunables']}")
        check(off is not None and "use_huge_pages=0" in off["effective_tunables"].split(";"), f"off: {off and off['effective_tunables']}")
    # an allocator that carries on after a setting it does not know: a scudo built
    # from compiler-rt's archive with a __scudo_default_options that names an
    # unknown flag (scudo warns and runs on)
    scudo_a = None
    if "scudo" in allocs:
        scudo_so = next(r["lib_path"] for r in rs.values() if r["allocator"] == "scudo")
        scudo_a = scudo_so[:-3] + ".a"
    cc = shutil.which("cc") or shutil.which("gcc")
    if scudo_a and os.path.exists(scudo_a) and cc:
        src, so = os.path.join(tmp, "warn.c"), os.path.join(tmp, "libscudo-warn.so")
        with open(src, "w") as f:
            f.write('const char *__scudo_default_options(void) { return "no_such_flag=1"; }\n')
        subprocess.run([cc, "-shared", "-fPIC", "-o", so, src, "-Wl,--whole-archive", scudo_a,
                        "-Wl,--no-whole-archive", "-lpthread"], check=True)
        p = run(mb, "run", "-q", "-w", "tensor_copy:steps=1", "-a", f"scudo={so}", "-r", "1",
                "-o", os.path.join(tmp, "warn.csv"), expect_rc=1)
        check("scudo rejected a setting: Scudo WARNING: found 1 unrecognized flag(s): " in p.stderr
              and "no_such_flag=1" in p.stderr, f"scudo's warning is an error: {p.stderr!r}")
        check(not os.path.exists(os.path.join(tmp, "warn.csv")), "nothing measured")


# the options that take no value
FLAGS = ("--force", "--resume", "--no-limit", "--print-commands", "--quiet", "--help", "--profile",
         "--require-quiet", "--pin-threads", "--keep-going")


def param(params, name):
    return dict(kv.split("=", 1) for kv in params.split(","))[name]


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
