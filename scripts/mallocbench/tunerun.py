"""tunerun.py - one round of `mallocbench tune`: the harness command it runs (run, exec or
serve), that run stopped at the deadline as ^C stops it, what it wrote read back (its ok rows,
the objective's value of each), the names a search writes, and the one rule for stop signals.

A helper of the tune view (tune.py), imported only by it and its other helpers (tunesearch.py,
tunereport.py).  MEM, the memory objective's wording, is set by name_memory() once rows are
read: read it as tunerun.MEM.
"""
import contextlib
import datetime
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from . import mbcsv
from . import mbdata

STOP_GRACE_S = 10     # s a run interrupted at the deadline has to end before it is killed


OBJECTIVES = {  # key: (what it measures, value of a row, better)
    "throughput": ("throughput", lambda r: mbcsv.num(r, "throughput"), None),
    # CPU per unit of work: the registry's "cpu", the figure `run --figure cpu` stops on and every view
    # prints (the median of each sample's user+sys over its work; the whole process's for an
    # idle_region workload, from the row's sidecar: read_ok annotates)
    "cpu": ("user+sys CPU per unit of work", mbdata.metric_fn("cpu"), "lower"),
    "rss": ("peak RSS MiB", mbdata.peak_memory_mib, "lower"),  # commands, servers: the tree's PSS (main)
    "sys": ("kernel CPU per unit of work", mbdata.metric_fn("sys_cpu"), "lower"),
}


MEM = "peak RSS"  # the memory objective's wording: name_memory() says which figure the rows hold


class RunFailed(Exception):
    pass


class BadInput(RunFailed):
    """Refused before any work: exit 2."""


class Interrupted(Exception):
    """SIGINT or SIGTERM: the round's own run was interrupted too (it keeps what it wrote)."""


def harness():
    return os.environ.get("MB_HARNESS") or "mallocbench"


# ---- signals ---------------------------------------------------------------------------------
# One rule for every command (docs/output.md, *Signals*): SIGINT, SIGTERM and SIGHUP stop tune as
# ^C does, with what was measured kept, except a signal the caller left ignored (a background job
# of a script starts with SIGINT ignored, nohup with SIGHUP): that one stays ignored.  The first
# of them raises KeyboardInterrupt where tune is, unless it is inside held() (a journal being
# saved, the report put in place, the bookkeeping between two runs), which takes it at its end;
# later ones are only noted, so that the ending (the run stopped, the journal saved, the line
# printed) is never cut.  cmd_tune.c blocks them across the exec, so that one sent while the
# interpreter starts waits for main().

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_sig = {"got": None, "raised": False, "held": 0}


def _on_signal(signum, frame):
    _sig["got"] = signum
    if not _sig["raised"] and not _sig["held"]:
        _sig["raised"] = True
        raise KeyboardInterrupt()


def catch_signals():
    """Our handler for each stop signal the caller did not leave ignored, then the signals
    cmd_tune.c blocked unblocked (one sent before is taken now)."""
    _sig.update(got=None, raised=False, held=0)
    for s in STOP_SIGNALS:
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, _on_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def held():
    """A step no interrupt cuts: one that comes meanwhile is raised when it ends."""
    _sig["held"] += 1
    try:
        yield
    finally:
        _sig["held"] -= 1
    if not _sig["held"] and _sig["got"] is not None and not _sig["raised"]:
        _sig["raised"] = True
        raise KeyboardInterrupt()


def signals_end():
    """Tune's ending has begun (interrupted, or finished): a stop signal from now on is only
    noted, so that the ending (the run stopped, the journal saved, the line printed) is never cut."""
    _sig["raised"] = True


