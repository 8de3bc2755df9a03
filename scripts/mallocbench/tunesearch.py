"""tunesearch.py - the search of `mallocbench tune`: the candidates (each family's default, the
hand-picked settings, a Latin hypercube over the search domains, neighbours of the leaders),
the racing rounds (a candidate leaves when its verdict against the leader is settled, by the
one stopping rule, sequential.py), the journal that --resume continues
from, and the confirmation's plan and run.

A helper of the tune view (tune.py), imported only by it and tunereport.py; a round's run
comes from tunerun.py.
"""
import json
import math
import os
import random
import subprocess
import sys
import time

from . import mbcsv
from . import mbdata
from . import mbout
from . import sequential
from . import stats
from . import tunerun
from . import words
from .tunerun import (OBJECTIVES, BadInput, Refused, harness, held, name_memory, read_ok, round_files,
                      run_round, sample_starts)

# The one stopping rule (sequential.py) decides the race and the confirmation alike: a candidate
# leaves the race at the first look (sequential.looks(RACE_CAP)) where its verdict against the
# leader is settled, and the confirmation is a run sized for a verdict (run's default plan,
# capped at CONFIRM_CAP blocks), which stops each comparison at its own look.
RACE_CAP = 12         # the race's block cap: looks at blocks 8 and 12 (sequential.looks(12))
FIRST_LOOK = sequential.looks(RACE_CAP)[0][0]  # 8: the fewest blocks any verdict can come from
FINALISTS = 2         # the leader and the runner-up go to the confirmation
CONFIRM_CAP = 30      # the confirmation's block cap: run's default plan (--max-blocks 30)
CONFIRM_MIN = sequential.looks(CONFIRM_CAP)[0][0]  # its first look: the fewest blocks it can settle in
CONFIRM_CONFIGS = 8   # configurations at most


# ---- the search space ------------------------------------------------------------------------

class Cand:
    """One configuration: label (unique, as run's -a LABEL=FAMILY), family, pairs
    ((tunable, value), ...) asked for (() = the family's defaults), and how it came."""

    def __init__(self, label, fam, pairs, origin):
        self.label, self.fam, self.pairs, self.origin = label, fam, tuple(pairs), origin
        self.alive, self.dropped = True, ""

    def text(self):
        return " ".join(f"{k}={v}" for k, v in self.pairs) or "defaults"


