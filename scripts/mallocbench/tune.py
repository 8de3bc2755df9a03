"""tune.py - `mallocbench tune` after harness/cmd/cmd_tune.c has checked its input: races
candidate allocator configurations through `mallocbench run` and confirms the winner.

Candidates: each family's default, the families' hand-picked settings (`known` in the family
data), a seeded Latin hypercube over each family's search domains (`list tunables --json`),
and after the first round neighbours of the leaders.  Each round runs every survivor in K
fresh randomized blocks (one `run`, its own CSV); a candidate that the paired test
(stats.paired_change over the blocks it shares with the leader) shows worse is dropped.  Every
`run` is killed at the deadline, so the budget holds to within one sample.  The confirmation
is one more `run` in fresh blocks of the winner, its family's default, glibc's default and the
hand-picked setting; the report's figures come from it alone.
"""
import argparse
import contextlib
import datetime
import io
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import words

ROUND_BLOCKS = 2      # blocks each survivor runs per racing round
STOP_GRACE_S = 10     # s a run interrupted at the deadline has to end before it is killed
FINALISTS = 2         # the racing stops at this many survivors
CONFIRM_MIN, CONFIRM_MAX, CONFIRM_CONFIGS = 6, 10, 8  # blocks (6: the fewest pairs with a 95% CI), configurations
OBJECTIVES = {  # key: (what it measures, value of a row, better)
    "throughput": ("throughput", lambda r: mbcsv.num(r, "throughput"), None),
    # CPU per unit of work (mbdata.work), as every view counts it: --min-time lengthens a run
    "cpu": ("user+sys CPU per unit of work", lambda r: mbdata.sum_measured(mbdata.metric_fn("user_cpu")(r),
                                                                         mbdata.metric_fn("sys_cpu")(r)), "lower"),
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


class Cand:
    """One configuration: label (unique, as run's -a LABEL=FAMILY), family, pairs
    ((tunable, value), ...) asked for (() = the family's defaults), and how it came."""

    def __init__(self, label, fam, pairs, origin):
        self.label, self.fam, self.pairs, self.origin = label, fam, tuple(pairs), origin
        self.alive, self.dropped = True, ""

    def text(self):
        return " ".join(f"{k}={v}" for k, v in self.pairs) or "defaults"


# ---- the search space ----------------------------------------------------------------------

def space(families, overrides):
    """{family: {'dims': [(name, domain)], 'help': {name: text}, 'known': pairs or None,
    'known_label'}} from `list tunables --json`; --domain FAMILY:NAME=SPEC replaces the domains
    of the families it names (checked by cmd_tune.c)."""
    out = subprocess.run([harness(), "list", "tunables", "--json"], capture_output=True, text=True, check=True)
    data = {f["name"]: f for f in json.loads(out.stdout)["families"]}
    given = {}
    for text in overrides:
        fam, _, rest = text.partition(":")
        i = rest.index("=")
        spec = rest[i + 1:]
        if ".." in spec:
            lo, _, hi = spec.partition("..")
            dom = {"kind": "log", "lo": number(lo), "hi": number(hi)}
        else:
            dom = {"kind": "values", "values": spec.split("|")}
        given.setdefault(fam, []).append((rest[:i], dom))
    res = {}
    for fam in families:
        f = data[fam]
        dims = given.get(fam) or [(t["name"], t["domain"]) for t in f["tunables"] if t["domain"]]
        res[fam] = {"dims": dims, "help": {t["name"]: t["help"] for t in f["tunables"]},
                    "known": [tuple(p) for p in f["known"]] if f["known"] else None,
                    "known_label": f["known_label"], "given": fam in given}
    return res


def number(text):
    v = mbdata.parse_size(text)
    return float(v) if v is not None else float(text)


def pick(dom, u):
    """The value of a domain at u in [0, 1): a list index, or log-uniform in LO..HI."""
    if dom["kind"] == "values":
        return dom["values"][min(int(u * len(dom["values"])), len(dom["values"]) - 1)]
    lo, hi = math.log(dom["lo"]), math.log(dom["hi"])
    return str(int(round(math.exp(lo + u * (hi - lo)))))


def hypercube(fam, dims, n, rng):
    """n points of a Latin hypercube over dims: in each dimension every n-th stratum once."""
    perms = [rng.sample(range(n), n) for _ in dims]
    out = []
    for i in range(n):
        out.append(tuple((name, pick(dom, (perms[d][i] + rng.random()) / n)) for d, (name, dom) in enumerate(dims)))
    return out


def neighbour(c, dims, rng):
    """c with one dimension moved one step (a list) or x/÷4 (a log range)."""
    if not dims:
        return None
    name, dom = dims[rng.randrange(len(dims))]
    cur = dict(c.pairs)
    if dom["kind"] == "values":
        vals = dom["values"]
        i = vals.index(cur[name]) if cur.get(name) in vals else len(vals) // 2
        j = max(0, min(len(vals) - 1, i + rng.choice((-1, 1))))
        new = vals[j]
    else:
        v = float(cur.get(name, math.sqrt(dom["lo"] * dom["hi"])))
        new = str(int(round(max(dom["lo"], min(dom["hi"], v * rng.choice((0.25, 4.0)))))))
    cur[name] = new
    return tuple((k, cur[k]) for k, _ in dims if k in cur)


def candidates(sp, points, rng):
    out = []
    for fam, s in sp.items():
        out.append(Cand(fam, fam, (), "default"))
        if s["known"] and not s["given"]:
            out.append(Cand(s["known_label"], fam, s["known"], "hand-picked"))
        seen = {()}
        for i, pt in enumerate(hypercube(fam, s["dims"], points, rng) if s["dims"] and points else []):
            if pt not in seen:
                seen.add(pt)
                out.append(Cand(f"{fam}-s{i + 1}", fam, pt, "sampled"))
    return out


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


def child_signals():
    """In a round's run, before its exec: the stop signals at their defaults, whatever tune
    inherited.  The run is in its own session, so only tune signals it (the deadline, ^C passed
    on), and it must be able to stop it cleanly (an inherited SIG_IGN would have it killed)."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


# ---- running ---------------------------------------------------------------------------------

def round_cmd(args, cands, blocks, seed, path, resume, dry=False):
    """The harness command of one round: cands in `blocks` randomized blocks into path."""
    cmd = [harness(), args.via]
    cmd += ["-m", args.matrix] if args.matrix else []
    cmd += ["-w", args.workload] if args.workload else []
    cmd += ["-a", ",".join(f"{c.label}={c.fam}" for c in cands)]
    for c in cands:
        for k, v in c.pairs:
            cmd += ["-t", f"{c.label}:{k}={v}"]
    cmd += ["-r", str(blocks), "--seed", str(seed), "--warmup-runs", "0", "--no-limit", "-q", "--keep-going"]
    cmd += ["--print-commands"] if dry else ["-o", path, "--resume" if resume else "--force"]
    cmd += args.passthrough
    cmd += ["--"] + args.cmd if args.cmd else []
    return cmd


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


def run_round(args, cands, blocks, seed, path, deadline, resume=False, watch=None):
    """One `mallocbench run` (or exec, serve) of cands into path; it writes each sample as it
    ends, so a run stopped at the deadline leaves every finished one.  watch(started), called
    every POLL_S while the run goes on (started: its wall-clock start), returns None, or the
    line that refuses to go on: the run is then stopped as at the deadline and Refused raised
    with it.  The ok rows."""
    cmd = round_cmd(args, cands, blocks, seed, path, resume)
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
            raise RunFailed(f"tune: `mallocbench {args.via}` failed (exit {p.returncode}): {' '.join(cmd[:4])} ...")
    if refusal:
        raise Refused(refusal)
    rows = read_ok(path)
    name_memory(rows)
    return rows


WARM_SAMPLES = 3  # round 1's first samples, which time the search before it goes on


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


def duration_text(s):
    """A duration as the budget is given: '40 s', '3 min 20 s', '2 h 5 min'."""
    if s < 9.95:
        return f"{max(0.0, s):.1f} s"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")


def need_s(timing, n1, nconf):
    """Seconds round 1 of n1 samples and a CONFIRM_MIN-block confirmation of nconf
    configurations take at the timed pace: two runs' start-up, and every sample."""
    return 2 * timing["startup_s"] + (n1 + CONFIRM_MIN * nconf) * timing["per_s"]


def confirm_configs(labels, families):
    """The configurations a confirmation of a search over labels runs at most: confirm_size of
    them, glibc's default added where glibc is not searched."""
    return min(confirm_size(len(labels)), len(labels) + ("glibc" not in families))


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
    try:
        return [r for r in mbcsv.read(path)[1] if r["status"] == "ok"]
    except (mbcsv.CsvError, OSError):
        return []


def owner(cands, config):
    for c in cands:
        if config == c.label or config.startswith(c.label + "["):
            return c
    return None


def collect(rows, cands, into, key):
    """Per candidate {(plan, block): value} of objective `key`: the plan (matrix_id), not the
    run id, so that a round finished by `run --resume` pairs its blocks across both runs."""
    fn = OBJECTIVES[key][1]
    for r in rows:
        c = owner(cands, r["config"])
        v = fn(r)
        if c is not None and v is not None:
            into.setdefault(c.label, {})[(r["matrix_id"], r["block"])] = v


def direction(rows, key):
    b = OBJECTIVES[key][2]
    return b or (mbcsv.better(rows[0]) if rows else "higher")


def med(vals):
    return stats.median(list(vals)) if vals else None


def worse(change, better):
    """True when the whole CI of other/base lies on the worse side of no change."""
    if change is None or change.lo is None or change.hi is None:
        return False
    return change.hi < change.no_change if better == "higher" else change.lo > change.no_change


def ranked(cs, vals, better, ref=None):
    """cs measured, best first.  With ref (a configuration run in every block): by the median
    per-block ratio to ref, which cancels what a block shares (the machine's load drifting
    between blocks); else, or for a candidate with no block beside ref, by its median."""
    sign = 1 if better == "higher" else -1
    rv = vals.get(ref) if ref else None

    def key(c):
        v = vals[c.label]
        if rv:
            d = [math.log(v[k] / rv[k]) for k in v if k in rv and v[k] > 0 and rv[k] > 0]
            if d:
                return (0, -sign * stats.median(d))
        return (1, -sign * med(v.values()))
    return sorted((c for c in cs if vals.get(c.label)), key=key)


def race(alive, vals, rss, better, max_rss, ref=None):
    """After a round: drops (in place) what exceeds --max-rss, what the paired test shows worse
    than the leader, then halves the rest (successive halving: the better half by median goes
    on, at least FINALISTS); a candidate not yet measured (a new neighbour) stays.  The leader."""
    if max_rss:
        for c in alive:
            m = med(rss.get(c.label, {}).values())
            if m is not None and m * 1048576 > max_rss and len(alive) > 1:
                c.alive, c.dropped = False, f"median {MEM} {m:.0f} MiB over --max-rss"
    scored = ranked([c for c in alive if c.alive], vals, better, ref)
    if not scored:
        return None
    leader = scored[0]
    lv = vals[leader.label]
    for c in scored[1:]:
        keys = [k for k in vals[c.label] if k in lv]
        ch = stats.paired_change([lv[k] for k in keys], [vals[c.label][k] for k in keys])
        if worse(ch, better):
            c.alive, c.dropped = False, f"worse than {leader.label} (p={ch.p:.3g}, n={ch.n})"
    scored = [c for c in scored if c.alive]
    keep = max(FINALISTS, math.ceil(len(scored) / 2))
    for c in scored[keep:]:
        c.alive, c.dropped = False, f"halved out (median below the best {keep})"
    return leader


def rounds_left(n):
    """Racing rounds successive halving still needs from n candidates down to FINALISTS, and
    the samples they take."""
    r = s = 0
    while n > FINALISTS:
        r, s, n = r + 1, s + n * ROUND_BLOCKS, math.ceil(n / 2)
    return r, s


def add_neighbours(sp, cands, vals, better, rng, ref=None):
    """After the first round: one neighbour of each of the two best searched candidates."""
    scored = ranked([c for c in cands if c.alive and c.pairs], vals, better, ref)
    seen = {(c.fam, c.pairs) for c in cands}
    for i, c in enumerate(scored[:2]):
        pt = neighbour(c, sp[c.fam]["dims"], rng)
        if pt and (c.fam, pt) not in seen:
            seen.add((c.fam, pt))
            cands.append(Cand(f"{c.fam}-n{i + 1}", c.fam, pt, f"neighbour of {c.label}"))


class Tuner:
    """The search's state, saved to BASE.tune.json after every step, so that `--resume`
    continues where an interrupted tune stopped: the candidates, the rounds (each with its
    plan: candidates, blocks, seed; `done` once its run ended), the confirmation, the random
    generator and the time spent."""

    IDENTITY = ("families", "objective", "seed", "points", "domain", "max_rss_bytes", "via", "workload",
                "matrix", "cmd", "passthrough")  # not budget_s: --resume may give a longer one

    def __init__(self, args, sp, base):
        self.args, self.sp, self.base = args, sp, base
        self.rng = random.Random(args.seed)
        self.cands, self.rounds, self.confirm = [], [], None
        self.spent = 0.0  # seconds in finished steps of earlier invocations and this one
        self.t0 = time.monotonic()
        self.cache = {}  # round CSV -> its ok rows, once the round is done
        self.ref = None  # the configuration every racing block runs: glibc's default, or the first family's
        self.saved = False  # whether the journal holds this search (saved, or loaded by --resume)
        self.essential = 0
        self.files = set()  # basenames this search claimed (journal "files"): the only ones it replaces

    def claim(self, path):
        """Before a round, the confirmation or a plot writes path (and its sidecars): refused in
        one line when a name is a symbolic link (never written through), or exists and this
        search's journal does not list it (another's file: never replaced without --force, which
        removed every such name before the search began).  The caller saves the journal."""
        for p in round_files(path):
            name = os.path.basename(p)
            if os.path.islink(p):
                raise BadInput(f"mallocbench: tune: cannot write '{p}': it is a symbolic link (a search's files "
                               f"are written in their folder, never through a link); remove it")
            if name not in self.files and os.path.lexists(p):
                raise BadInput(f"mallocbench: tune: '{p}' exists and this search did not write it: remove it, "
                               f"or --force to start again")
            self.files.add(name)

    def check_links(self):
        """--resume: a symbolic link planted at a name the journal lists is refused before any
        work (the round's run would otherwise write through it or beside it)."""
        d = os.path.dirname(self.base)
        for name in sorted(self.files):
            p = os.path.join(d, name)
            if os.path.islink(p):
                raise BadInput(f"mallocbench: tune: cannot write '{p}': it is a symbolic link (a search's files "
                               f"are written in their folder, never through a link); remove it")

    def identity(self):
        return {k: getattr(self.args, k) for k in self.IDENTITY}

    def elapsed(self):
        return self.spent + time.monotonic() - self.t0

    def save(self, extra=None):
        """The journal, whole; no interrupt cuts it (held)."""
        with held():
            self._save(extra)
            self.saved = True

    def _save(self, extra):
        state = {"identity": self.identity(), "elapsed_s": self.elapsed(), "rng": self.rng.getstate(),
                 "candidates": [{"label": c.label, "family": c.fam, "tunables": c.pairs, "origin": c.origin,
                                 "alive": c.alive, "dropped": c.dropped} for c in self.cands],
                 "rounds": self.rounds, "confirm": self.confirm, "files": sorted(self.files)}
        state.update(extra or {})
        # the search's own journal: never through a link planted at its name
        mbout.write(self.base + ".tune.json", json.dumps(state, indent=1), force=True, own=True)

    def load(self):
        """--resume: the saved state; a one-line error when it is missing or another search's."""
        path = self.base + ".tune.json"
        try:
            with open(path) as f:
                st = json.load(f)
        except (OSError, ValueError) as e:
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': {e}")
        if not isinstance(st, dict) or not isinstance(st.get("identity"), dict):
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': not a journal tune wrote (no identity); "
                           f"--force starts again")
        seed = st["identity"].get("seed")
        if self.args.seed_drawn and isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
            self.args.seed = seed  # no --seed given: the search's own, as its journal keeps it
        mine = json.loads(json.dumps(self.identity()))
        diff = [k for k in self.IDENTITY if st.get("identity", {}).get(k) != mine[k]]
        if diff:
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': it was started with other {', '.join(diff)} "
                            f"(give the same options, or --force to start again)")
        if st.get("winner") is not None or st.get("finished"):
            raise BadInput(f"mallocbench: tune: '{path}' is finished: nothing to resume (--force starts again)")
        try:  # a journal edited by hand: one line naming what is wrong, never a traceback
            self.spent = float(st["elapsed_s"])
            if not (math.isfinite(self.spent) and 0 <= self.spent <= 1e9):
                raise ValueError(f"elapsed_s {st['elapsed_s']!r} is not a time spent (0 s or more)")
            v, internal, g = st["rng"]
            self.rng.setstate((v, tuple(internal), g))
            self.t0 = time.monotonic()
            self.cands = []
            for c in st["candidates"]:
                x = Cand(c["label"], c["family"], [tuple(p) for p in c["tunables"]], c["origin"])
                x.alive, x.dropped = c["alive"], c["dropped"]
                self.cands.append(x)
            if not isinstance(st["rounds"], list) or not (st["confirm"] is None or isinstance(st["confirm"], dict)):
                raise ValueError("rounds or confirm is not what tune writes")
            for rd in st["rounds"]:
                if not isinstance(rd, dict) or not isinstance(rd.get("csv"), str) or "done" not in rd:
                    raise ValueError("a round is not what tune writes (csv, done)")
            if st["confirm"] is not None and not ({"csv", "configs", "blocks", "seed"} <= set(st["confirm"])):
                raise ValueError("confirm is not what tune writes (csv, configs, blocks, seed)")
        except KeyError as e:
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': it has no {e.args[0]!r} "
                           f"(not a journal tune wrote; --force starts again)") from None
        except ValueError as e:
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': {e} "
                           f"(not a journal tune wrote; --force starts again)") from None
        except TypeError as e:
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': a field is not what tune writes ({e}); "
                           f"--force starts again") from None
        self.rounds, self.confirm = st["rounds"], st["confirm"]
        files = st.get("files")
        if files is None:  # a journal from before "files": what its rounds and confirmation name
            files = [os.path.basename(p) for x in self.rounds + ([self.confirm] if self.confirm else [])
                     for p in round_files(x["csv"])]
        if not (isinstance(files, list) and all(isinstance(f, str) and f and "/" not in f for f in files)):
            raise BadInput(f"mallocbench: tune: cannot resume '{path}': files is not what tune writes "
                           f"(not a journal tune wrote; --force starts again)")
        self.files = set(files)
        self.saved = True

    # -- racing --------------------------------------------------------------------------------

    def round_rows(self):
        """The ok rows of the finished rounds, each CSV read once (a finished round's file
        does not change)."""
        out = []
        for rd in self.rounds:
            if rd["done"]:
                if rd["csv"] not in self.cache:
                    self.cache[rd["csv"]] = read_ok(rd["csv"])
                out += self.cache[rd["csv"]]
        name_memory(out)
        return out

    def gather(self, key):
        """({candidate: {(plan, block): value}} of objective key over the finished rounds,
        whether higher or lower is better)."""
        rows, vals = self.round_rows(), {}
        collect(rows, self.cands, vals, key)
        return vals, direction(rows, key)

    def sample_costs(self, per):
        """{label: seconds one of its samples takes}: the median of its racing samples' wall
        time, scaled by the harness's overhead (the time per sample over the mean wall time)."""
        walls = {}
        for r in self.round_rows():
            c = owner(self.cands, r["config"])
            w = mbcsv.num(r, "total_wall_s")
            if c is not None and w is not None:
                walls.setdefault(c.label, []).append(w)
        every = [w for ws in walls.values() for w in ws]
        if not per or not every or sum(every) <= 0:
            return {}
        factor = max(1.0, per / (sum(every) / len(every)))
        return {lab: med(ws) * factor for lab, ws in walls.items()}

    def per_sample(self):
        n = len(self.round_rows())
        return self.elapsed() / n if n else None

    def search(self, deadline):
        """Successive halving with paired drops, down to FINALISTS (or the budget's end); returns
        (leader, per-candidate racing values, rss, better)."""
        args = self.args
        vals, better = self.gather(args.race_key)  # resumed: what earlier invocations measured
        rss, leader = self.gather("rss")[0], None
        pending = self.rounds[-1] if self.rounds and not self.rounds[-1]["done"] else None
        while True:
            per = self.per_sample()
            alive = [c for c in self.cands if c.alive]
            if pending is None:
                if self.rounds and len(alive) <= FINALISTS and all(vals.get(c.label) for c in alive):
                    break
                reserve = confirm_reserve(len(alive), per, args.budget_s)
                if per and time.monotonic() + len(alive) * ROUND_BLOCKS * per + reserve > deadline:
                    # the budget ends first: the best half by median, if that round fits
                    alive = ranked(alive, vals, better, self.ref) + [c for c in alive if not vals.get(c.label)]
                    keep = max(FINALISTS, len(alive) // 2)
                    if len(alive) <= keep or time.monotonic() + keep * ROUND_BLOCKS * per + reserve > deadline:
                        break
                    for c in alive[keep:]:
                        c.alive, c.dropped = False, "halved out (budget)"
                    alive = alive[:keep]
                labels = [c.label for c in alive]
                labels += [self.ref] if self.ref not in labels else []  # the reference runs in every block
                pending = {"round": len(self.rounds) + 1, "csv": f"{self.base}.round{len(self.rounds) + 1}.csv",
                           "candidates": labels, "blocks": ROUND_BLOCKS,
                           "seed": self.rng.randrange(1 << 31), "done": False, "resumed": False,
                           "before_s": self.elapsed()}
                self.claim(pending["csv"])  # a name another wrote meanwhile: refused, never replaced
                with held():
                    self.rounds.append(pending)
                    self.save()
            else:
                pending["resumed"] = True
                reserve = confirm_reserve(len(alive), per, args.budget_s)
            byl = {c.label: c for c in self.cands}
            run_cands = [byl[lab] for lab in pending["candidates"]]
            watch = None
            if pending["round"] == 1:  # timed on its first samples before it goes on
                watch = self.pace_watch(pending)
                if pending.get("timing"):  # resumed: timed before, refused before anything runs
                    line = self.estimate(pending)
                    if line:
                        raise Refused(line)
            rows = run_round(args, run_cands, pending["blocks"], pending["seed"], pending["csv"],
                             deadline - reserve, resume=pending["resumed"], watch=watch)
            with held():  # the round's bookkeeping and its journal: one step
                pending["done"], pending["samples"] = True, len(rows)
                pending["run_id"] = rows[0]["run_id"] if rows else ""
                if rows:
                    collect(rows, self.cands, vals, args.race_key)
                    collect(rows, self.cands, rss, "rss")
                    better = direction(rows, args.race_key)
                    leader = race([c for c in self.cands if c.alive], vals, rss, better, args.max_rss_bytes,
                                  self.ref) or leader
                    if pending["round"] == 1 and leader is not None:
                        add_neighbours(self.sp, self.cands, vals, better, self.rng, self.ref)
                self.save()
            if not rows:  # nothing ran to the end: no round would do better
                break
            pending = None
            self.progress(vals, better, deadline)
            if time.monotonic() >= deadline - reserve:
                break
        alive = ranked([c for c in self.cands if c.alive], vals, better, self.ref)
        return (alive[0] if alive else leader), vals, rss, better

    def pace_watch(self, pending):
        """Round 1's watch (run_round): once WARM_SAMPLES of its samples are written, or when its
        run ends with fewer, its pace (seconds a sample, and a run's start-up) into the round's
        journal entry, and estimate()'s refusal, if any."""
        def watch(started, ended=False):
            if pending.get("timing"):
                return None
            ts = [t for t in sample_starts(pending["csv"]) if t >= started - 0.001]  # this run's
            if len(ts) < WARM_SAMPLES and not ended:
                return None
            if len(ts) >= 2:
                ts = ts[:WARM_SAMPLES]
                pace = {"per_s": (ts[-1] - ts[0]) / (len(ts) - 1), "startup_s": ts[0] - started,
                        "samples": len(ts) - 1}
            else:  # the run ended, or was stopped, before two samples: its whole time counts
                pace = {"per_s": (time.time() - started) / max(1, len(ts)), "startup_s": 0.0, "samples": len(ts)}
            with held():
                pending["timing"] = pace
                self.save()
            return self.estimate(pending)
        return watch

    def estimate(self, pending):
        """Prints what round 1 and a CONFIRM_MIN-block confirmation need at round 1's pace; the
        line that refuses the search when the budget cannot hold them (with a narrower -a or
        --points that it can hold, and the budget that would), else None."""
        args, pace = self.args, pending["timing"]
        fams = list(self.sp)
        n1 = len(pending["candidates"]) * pending["blocks"]
        nconf = confirm_configs(pending["candidates"], fams)
        before = pending.get("before_s", 0.0)
        need = before + need_s(pace, n1, nconf)
        what = (f"round 1 ({n1} samples) and a {CONFIRM_MIN}-block confirmation ({CONFIRM_MIN * nconf} samples) "
                f"need about {duration_text(need)} at {pace['per_s']:.3g} s a sample (timed on round 1's first "
                + (f"{pace['samples']} samples)" if pace["samples"] != 1 else "sample)"))
        if need <= args.budget_s:
            sys.stderr.write(f"tune: {what}: within the {duration_text(args.budget_s)} budget\n")
            return None
        tries = [(fams, p) for p in range(args.points - 1, -1, -1)]
        tries += [(fams[:k], p) for k in range(len(fams) - 1, 0, -1) for p in range(args.points, -1, -1)]
        hint = ""
        for f, p in tries:
            cs = candidates({x: self.sp[x] for x in f}, p, random.Random(args.seed))
            t = before + need_s(pace, len(cs) * ROUND_BLOCKS, confirm_configs([c.label for c in cs], f))
            if t <= args.budget_s:
                opts = ([f"-a {','.join(f)}"] if f != fams else []) + ([f"--points {p}"] if p != args.points else [])
                hint = f"{' '.join(opts)} (about {duration_text(t)}), or "
                break
        return (f"mallocbench: tune: the {duration_text(args.budget_s)} budget cannot hold the search: {what}; "
                f"try {hint}--budget {math.ceil(need * 1.1)}s; what round 1 measured is kept in "
                f"{self.base}.tune.json (--resume with a longer --budget goes on from it)")

    def progress(self, vals, better, deadline):
        alive = [c for c in self.cands if c.alive]
        per = self.per_sample() or 0
        r, s = rounds_left(len(alive))
        eta = min(max(0.0, deadline - time.monotonic()), (s + confirm_size(len(alive)) * CONFIRM_MIN) * per)
        lead = ranked(alive, vals, better, self.ref)
        sys.stderr.write(f"tune: round {len(self.rounds)}: {len(alive)} of {len(self.cands)} candidates left, "
                         f"leader {lead[0].label if lead else '-'}, "
                         f"{sum(r.get('samples', 0) for r in self.rounds)} samples, {self.elapsed():.0f}s elapsed, "
                         f"ETA {eta:.0f}s ({r} racing round{'s' if r != 1 else ''} and the confirmation)\n")

    # -- confirmation --------------------------------------------------------------------------

    def confirm_set(self, vals, rss, sysv, better):
        """The finalists, their families' defaults, glibc's default, the hand-picked settings,
        then the racing's Pareto fronts (throughput against peak RSS and kernel CPU): at most
        CONFIRM_CONFIGS configurations, in that order of priority."""
        by = {c.label: c for c in self.cands}
        # the best two by median, also when the budget ended the racing with more alive
        finalists = ranked([c for c in self.cands if c.alive], vals, better, self.ref)[:FINALISTS]
        want = list(finalists)

        def add(c):
            if c is not None and c not in want and len(want) < CONFIRM_CONFIGS:
                want.append(c)
        for c in finalists:
            add(by.get(c.fam))
        add(by.get("glibc") or Cand("glibc", "glibc", (), "default"))
        for s in self.sp.values():
            if s["known"] and not s["given"]:
                add(by.get(s["known_label"]))
        self.essential = len(want)  # what the confirmation must run; the rest only if it fits
        tp, tpb = self.gather("throughput")
        for other in (rss, sysv):
            pts = [(c, med(other.get(c.label, {}).values()), med(tp.get(c.label, {}).values())) for c in self.cands]
            pts = [p for p in pts if p[1] is not None and p[2] is not None]
            for i in front([(p[1], p[2]) for p in pts], tpb):
                add(pts[i][0])
        # the room left: the next best of the racing (halved out on few noisy blocks, perhaps wrongly)
        for c in ranked([c for c in self.cands if c.pairs], vals, better, self.ref):
            add(c)
        return finalists, want

    def run_confirm(self, want, deadline):
        """The confirmation's rows: fresh blocks (at least CONFIRM_MIN, as many as fit up to
        CONFIRM_MAX) of `want`, nothing from the racing reused."""
        per = self.per_sample()
        left = deadline - time.monotonic()
        cost = self.sample_costs(per)
        block = lambda: sum(cost.get(c.label, per) for c in want)  # noqa: E731
        if self.confirm is None and per:
            # the Pareto points and the next best only while CONFIRM_MIN blocks of all still fit
            # (a slow configuration, one that faults all the time, costs what its racing samples took)
            while len(want) > self.essential and CONFIRM_MIN * block() > left:
                want.pop()
        if self.confirm is None:
            k = max(CONFIRM_MIN, min(CONFIRM_MAX, int(left / block()))) if per else CONFIRM_MIN
            self.claim(self.base + ".confirm.csv")
            self.confirm = {"csv": self.base + ".confirm.csv", "configs": [c.label for c in want], "blocks": k,
                            "seed": self.rng.randrange(1 << 31), "done": False, "resumed": False}
            self.save()
        else:
            self.confirm["resumed"] = True
        byl = {c.label: c for c in want}
        cs = [byl[lab] for lab in self.confirm["configs"] if lab in byl]
        if left > 0:
            rows = run_round(self.args, cs, self.confirm["blocks"], self.confirm["seed"], self.confirm["csv"],
                             deadline, resume=self.confirm["resumed"])
        else:  # no time left (resumed after the budget): what an earlier invocation confirmed
            rows = read_ok(self.confirm["csv"])
            name_memory(rows)
        with held():
            self.confirm["done"] = True
            self.confirm["blocks_done"] = len(full_blocks(rows, cs))
            self.save()
        return rows


def full_blocks(rows, cs):
    """The blocks (plan, block) in which every configuration of cs has an ok sample: the pairs a
    paired comparison of any two of them can use."""
    have = {}
    for r in rows:
        c = owner(cs, r["config"])
        if c is not None:
            have.setdefault((r["matrix_id"], r["block"]), set()).add(c.label)
    return sorted(k for k, v in have.items() if len(v) == len(cs))


def confirm_size(alive):
    return min(CONFIRM_CONFIGS, min(alive, FINALISTS) * 2 + 2)


def confirm_reserve(alive, per, budget):
    """Time kept for the confirmation: CONFIRM_MIN blocks of the configurations it will run,
    at most half the budget (30% before a sample has been timed)."""
    if not per:
        return 0.3 * budget
    return min(confirm_size(alive) * CONFIRM_MIN * per, 0.5 * budget)


# ---- confirmation and report --------------------------------------------------------------

def trade_off(confirm_csv, rows):
    """Whether the tuned workload's figure is a trade-off (its descriptor's trait, as the
    confirmation's sidecar lists it)."""
    return bool({r["workload"] for r in rows} & mbdata.workloads_with_trait([confirm_csv], "trade_off"))


def change_text(vals, base, other, better="higher", trade_off=False, machines=None, unit=""):
    """other against base as every view words a pair (change.pair_values: the paired
    Hodges-Lehmann ratio, its verdict word at a 1% floor; trade_off: the figure of a workload
    with that trait; several machines {block: machine}: pooled), with its 95% CI and n; unit:
    the figure's, which a difference (a change that is no ratio) is written in."""
    if base not in vals or other not in vals or base == other:
        return "-"
    cell = change.pair_values(vals[base], vals[other], better, unit=unit, trade_off=trade_off,
                               machines=machines)
    ch = cell.change
    if ch is None:
        return "-"
    _, ci = words.fmt_change(cell)
    return words.change_words(cell) + (f" [{ci}]" if ci != "-" else "") + f" n={ch.n}"


def front(points, better):
    """Indices of the Pareto front: no other point has better y (throughput) and lower x."""
    sign = 1 if better == "higher" else -1
    out = []
    for i, (x, y) in enumerate(points):
        if not any(x2 <= x and sign * y2 >= sign * y and (x2, y2) != (x, y) for x2, y2 in points):
            out.append(i)
    return out


def plot(path, labels, xs, ys, xlabel, ylabel, better, colours):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"(no plot: {e})"
    pts = list(zip(xs, ys))
    fr = set(front(pts, better))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (lab, x, y) in enumerate(zip(labels, xs, ys)):
        ax.scatter([x], [y], s=60 if i in fr else 20, color=colours[i], edgecolors="black" if i in fr else "none")
        ax.annotate(lab, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    fp = sorted((pts[i] for i in fr))
    ax.plot([p[0] for p in fp], [p[1] for p in fp], color="black", lw=1, ls="--", label="Pareto front")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    mbout.write(path, buf.getvalue(), force=True, own=True)  # BASE.pareto-*.png: the search's own (own_files)
    return None


def env_line(confirm_csv, label):
    """The production environment of configuration `label` as run's sidecar records it."""
    meta = mbdata.read_meta(confirm_csv) or {}
    for c in meta.get("configs") or []:
        if isinstance(c, dict) and (c.get("config") == label or str(c.get("config", "")).startswith(label + "[")):
            env = [e for e in c.get("environment") or [] if not str(e).startswith("MB_")]
            lib = c.get("lib_path") or ""
            return " ".join(([f"LD_PRELOAD={lib}"] if lib else []) + env) or "(nothing to set: the defaults)"
    return "(not in the confirmation's sidecar)"


FLOOR = 0.01  # the verdicts' floor, as compare's default (--floor 1)


def confirmed_winner(args, want, finalists, crow, better, why=""):
    """(winner, verdict) from the confirmation alone.  The configurations rank by their median
    per-block ratio to glibc's default (over --max-rss: left out); the first is the winner only
    when, over at least CONFIRM_MIN common blocks, its paired change (change.pair_values: the
    Hodges-Lehmann ratio, its exact signed-rank CI) lies wholly beyond the floor on the better
    side against the runner-up, against glibc's default (the baseline) and, for a tuned
    setting, against its family's default (a setting that only won the racing by chance, the
    winner's curse, is never named).  The verdict names each of those changes with its CI and
    n; without a winner, the blocks reached and the resolution of each."""
    vals, rss = {}, {}
    collect(crow, want, vals, args.race_key)
    collect(crow, want, rss, "rss")
    # the figure's unit, which a difference is written in (cpu and rss are ratios)
    unit = (next((r.get("throughput_unit") for r in crow if r.get("throughput_unit")), "")
            if args.race_key == "throughput" else "")
    if not vals:
        return None, (f"no confirmation sample was ok: {why}: no winner" if why else
                      "no confirmation sample finished within the budget: no winner")
    notes, order = [], []
    for c in ranked(want, vals, better, "glibc"):
        m = med(rss.get(c.label, {}).values())
        if args.max_rss_bytes and m is not None and m * 1048576 > args.max_rss_bytes:
            notes.append(f"{c.label}: median {MEM} {m:.0f} MiB over --max-rss")
        else:
            order.append(c)
    if not order:
        return None, "; ".join(notes)
    top = order[0]
    against = [(order[1].label, "the runner-up")] if len(order) > 1 else []
    if top.label != "glibc" and "glibc" in vals:
        against.append(("glibc", "the baseline"))
    if top.pairs and top.fam in vals and top.fam not in [a for a, _ in against]:
        against.append((top.fam, "its family's default"))
    if not against:
        return None, "; ".join(notes + [f"{top.label} was the only configuration confirmed: nothing to win against"])
    parts, won = [], True
    for base, role in against:
        cell = change.pair_values(vals[base], vals[top.label], better, floor=FLOOR, unit=unit)
        ch = cell.change
        n = ch.n if ch is not None and ch.paired else 0
        ok = n >= CONFIRM_MIN and cell.verdict == "improved"
        won &= ok
        text = f"against {base} ({role}) {change_text(vals, base, top.label, better, unit=unit)}"
        if not ok:
            res = words.resolution_text(cell)
            text += (f", {n} common blocks ({CONFIRM_MIN} needed)" if n < CONFIRM_MIN else "")
            text += f", resolution {res or 'none (no CI)'}"
        parts.append(text)
    what = f"{top.label} ({top.text()})"
    if won:
        return top, "; ".join(notes + [f"{what} ranked first in the confirmation, beyond the {FLOOR:.0%} floor "
                                       "on the better side: " + "; ".join(parts)])
    return None, "; ".join(notes + [f"{what} ranked first in the confirmation (median per-block ratio to glibc's "
                                    f"default), but not beyond the {FLOOR:.0%} floor on the better side of each: "
                                    + "; ".join(parts) + " (the racing's finalists: "
                                    + ", ".join(f.label for f in finalists) + ")"])


def faults_of(r):
    """Faults of the measured region per unit of work (mbdata.work); a command's whole
    process where it has none."""
    v = mbdata.metric_fn("region_faults")(r)
    v = v if v is not None else mbdata.metric_fn("total_faults")(r)
    w = mbdata.work(r)[0]
    return v / w if v is not None and w else None


def report_md(args, sp, tuner, racing, finalists, want, crow, better, winner, verdict):
    """tune.md: every figure from the confirmation; the racing only in its own table."""
    cands, rounds, base = tuner.cands, tuner.rounds, tuner.base
    nrace = sum(r.get("samples", 0) for r in rounds)
    lines = [f"# mallocbench tune: {args.workload or args.matrix or ' '.join(args.cmd)}", "",
             f"Objective **{args.objective}**, budget {args.budget_s:.0f} s ({tuner.elapsed():.0f} s used), "
             f"seed {args.seed}, {len(cands)} candidates over {len(rounds)} racing rounds ({nrace} samples), "
             f"then {len(crow)} confirmation samples."
             + (f" --max-rss {mbdata.format_size(args.max_rss_bytes)}." if args.max_rss_bytes else ""), ""]
    conf = {key: {} for key in OBJECTIVES}
    for key in OBJECTIVES:
        collect(crow, want, conf[key], key)
    faults = {}
    for r in crow:
        c = owner(want, r["config"])
        if c is not None and faults_of(r) is not None:
            faults.setdefault(c.label, {})[(r["matrix_id"], r["block"])] = faults_of(r)
    lines += ["## Confirmed (fresh interleaved blocks; nothing from the racing is reused)", "",
              blocks_text(tuner.confirm, crow, want) + f" of {', '.join(c.label for c in want)} "
              f"({os.path.basename(base)}.confirm.csv).", "",
              "| objective | highest-ranked in the confirmation (a winner only if its change says so) | its setting "
              "| vs its family's default | vs glibc default |",
              "|---|---|---|---|---|"]
    tpb = direction(crow, "throughput")  # the workload's own figure: better as its rows say
    unit = next((r.get("throughput_unit") for r in crow if r.get("throughput_unit")), "")
    per = mbdata.work_unit(crow)
    # a trade-off figure (the workload's trait, from the confirmation's sidecar) is worded as such
    trade = trade_off(base + ".confirm.csv", crow)
    for key in ("throughput", "cpu", "rss"):
        b = tpb if key == "throughput" else OBJECTIVES[key][2]
        scored = ranked(want, conf[key], b, "glibc")
        if not scored:
            continue
        best = scored[0]
        fd = best.fam if best.pairs else None
        t = trade and key == "throughput"
        u = unit if key == "throughput" else ""  # cpu and rss are ratios of positive figures
        lines.append(f"| {OBJECTIVES[key][0]} | {best.label} | {best.text()} | "
                     f"{change_text(conf[key], fd, best.label, b, t, unit=u) if fd else '(is the default)'} | "
                     f"{change_text(conf[key], 'glibc', best.label, b, t, unit=u)} |")
    lines += ["", "Changes are configuration/base as every view of mallocbench prints them: "
              + words.ESTIMATOR_TEXT + f"; the word is the verdict at a {FLOOR:.0%} floor (docs/output.md, "
              "*The statistics of `mallocbench compare`*).",
              "", "| configuration | origin | setting | median " + OBJECTIVES["throughput"][0]
              + f" | vs glibc default | median faults per {per} | median {MEM} | median kernel CPU per {per} |",
              "|---|---|---|---|---|---|---|---|"]
    findings = []
    fault_meds = {c.label: med(faults.get(c.label, {}).values()) for c in want}
    known = [v for v in fault_meds.values() if v is not None]
    low_c = min((c for c in fault_meds if fault_meds[c] is not None), key=lambda c: fault_meds[c], default=None)
    for c in want:
        f = [med(conf["throughput"].get(c.label, {}).values()), med(faults.get(c.label, {}).values()),
             med(conf["rss"].get(c.label, {}).values()), med(conf["sys"].get(c.label, {}).values())]
        vs = change_text(conf["throughput"], "glibc", c.label, tpb, trade, unit=unit) if c.label != "glibc" else "-"
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | " + words.fmt_value(f[0], unit)
                     + f" | {vs} | {words.fmt(f[1])} | " + ("-" if f[2] is None else f"{f[2]:.0f} MiB")
                     + f" | {words.fmt_value(f[3], 's')} |")
        # a default or a hand-picked setting that loses to glibc's default, or faults 3x more than
        # the configuration with the fewest: the line a user must not miss
        if c.origin in ("default", "hand-picked") and known and "glibc" in conf["throughput"]:
            cell = change.pair_values(conf["throughput"]["glibc"], conf["throughput"].get(c.label, {}), tpb,
                                       trade_off=trade)
            low = fault_meds[low_c]
            # 3x the fewest, and a quarter of the most at least: from 0, not every fault counts
            many = (f[1] is not None and f[1] > 0 and f[1] >= 3 * low and f[1] >= 0.25 * max(known)
                    and c.label != low_c)
            if (cell.verdict == "regressed" and c.label != "glibc") or many:
                findings.append(f"**{c.label}** ({c.origin}: {c.text()}): "
                                + (f"{words.change_words(cell)} against glibc's default" if c.label != "glibc"
                                   else "the baseline")
                                + (f"; {words.fmt(f[1])} faults per {per} where {low_c} has {words.fmt(low)}"
                                   + (" (256 per MiB: every page faulted in again)" if per == "MiB" else "")
                                   if many else "") + ".")
    if findings:  # what the user must not miss, above the tables that hold it
        k0 = lines.index("## Confirmed (fresh interleaved blocks; nothing from the racing is reused)")
        lines[k0:k0] = ["## Findings", ""] + [f"- {x}" for x in findings] + [""]
    if winner is None:
        lines += ["", "## No winner", "",
                  "Blocks reached: " + blocks_text(tuner.confirm, crow, want) + ". " + verdict + "."]
    else:
        lines += ["", f"## Winner: {winner.label} ({winner.text()})", "", verdict + ".", "",
                  "Production environment (as `run` set it for this configuration; the confirmation's sidecar):",
                  "", "```", env_line(base + ".confirm.csv", winner.label), "```", ""]
        for name, v in winner.pairs:
            lines.append(f"- `{name}={v}`: {sp[winner.fam]['help'].get(name, '')}")
        for s in sp.values():
            lab = s["known_label"]
            if s["known"] and lab in conf["throughput"] and lab != winner.label:
                lines.append(f"\nAgainst the hand-picked {lab}: "
                             f"{change_text(conf['throughput'], lab, winner.label, tpb, trade, unit=unit)} "
                             f"(throughput, winner/{lab}).")
    lines += pareto_section(want, conf, tpb, base)
    lines += ["", "## Racing (successive halving; these figures chose the finalists, none is reported above)",
              "", "| candidate | origin | setting | median | samples | dropped |", "|---|---|---|---|---|---|"]
    for c in cands:
        v = racing.get(c.label, {})
        m = med(v.values())
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | {'-' if m is None else f'{m:.4g}'} | {len(v)} | "
                     f"{c.dropped or ('finalist' if c in finalists else '')} |")
    return lines