def child_signals():
    """In a round's run, before its exec: the stop signals at their defaults, whatever tune
    inherited.  The run is in its own session, so only tune signals it (the deadline, ^C passed
    on), and it must be able to stop it cleanly (an inherited SIG_IGN would have it killed)."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


# ---- running ---------------------------------------------------------------------------------

def round_cmd(args, cands, blocks, seed, path, resume, dry=False, sized=None):
    """The harness command of one round: cands in `blocks` randomized blocks into path; with
    blocks None, a run sized for a verdict (the confirmation): no -r, so that run's default plan
    stops each comparison with the first configuration at its look, within sized = (cap blocks,
    budget s); --objective cpu makes CPU its primary figure (run's --figure cpu, the same word)."""
    cmd = [harness(), args.via]
    cmd += ["-m", args.matrix] if args.matrix else []
    cmd += ["-w", args.workload] if args.workload else []
    cmd += ["-a", ",".join(f"{c.label}={c.fam}" for c in cands)]
    for c in cands:
        for k, v in c.pairs:
            cmd += ["-t", f"{c.label}:{k}={v}"]
    if blocks is not None:
        cmd += ["-r", str(blocks)]
    else:
        cap, budget = sized or (30, 600)
        # its budget within tune's deadline, so that the run takes its own last look (why
        # "budget") rather than being stopped at the deadline (why "interrupted")
        cmd += ["--max-blocks", str(cap), "--budget", f"{max(1, math.floor(budget))}s"]
        cmd += ["--figure", "cpu"] if args.objective == "cpu" and has_option("--figure") else []
    cmd += ["--seed", str(seed), "--warmup-runs", "0", "--no-limit", "-q", "--keep-going"]
    cmd += ["--print-commands"] if dry else ["-o", path, "--resume" if resume else "--force"]
    cmd += args.passthrough
    cmd += ["--"] + args.cmd if args.cmd else []
    return cmd


_HELP = {}


def has_option(flag):
    """Whether `run --help` (the run options exec and serve take too) lists flag: an option
    another part of the harness may not have yet (--figure)."""
    if "run" not in _HELP:
        p = subprocess.run([harness(), "run", "--help"], capture_output=True, text=True)
        _HELP["run"] = p.stdout + p.stderr
    return re.search(rf"(^|\s){re.escape(flag)}\b", _HELP["run"], re.M) is not None


def check_input(args, cands):
    """Every candidate, the workload and exec's or serve's options as the harness reads them
    (--print-commands runs nothing): None, or the harness's own one-line error."""
    p = subprocess.run(round_cmd(args, cands, 1, 1, "", False, dry=True), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode == 0:
        return None
    return (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]


def stop_run(p, grace):
    """A round's run interrupted as for ^C, so that it ends its sample and its files as it does
    then (its CSV whole, no .lock left); killed, with what it started, only when it does not end
    within grace seconds."""
    try:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=grace)
    except ProcessLookupError:  # already gone
        p.wait()
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


POLL_S = 0.1  # s between two looks at a round's CSV while watch() waits for its first samples


class Refused(BadInput):
    """Refused once the first samples were timed (the budget cannot hold the search): exit 2."""


def run_round(args, cands, blocks, seed, path, deadline, resume=False, watch=None, sized=None):
    """One `mallocbench run` (or exec, serve) of cands into path; it writes each sample as it
    ends, so a run stopped at the deadline leaves every finished one.  watch(started), called
    every POLL_S while the run goes on (started: its wall-clock start), returns None, or the
    line that refuses to go on: the run is then stopped as at the deadline and Refused raised
    with it.  The ok rows."""
    cmd = round_cmd(args, cands, blocks, seed, path, resume, sized=sized)
    started = time.time()
    with tempfile.TemporaryFile(mode="w+") as errf:
        # its own session, so that the deadline stops the run and everything it started, and ^C
        # at the terminal reaches tune alone, which passes it on
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, text=True, start_new_session=True,
                             preexec_fn=child_signals)
        stopped = refusal = None
        try:
            while stopped is None:
                left = deadline - time.monotonic()
                try:
                    p.wait(timeout=max(0.0, min(left, POLL_S) if watch else left))
                    break
                except subprocess.TimeoutExpired:
                    pass
                refusal = watch(started) if watch else None
                if refusal or time.monotonic() >= deadline:
                    stopped = True
                    stop_run(p, STOP_GRACE_S)
        except KeyboardInterrupt:  # ours, not delivered to its session: the run ends as for ^C
            stop_run(p, 30)
            raise Interrupted()
        if stopped and p.returncode in (130, -signal.SIGINT):
            p.returncode = 0
        if watch and not refusal and p.returncode == 0:  # it ended before watch() was answered
            refusal = watch(started, ended=True)
        if p.returncode not in (0, -signal.SIGKILL):
            errf.seek(0)
            sys.stderr.write(errf.read())
            raise RunFailed(f"`mallocbench {args.via}` failed (exit {p.returncode}): {' '.join(cmd[:4])} ...")
    if refusal:
        raise Refused(refusal)
    rows = read_ok(path)
    name_memory(rows)
    return rows