# --domain FAMILY:huge=never|advise|system: the harness's huge-page condition (docs/thp.md), no
# family's tunable; what the winner's line says of it
HUGE_HELP = ("the huge-page condition (docs/thp.md): advise = the family's own huge-page setting, in the "
             "environment above; never = transparent huge pages off for the whole process tree, which no "
             "environment variable does: start the program under prctl(PR_SET_THP_DISABLE), inherited across "
             "fork and exec; system = the kernel's own mode")


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
        res[fam] = {"dims": dims, "help": {**{t["name"]: t["help"] for t in f["tunables"]}, "huge": HUGE_HELP},
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


WARM_SAMPLES = 3  # round 1's first samples, which time the search before it goes on


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


# ---- racing ----------------------------------------------------------------------------------

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


def log_ratios(base, other):
    """The per-block log ratios other/base over the blocks both ran ({(plan, block): value}), in
    the order the blocks ran: the plans (rounds) in the order collect met them (the dict's
    insertion order; a plan's id is a random hash, so sorting by it would let a later round's
    blocks into an earlier look), then block; a block where either value is not positive has
    no ratio (None), as sequential.stop takes it."""
    rank = {}
    for k in other:
        rank.setdefault(k[0], len(rank))
    keys = sorted((k for k in other if k in base), key=lambda k: (rank[k[0]], int(k[1])))
    return [math.log(other[k] / base[k]) if other[k] > 0 and base[k] > 0 else None for k in keys]


def race_look(base, other, better, cap=RACE_CAP):
    """other against base in the race, by the one rule (sequential.settle at each look of
    sequential.looks(cap) that their paired blocks reached, over the blocks up to it): the first
    settled look, {"look", "blocks", "n", "alpha", "why", "estimate", "lo", "hi"}; at the cap
    unsettled, why "cap" ("no ratio" without one positive pair); None while the verdict could
    still change."""
    d = log_ratios(base, other)
    for k, (b, a) in enumerate(sequential.looks(cap), 1):
        if len(d) < b:
            return None
        pairs = [x for x in d[:b] if x is not None]
        why, e, lo, hi = sequential.settle(pairs, a, better=better)
        if why or b == cap:
            return {"look": k, "blocks": b, "n": len(pairs), "alpha": a,
                    "why": why or ("cap" if pairs else "no ratio"), "estimate": e,
                    "lo": lo, "hi": hi}
    return None


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


def race(alive, vals, rss, better, max_rss, ref=None, leader=None):
    """After a round: drops (in place) what exceeds --max-rss, then applies the one rule
    (race_look) to each measured candidate against the leader (the label `leader` while it
    races, else the first by ranked(); one settled better than it becomes the leader and is
    compared in its turn): settled
    regressed, negligible or within the resolution, it leaves; unsettled at the race's cap, it
    runs no more; otherwise, and a candidate not yet measured (a new neighbour), it races on.
    The leader."""
    if max_rss:
        for c in alive:
            m = med(rss.get(c.label, {}).values())
            if m is not None and m * 1048576 > max_rss and len(alive) > 1:
                c.alive, c.dropped = False, f"median {tunerun.MEM} {m:.0f} MiB over --max-rss"
    scored = ranked([c for c in alive if c.alive], vals, better, ref)
    if not scored:
        return None
    leader = next((c for c in scored if c.label == leader), scored[0])
    for _ in scored:  # each better one settled becomes the leader: at most one change per candidate
        up = next((c for c in scored if c is not leader and
                   (race_look(vals[leader.label], vals[c.label], better) or {}).get("why") == "improved"), None)
        if up is None:
            break
        leader = up
    for c in scored:
        st = None if c is leader else race_look(vals[leader.label], vals[c.label], better)
        if st and st["why"] != "improved":
            c.alive, c.dropped = False, f"{stop_text(st)} against {leader.label}"
    return leader


def stop_text(st):
    """A comparison's stop as the run says it: 'settled at block 8: 7.95x improved
    [7.02..8.73]', 'stopped at the cap, block 12: 1.004x [0.99..1.02]' (the CI of that look).
    The head is words.stop_when's, every view's."""
    if st is None or st.get("why") == "no ratio":
        return "no ratio"
    ratio = words.ratio_text(st["estimate"])
    ci = f" [{words.ci_text(st['lo'], st['hi'])}]" if st.get("lo") is not None else ""
    why, head = st["why"], words.stop_when(st)
    if why in sequential.SETTLED:
        word = "within the resolution" if why == "resolution" else why
        return f"{head}: {ratio} {word}{ci}"
    return f"{head}: {ratio}{ci}"


def rounds_left(alive, vals):
    """Racing rounds the looks still leave for the alive candidates (sequential.looks(RACE_CAP)
    above the fewest blocks any of them has), and the samples they take at most."""
    marks = [b for b, _ in sequential.looks(RACE_CAP)]
    have = [len(vals.get(c.label, {})) for c in alive]
    if len(alive) <= 1 or not have:
        return 0, 0
    return len([b for b in marks if b > min(have)]), sum(max(0, RACE_CAP - n) for n in have)


def next_blocks(alive, vals):
    """The blocks the next round runs: those that bring the alive candidates to the next look
    (sequential.looks(RACE_CAP)), the fewest any of them needs; 0 when none needs any."""
    marks = [b for b, _ in sequential.looks(RACE_CAP)]
    need = [nxt - n for n in (len(vals.get(c.label, {})) for c in alive)
            for nxt in [next((b for b in marks if b > n), None)] if nxt is not None]
    return min(need) if need else 0


def add_neighbours(sp, cands, vals, better, rng, ref=None):
    """After the first round: one neighbour of each of the two best searched candidates."""
    scored = ranked([c for c in cands if c.alive and c.pairs], vals, better, ref)
    seen = {(c.fam, c.pairs) for c in cands}
    for i, c in enumerate(scored[:2]):
        pt = neighbour(c, sp[c.fam]["dims"], rng)
        if pt and (c.fam, pt) not in seen:
            seen.add((c.fam, pt))
            cands.append(Cand(f"{c.fam}-n{i + 1}", c.fam, pt, f"neighbour of {c.label}"))


# ---- the search's state, its journal and its course ------------------------------------------

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
        self.leader = None  # the race's leader (label), as race() named it last
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
                raise BadInput(f"cannot write '{p}': it is a symbolic link (a search's files "
                               f"are written in their folder, never through a link); remove it")
            if name not in self.files and os.path.lexists(p):
                raise BadInput(f"'{p}' exists and this search did not write it: remove it, "
                               f"or --force to start again")
            self.files.add(name)

    def check_links(self):
        """--resume: a symbolic link planted at a name the journal lists is refused before any
        work (the round's run would otherwise write through it or beside it)."""
        d = os.path.dirname(self.base)
        for name in sorted(self.files):
            p = os.path.join(d, name)
            if os.path.islink(p):
                raise BadInput(f"cannot write '{p}': it is a symbolic link (a search's files "
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
                 "rounds": self.rounds, "confirm": self.confirm, "files": sorted(self.files), "leader": self.leader}
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
            raise BadInput(f"cannot resume '{path}': {e}")
        if not isinstance(st, dict) or not isinstance(st.get("identity"), dict):
            raise BadInput(f"cannot resume '{path}': not a journal tune wrote (no identity); "
                           f"--force starts again")
        seed = st["identity"].get("seed")
        if self.args.seed_drawn and isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
            self.args.seed = seed  # no --seed given: the search's own, as its journal keeps it
        mine = json.loads(json.dumps(self.identity()))
        diff = [k for k in self.IDENTITY if st.get("identity", {}).get(k) != mine[k]]
        if diff:
            raise BadInput(f"cannot resume '{path}': it was started with other {', '.join(diff)} "
                            f"(give the same options, or --force to start again)")
        if st.get("winner") is not None or st.get("finished"):
            raise BadInput(f"'{path}' is finished: nothing to resume (--force starts again)")
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
            raise BadInput(f"cannot resume '{path}': it has no {e.args[0]!r} "
                           f"(not a journal tune wrote; --force starts again)") from None
        except ValueError as e:
            raise BadInput(f"cannot resume '{path}': {e} "
                           f"(not a journal tune wrote; --force starts again)") from None
        except TypeError as e:
            raise BadInput(f"cannot resume '{path}': a field is not what tune writes ({e}); "
                           f"--force starts again") from None
        self.rounds, self.confirm = st["rounds"], st["confirm"]
        self.leader = st.get("leader") if isinstance(st.get("leader"), str) else None
        files = st.get("files")
        if files is None:  # a journal from before "files": what its rounds and confirmation name
            files = [os.path.basename(p) for x in self.rounds + ([self.confirm] if self.confirm else [])
                     for p in round_files(x["csv"])]
        if not (isinstance(files, list) and all(isinstance(f, str) and f and "/" not in f for f in files)):
            raise BadInput(f"cannot resume '{path}': files is not what tune writes "
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
        """The race: rounds that bring the candidates to their next look, each leaving as its
        verdict against the leader settles (race()), until the leader races alone, every other
        one is at the race's cap, or the budget ends; returns (leader, per-candidate racing
        values, rss, better)."""
        args = self.args
        vals, better = self.gather(args.race_key)  # resumed: what earlier invocations measured
        rss, leader = self.gather("rss")[0], None
        pending = self.rounds[-1] if self.rounds and not self.rounds[-1]["done"] else None
        while True:
            per = self.per_sample()
            alive = [c for c in self.cands if c.alive]
            if pending is None:
                k = next_blocks(alive, vals)
                if self.rounds and (len(alive) <= 1 or not k):
                    break
                reserve = confirm_reserve(len(alive), per, args.budget_s)
                if per and time.monotonic() + len(alive) * k * per + reserve > deadline:
                    # the budget ends first: the leader and the best half by median, if that round fits
                    alive = ranked(alive, vals, better, self.ref) + [c for c in alive if not vals.get(c.label)]
                    alive.sort(key=lambda c: c.label != self.leader)  # stable: the leader first
                    keep = max(FINALISTS, len(alive) // 2)
                    if len(alive) <= keep or time.monotonic() + keep * k * per + reserve > deadline:
                        break
                    for c in alive[keep:]:
                        c.alive, c.dropped = False, "halved out (budget)"
                    alive = alive[:keep]
                labels = [c.label for c in alive]
                labels += [self.ref] if self.ref not in labels else []  # the reference runs in every block
                pending = {"round": len(self.rounds) + 1, "csv": f"{self.base}.round{len(self.rounds) + 1}.csv",
                           "candidates": labels, "blocks": k,
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
                                  self.ref, self.leader) or leader
                    self.leader = leader.label if leader is not None else self.leader
                    if pending["round"] == 1 and leader is not None:
                        add_neighbours(self.sp, self.cands, vals, better, self.rng, self.ref)
                self.save()
            if not rows:  # nothing ran to the end: no round would do better
                break
            pending = None
            self.progress(vals, better, deadline)
            if time.monotonic() >= deadline - reserve:
                break
        return self.leading(vals, better), vals, rss, better

    def leading(self, vals, better):
        """The race's leader: the one race() named last (the journal keeps it), else the first of
        the alive candidates by ranked()."""
        byl = {c.label: c for c in self.cands}
        alive = ranked([c for c in self.cands if c.alive], vals, better, self.ref)
        return byl.get(self.leader) or (alive[0] if alive else None)

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
        """Prints what round 1 and the confirmation's first look need at round 1's pace; the
        line that refuses the search when the budget cannot hold them (with a narrower -a or
        --points that it can hold, and the budget that would), else None."""
        args, pace = self.args, pending["timing"]
        fams = list(self.sp)
        n1 = len(pending["candidates"]) * pending["blocks"]
        nconf = confirm_configs(pending["candidates"], fams)
        before = pending.get("before_s", 0.0)
        need = before + need_s(pace, n1, nconf)
        what = (f"round 1 ({n1} samples) and the confirmation to its first look ({CONFIRM_MIN} blocks, "
                f"{CONFIRM_MIN * nconf} samples) "
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
            t = before + need_s(pace, len(cs) * FIRST_LOOK, confirm_configs([c.label for c in cs], f))
            if t <= args.budget_s:
                opts = ([f"-a {','.join(f)}"] if f != fams else []) + ([f"--points {p}"] if p != args.points else [])
                hint = f"{' '.join(opts)} (about {duration_text(t)}), or "
                break
        return (f"the {duration_text(args.budget_s)} budget cannot hold the search: {what}; "
                f"try {hint}--budget {math.ceil(need * 1.1)}s; what round 1 measured is kept in "
                f"{self.base}.tune.json (--resume with a longer --budget goes on from it)")

    def progress(self, vals, better, deadline):
        alive = [c for c in self.cands if c.alive]
        per = self.per_sample() or 0
        r, s = rounds_left(alive, vals)
        eta = min(max(0.0, deadline - time.monotonic()), (s + confirm_size(len(alive)) * CONFIRM_MIN) * per)
        lead = self.leading(vals, better)
        sys.stderr.write(f"tune: round {len(self.rounds)}: {len(alive)} of {len(self.cands)} candidates left, "
                         f"leader {lead.label if lead else '-'}, "
                         f"{sum(r.get('samples', 0) for r in self.rounds)} samples, {self.elapsed():.0f}s elapsed, "
                         f"ETA {eta:.0f}s ({r} racing round{'s' if r != 1 else ''} and the confirmation)\n")

    # -- confirmation --------------------------------------------------------------------------

    def confirm_set(self, vals, rss, sysv, better):
        """The finalists (the race's leader first: the confirmation's baseline, which every other
        configuration is compared with; then the runner-up, the best of the rest by ranked()),
        their families' defaults, glibc's default, the hand-picked settings, then the racing's
        Pareto fronts (throughput against peak RSS and kernel CPU): at most CONFIRM_CONFIGS
        configurations, in that order of priority."""
        by = {c.label: c for c in self.cands}
        lead = self.leading(vals, better)
        rest = [c for c in ranked(self.cands, vals, better, self.ref) if c is not lead and "--max-rss" not in c.dropped]
        finalists = ([lead] if lead else []) + rest[:FINALISTS - 1]
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
        return finalists, want

    def run_confirm(self, want, deadline):
        """The confirmation's rows: one run of `want` sized for a verdict (run's default plan, no
        -r: each comparison with want[0], the leader, stops at its look by the one rule, within
        CONFIRM_CAP blocks and the budget left), in fresh blocks, nothing from the racing reused."""
        per = self.per_sample()
        left = deadline - time.monotonic()
        cost = self.sample_costs(per)
        block = lambda: sum(cost.get(c.label, per) for c in want)  # noqa: E731
        if self.confirm is None and per:
            # the Pareto points only while the first look's CONFIRM_MIN blocks of all still fit
            # (a slow configuration, one that faults all the time, costs what its racing samples took)
            while len(want) > self.essential and CONFIRM_MIN * block() > left:
                want.pop()
        if self.confirm is None:
            self.claim(self.base + ".confirm.csv")
            # blocks: the cap (the plan stops each comparison at its look, at the latest there)
            self.confirm = {"csv": self.base + ".confirm.csv", "configs": [c.label for c in want], "blocks": CONFIRM_CAP,
                            "seed": self.rng.randrange(1 << 31), "done": False, "resumed": False}
            self.save()
        else:
            self.confirm["resumed"] = True
        byl = {c.label: c for c in want}
        cs = [byl[lab] for lab in self.confirm["configs"] if lab in byl]
        if left > 0:
            rows = run_round(self.args, cs, None, self.confirm["seed"], self.confirm["csv"], deadline,
                             resume=self.confirm["resumed"], sized=(self.confirm["blocks"], left))
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


def front(points, better):
    """Indices of the Pareto front: no other point has better y (throughput) and lower x."""
    sign = 1 if better == "higher" else -1
    out = []
    for i, (x, y) in enumerate(points):
        if not any(x2 <= x and sign * y2 >= sign * y and (x2, y2) != (x, y) for x2, y2 in points):
            out.append(i)
    return out