def blocks_text(confirm, crow, want):
    """The confirmation's blocks as reached: those in which every configuration has an ok sample,
    of the planned ones, and those cut short (by the budget, ^C or a failed sample)."""
    full = len(full_blocks(crow, want))
    some = len({(r["matrix_id"], r["block"]) for r in crow}) - full
    planned = confirm.get("blocks") if confirm else None
    return (f"{full} complete block{'s' if full != 1 else ''}" + (f" of the {planned} planned" if planned else "")
            + (f" (and {some} cut short, not every configuration in {'it' if some == 1 else 'them'})" if some else ""))


def pareto_section(want, conf, better, base):
    out = ["", "## Pareto fronts (confirmed medians; highlighted: the front)", ""]
    # each family in the colour every plot gives it (the confirmation's sidecar, as plots.py reads it)
    conf_csv = base + ".confirm.csv"
    colours = mbcsv.family_colours([conf_csv] if os.path.exists(conf_csv) else [], [],
                                   list(dict.fromkeys(c.fam for c in want)))
    for key, what in (("rss", f"{MEM} (MiB)"), ("sys", "kernel CPU per unit of work (s)")):
        pts = [(c, med(conf[key].get(c.label, {}).values()), med(conf["throughput"].get(c.label, {}).values()))
               for c in want]
        pts = [p for p in pts if p[1] is not None and p[2] is not None]
        if not pts:
            continue
        png = f"{base}.pareto-{key}.png"
        err = plot(png, [p[0].label for p in pts], [p[1] for p in pts], [p[2] for p in pts], what,
                   "throughput (median of the confirmation)", better,
                   [colours.get(p[0].fam, "#777777") for p in pts])
        fr = front([(p[1], p[2]) for p in pts], better)
        out += [err or f"![throughput vs {what}]({os.path.basename(png)})", "",
                f"Front (throughput vs {what}): " + ", ".join(pts[i][0].label for i in fr), ""]
    return out