def sample_starts(path):
    """When each sample of a round's CSV started (epoch s, its timestamp), in order: its whole
    lines only (the run appends a row at a time; a line still being written is left out)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        rows = mbcsv.parse(mbcsv.decode(data[:data.rfind(b"\n") + 1], path), path)[1]
    except (OSError, mbcsv.CsvError):
        return []
    out = []
    for r in rows:
        try:
            out.append(datetime.datetime.strptime(r["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
                       .replace(tzinfo=datetime.timezone.utc).timestamp())
        except (KeyError, ValueError):
            pass
    return sorted(out)


def name_memory(rows):
    """The memory objective's wording from what the rows measured: a command's or server's
    whole tree (tree_pss_peak_kib) or a workload's RSS (mbdata.peak_memory_mib reads the same)."""
    global MEM
    if rows:
        MEM = mbdata.peak_memory_name(rows)
        OBJECTIVES["rss"] = (MEM + " MiB",) + OBJECTIVES["rss"][1:]


OWN = re.compile(r"\.((round[0-9]+|confirm)\.(csv|meta\.json|rss\.csv)|pareto-(rss|sys)\.png)\Z")


def own_files(base):
    """The files a search at base writes besides its journal and report: BASE.roundN.{csv,
    meta.json,rss.csv}, BASE.confirm.{csv,meta.json,rss.csv} and BASE.pareto-{rss,sys}.png;
    nothing else that shares the prefix."""
    d, stem = os.path.split(base)
    return sorted(os.path.join(d, f) for f in os.listdir(d or ".")
                  if f.startswith(stem) and OWN.match(f[len(stem):]))


def round_files(path):
    """The names a round's run writes for its CSV path (the CSV and its two sidecars), or
    [path] for a plot."""
    if not path.endswith(".csv"):
        return [path]
    stem = path[:-4]
    return [path, stem + ".meta.json", stem + ".rss.csv"]


def failures(paths):
    """'N samples failed: STATUS: MESSAGE' for the rows of paths that are not ok (the most
    common message), or ''."""
    bad = []
    for p in paths:
        try:
            bad += [r for r in mbcsv.read(p)[1] if r["status"] != "ok"]
        except (mbcsv.CsvError, OSError):
            pass
    if not bad:
        return ""
    n, top = mbdata.commonest_failure(bad)
    return f"{len(bad)} samples failed ({n} with {top})"


def read_ok(path):
    """The ok rows of a round's CSV, annotated with its sidecar as mbdata.load does (a workload's
    traits: the cpu objective of an idle_region workload is the whole process's); [] where the
    file cannot be read."""
    try:
        rows = [r for r in mbcsv.read(path)[1] if r["status"] == "ok"]
        mbdata.annotate(rows, mbcsv.read_meta(path))
        return rows
    except (mbcsv.CsvError, OSError):
        return []