def main():
    ap = argparse.ArgumentParser(prog="mallocbench tune")
    ap.add_argument("--families", required=True)
    ap.add_argument("--objective", default="throughput", choices=["throughput", "cpu", "rss", "pareto"])
    ap.add_argument("--budget-s", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seed-drawn", action="store_true", help="--seed was drawn by cmd_tune.c, not given: "
                    "--resume takes the journal's")
    ap.add_argument("--max-rss-bytes", type=int, default=0)
    ap.add_argument("--points", type=int, default=4)
    ap.add_argument("--domain", action="append", default=[])
    ap.add_argument("--via", default="run", help="the harness command each round runs (cmd_tune.c: run; exec "
                    "for a command after --; serve with --ready and --client)")
    ap.add_argument("--pass", dest="passthrough", action="append", default=[],
                    help="one word handed to each round's exec or serve (--metric RE, --client CMD, ...)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("-w", dest="workload")
    ap.add_argument("-m", dest="matrix")
    ap.add_argument("-o", dest="out")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    args.cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not (math.isfinite(args.budget_s) and 0 < args.budget_s <= 30 * 86400):  # as cmd_tune.c checks
        sys.stderr.write(f"mallocbench: tune: --budget-s {args.budget_s:g}: not within 0..30 days\n")
        return 2
    if args.resume and args.seed_drawn and not args.out:  # as cmd_tune.c checks
        sys.stderr.write("mallocbench: tune: --resume: which search? give its -o FILE.md (or its --seed N)\n")
        return 2
    args.domain = sorted(args.domain)
    args.race_key = {"pareto": "throughput"}.get(args.objective, args.objective)
    out = args.out or os.path.join("results", f"tune-{args.seed}.md")
    base = out[:-3] if out.endswith(".md") else out
    SAVED.clear()
    try:
        catch_signals()  # from here on, a stop signal ends with the line that says how to go on
        return search_and_report(args, out, base)
    except (Interrupted, KeyboardInterrupt):
        pass
    _sig["raised"] = True  # a second ^C only waits for this ending
    spent = 0.0
    tuner = SAVED.get("tuner")
    if tuner is not None and tuner.saved:
        tuner.save()
        spent = tuner.elapsed()
    again = "--resume" + ("" if args.out else f" -o {out}")
    sys.stderr.write(f"tune: interrupted after {spent:.0f}s: continue with the same command and {again} "
                     f"({base}.tune.json)\n")
    return 130


SAVED = {}  # the search main() runs, for its ending on a signal


def search_and_report(args, out, base):
    """The search, its confirmation and its report: tune's exit status."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    resuming = args.resume and os.path.exists(base + ".tune.json")
    try:  # the report: a new file, or --force; refused before any sample runs (resumed: once the
        # journal is read, which says first when its search is finished)
        if not resuming:
            mbout.check(out, args.force)
    except mbout.OutputError as e:
        sys.stderr.write(f"mallocbench: tune: {e}\n")
        return 2
    if not resuming:  # a fresh search (--resume without a journal too) replaces no file it did not write
        theirs = own_files(base)
        bad = [f for f in theirs if os.path.isdir(f) and not os.path.islink(f)]
        if theirs and not args.force or bad:
            f = (bad or theirs)[0]
            sys.stderr.write(f"mallocbench: tune: cannot start a search at '{base}': '{f}' exists "
                             + ("and is a directory; remove it\n" if bad else
                                "(a search's file, but no journal says this search wrote it): "
                                "add --force to replace it\n"))
            return 2
    journal = base + ".tune.json"
    if os.path.islink(journal):  # the search's own journal is never read or written through a link
        if resuming or not args.force:
            sys.stderr.write(f"mallocbench: tune: '{journal}' is a symbolic link: a search's journal is never "
                             f"read or written through one; remove it\n")
            return 2
        os.unlink(journal)  # --force on a fresh search: the link itself goes, never its target
    sp = space(args.families.replace(",", " ").split(), args.domain)
    tuner = SAVED["tuner"] = Tuner(args, sp, base)
    try:
        if resuming:
            tuner.load()
            tuner.check_links()
            try:
                mbout.check(out, args.force)
            except mbout.OutputError as e:
                raise BadInput(f"mallocbench: tune: {e}") from None
            sys.stderr.write(f"tune: resuming {base}.tune.json: {len(tuner.rounds)} rounds, "
                             f"{tuner.spent:.0f}s spent, budget {args.budget_s:.0f}s\n")
        else:
            tuner.cands = candidates(sp, args.points, tuner.rng)
            err = check_input(args, tuner.cands)
            if err:
                head = "mallocbench: "
                sys.stderr.write(head + "tune: " + (err[len(head):] if err.startswith(head) else err) + "\n")
                return 2
            with held():
                for old in own_files(base):
                    os.remove(old)  # --force (refused above without it): a link itself, never its target
                tuner.save()
        tuner.ref = "glibc" if any(c.label == "glibc" for c in tuner.cands) else tuner.cands[0].label
        sys.stderr.write(f"tune: {len(tuner.cands)} candidates to start (after round 1 a neighbour of each of the "
                         f"two best joins), seed {args.seed}, budget {args.budget_s:.0f}s\n")
        deadline = time.monotonic() + args.budget_s - tuner.spent
        if tuner.confirm is None:
            leader, vals, rss, better = tuner.search(deadline)
        else:  # resumed during the confirmation: the racing is over
            (vals, better), rss, leader = tuner.gather(args.race_key), tuner.gather("rss")[0], None
        sysv = tuner.gather("sys")[0]
        finalists, want = tuner.confirm_set(vals, rss, sysv, better)
        if tuner.confirm is not None:
            byl = {c.label: c for c in tuner.cands + want}
            want = [byl.get(lab) or Cand(lab, lab, (), "default") for lab in tuner.confirm["configs"]]
        crow = tuner.run_confirm(want, deadline)
        with held():
            for key in ("rss", "sys"):  # the plots report_md may write
                tuner.claim(f"{base}.pareto-{key}.png")
            tuner.save()
    except RunFailed as e:
        if isinstance(e, Refused):
            with held():
                tuner.save()  # the time round 1 took, for a --resume with a longer budget
        sys.stderr.write(f"{e}\n")
        return 2 if isinstance(e, BadInput) else 1
    why = failures(([tuner.confirm["csv"]] if tuner.confirm else []) + [rd["csv"] for rd in tuner.rounds])
    winner, verdict = confirmed_winner(args, want, finalists, crow, better, why)
    report = "\n".join(report_md(args, sp, tuner, vals, finalists, want, crow, better, winner, verdict)) + "\n"
    with held():  # the report, then the journal marked finished: an interrupt now is taken after both
        try:
            mbout.write(out, report, force=args.force or args.resume)
        except mbout.OutputError as e:
            sys.stderr.write(f"mallocbench: tune: {e}\n")
            return 2
        conf = {}
        collect(crow, want, conf, args.race_key)
        first = ranked(want, conf, better, "glibc")[:1]
        tuner.save({"winner": winner.label if winner else None, "finished": True,
                    "ranked_first": first[0].label if first else None,  # by the confirmation, winner or not
                    "racing_leader": leader.label if leader else None, "verdict": verdict,
                    "winner_setting": winner.text() if winner else None, "finalists": [c.label for c in finalists]})
        said = f"winner {winner.label} ({winner.text()})" if winner else f"no winner ({verdict})"
        sys.stderr.write(f"tune: {said}; {tuner.elapsed():.1f}s of {args.budget_s:.0f}s; report {out}\n")
        _sig["raised"] = True  # finished: a signal that came meanwhile has nothing left to stop
    return 0 if winner else 1


if __name__ == "__main__":
    sys.exit(cli.run(main))
