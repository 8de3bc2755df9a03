"""stats.py - the statistics behind compare.py: exact rank tests and the
confidence intervals that belong to them, composed from scipy (Debian's
python3-scipy: binom, wilcoxon, mannwhitneyu; permutation_test in the tests).

Contract: a change (paired_change, unpaired_change) carries its estimate, its
CI and its exact p, where CI and test come from the SAME exact null
distribution (Hodges-Lehmann estimate, CI by inverting the rank test), so
without ties p <= alpha exactly when the CI excludes "no change"; verdict()
reads only the CI, so a printed verdict never contradicts its printed CI.
scipy and numpy are imported on first use (require_scipy() re-runs the script
under Debian's /usr/bin/python3 when this interpreter lacks them)."""
import functools
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

ALPHA = 0.05
DEBIAN_PYTHON = "/usr/bin/python3"
# the one set of verdict words (docs/output.md, The statistics of `mallocbench compare`): every view prints these and only these
VERDICTS = ("improved", "regressed", "improved?", "regressed?", "negligible", "within noise", "too few",
            "trade-off", "-")
_EXACT_SIGNED_MAX = 300   # pairs: exact null by DP up to here, normal approximation above
_EXACT_RANKSUM_MAX = 120  # n1 + n2: the same for the rank-sum test
_TOL = 1e-9               # relative: values this close are ties (floats written with 6 digits)


def require_scipy():
    """Import scipy and numpy; where they are missing and this is not Debian's interpreter,
    exec the running script under /usr/bin/python3 (once); else raise the ImportError."""
    try:
        import numpy  # noqa: F401
        import scipy.stats  # noqa: F401
        return
    except ImportError as e:
        err = e
    if (os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) and os.access(DEBIAN_PYTHON, os.X_OK)
            and not os.environ.get("MB_REEXEC") and sys.argv and os.path.isfile(sys.argv[0])):
        sys.stdout.flush()
        sys.stderr.flush()
        env = dict(os.environ, MB_REEXEC="1")
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        if spec and spec.name.startswith(__package__ + "."):
            # a module of this package (python3 -m, a shim, the harness): the same module, the
            # package's directory on that interpreter's path only (cli.run takes it out again)
            parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            env["PYTHONPATH"] = os.pathsep.join([parent] + [p for p in [os.environ.get("PYTHONPATH")] if p])
            env["MB_PYTHONPATH"] = parent
            if not env.get("PYTHONSAFEPATH"):  # no module from the current directory first
                env["PYTHONSAFEPATH"] = env["MB_PYTHONSAFEPATH"] = "1"
            os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON, "-m", spec.name] + sys.argv[1:], env)
        os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv, env)
    raise err


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _le(p, alpha):
    """p <= alpha, forgiving the last bits of a float alpha such as 1 - (1 - 0.05/7)."""
    return p <= alpha * (1 + 1e-9)


# ---- median and its exact distribution-free CI ------------------------------------------

@functools.lru_cache(maxsize=1024)  # a pure function of (n, level); the nightly loader asks ~50,000 times
def median_ci_ranks(n, level=0.95):
    """1-based ranks (k, n-k+1) of the exact CI of the median: the largest k with
    2 P(Binom(n, 1/2) <= k-1) <= 1-level; None when even [x(1), x(n)] covers less."""
    from scipy.stats import binom
    alpha = 1 - level
    best = None
    for k in range(1, (n + 1) // 2 + 1):
        if _le(2 * binom.cdf(k - 1, n, 0.5), alpha):
            best = k
        else:
            break
    return None if best is None else (best, n - best + 1)


def median_ci(xs, level=0.95):
    """(lo, hi) of the exact order-statistic CI of the median; None when n is too small."""
    s = sorted(xs)
    r = median_ci_ranks(len(s), level)
    return None if r is None else (s[r[0] - 1], s[r[1] - 1])


# ---- exact null distributions (doubled midranks, so that every rank is an integer) -------

@functools.lru_cache(maxsize=8192)
def signed_rank_null(ranks2):
    """P(S = s), s = 0..sum(ranks2), of S = the sum of the doubled ranks that get a + sign
    when each sign is a fair coin: the sign-flip null of the signed-rank statistic."""
    import numpy as np
    f = np.zeros(sum(ranks2) + 1)
    f[0] = 1.0
    top = 0
    for r in ranks2:
        g = f.copy() * 0.5
        g[r:top + r + 1] += f[:top + 1] * 0.5
        f, top = g, top + r
    return f


@functools.lru_cache(maxsize=8192)
def rank_sum_null(ranks2, k):
    """P(S = s) of S = the sum of k doubled ranks drawn without replacement from ranks2:
    the permutation null of the rank-sum (Mann-Whitney) statistic, ties included."""
    import numpy as np
    total = sum(ranks2)
    f = np.zeros((k + 1, total + 1))
    f[0, 0] = 1.0
    for r in ranks2:
        f[1:, r:] = f[1:, r:] + f[:-1, :total + 1 - r].copy()
    return f[k] / f[k].sum()


def _two_sided(probs, s_obs):
    s = int(round(s_obs))
    return min(1.0, 2 * min(float(probs[:s + 1].sum()), float(probs[s:].sum())))


def _groups(values):
    """Midranks x 2 of values (ties within _TOL), in the input order."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks2 = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and _same(values[order[j + 1]], values[order[i]]):
            j += 1
        for t in range(i, j + 1):
            ranks2[order[t]] = i + j + 2  # 2 * mean of the 1-based ranks i+1..j+1
        i = j + 1
    return ranks2


def _same(a, b):
    return abs(a - b) <= _TOL * max(abs(a), abs(b), 1e-300)


def _has_ties(values):
    s = sorted(values)
    return any(_same(a, b) for a, b in zip(s, s[1:]))


def _is_zero(x, scale):
    return abs(x) <= _TOL * scale


def signed_rank_p(d, theta=0.0):
    """Exact two-sided p of the sign-flip test of the signed-rank statistic of d - theta
    (midranks for ties, zero differences dropped, as scipy's zero_method='wilcox')."""
    scale = max((abs(x) for x in d), default=0.0)
    e = [x - theta for x in d]
    e = [x for x in e if not _is_zero(x, max(scale, abs(theta)))]
    if not e:
        return 1.0
    if len(e) > _EXACT_SIGNED_MAX:
        return _signed_rank_p_normal(e)
    ranks2 = _groups([abs(x) for x in e])
    s_obs = sum(r for r, x in zip(ranks2, e) if x > 0)
    return _two_sided(signed_rank_null(tuple(sorted(ranks2))), s_obs)


def rank_sum_p(x, y, theta=0.0):
    """Exact two-sided p of the permutation test of the rank sum of y - theta against x
    (midranks for ties): the exact Mann-Whitney test, ties included."""
    e = [v - theta for v in y]
    if len(x) + len(y) > _EXACT_RANKSUM_MAX:
        return _rank_sum_p_normal(x, e)
    ranks2 = _groups(list(x) + e)
    s_obs = sum(ranks2[len(x):])
    return _two_sided(rank_sum_null(tuple(sorted(ranks2)), len(y)), s_obs)


def _norm_sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2))


def _signed_rank_p_normal(e):
    ranks2 = _groups([abs(x) for x in e])
    t = sum(r for r, x in zip(ranks2, e) if x > 0) / 2
    mu = sum(ranks2) / 4
    sd = math.sqrt(sum((r / 2) ** 2 for r in ranks2) / 4)
    return 1.0 if sd == 0 else min(1.0, 2 * _norm_sf(max(0.0, abs(t - mu) - 0.5) / sd))


def _rank_sum_p_normal(x, e):
    ranks2 = _groups(list(x) + e)
    n, k = len(ranks2), len(e)
    r = [v / 2 for v in ranks2]
    mean = sum(r) / n
    var = k * (n - k) / (n * (n - 1)) * sum((v - mean) ** 2 for v in r)
    s = sum(r[len(x):])
    return 1.0 if var == 0 else min(1.0, 2 * _norm_sf(max(0.0, abs(s - k * mean) - 0.5) / math.sqrt(var)))


# ---- Hodges-Lehmann estimates with the CI from the test's own null ---------------------

def _critical(cdf_at, top, alpha):
    """Largest integer t in 0..top with 2 P(T <= t) <= alpha; -1 when none."""
    t = -1
    while t + 1 <= top and _le(2 * cdf_at(t + 1), alpha):
        t += 1
    return t


def _invert(points, p_at, alpha):
    """CI by test inversion over the sorted distinct breakpoints of the statistic: the hull of
    every theta (breakpoint or open interval between two) whose exact p exceeds alpha;
    None when the test could reject nothing (below the first breakpoint is accepted)."""
    pts = []
    for v in points:
        if not pts or not _same(v, pts[-1]):
            pts.append(v)
    span = (pts[-1] - pts[0]) or abs(pts[0]) or 1.0
    if not _le(p_at(pts[0] - span), alpha) or not _le(p_at(pts[-1] + span), alpha):
        return None
    lo = hi = None
    for i, v in enumerate(pts):
        inside = [v] if p_at(v) > alpha else []
        if i + 1 < len(pts) and p_at((v + pts[i + 1]) / 2) > alpha:
            inside += [v, pts[i + 1]]
        if inside:
            lo = inside[0] if lo is None else lo
            hi = inside[-1]
    return (lo, hi) if lo is not None else (pts[0], pts[0])


@functools.lru_cache(maxsize=4096)
def signed_rank_critical(n, alpha):
    """Largest t with 2 P(W+ <= t) <= alpha under the exact sign-flip null of n untied ranks
    (-1 when n can reject nothing at alpha): the CI of the Walsh averages W is [W(t+1), W(M-t)].
    Above the exact limit, the normal approximation signed_rank_shift uses there."""
    m = n * (n + 1) // 2
    if n > _EXACT_SIGNED_MAX:
        z = 1.959963984540054 if abs(alpha - 0.05) < 1e-12 else _z(alpha)
        return math.floor(m / 2 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    cdf = signed_rank_null(tuple(range(2, 2 * n + 1, 2))).cumsum()
    return _critical(lambda t: cdf[2 * t], m, alpha)


def walsh(d):
    """The sorted Walsh averages of d: the pseudo-median's (Hodges-Lehmann's) support."""
    n = len(d)
    return sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))


def paired_estimate(base, other):
    """paired_change(base, other).estimate without its CI and p (what a view that shows the
    estimate alone needs, night after night): the same pairs, the same Hodges-Lehmann
    pseudo-median of the same log ratios (or differences).  None when no pair is complete."""
    pairs = [(a, b) for a, b in zip(base, other) if a is not None and b is not None]
    if not pairs:
        return None
    if all(a > 0 and b > 0 for a, b in pairs):
        return "ratio", _exp(median(walsh([math.log(b) - math.log(a) for a, b in pairs])))
    return "diff", median(walsh([b - a for a, b in pairs]))


def signed_rank_shift(d, level=0.95):
    """(estimate, lo, hi, p, method) for the centre of the paired differences d: the
    Hodges-Lehmann pseudo-median (median of the Walsh averages), its CI [W(k), W(M-k+1)]
    from the exact signed-rank null (test inversion when d has ties), the exact p at 0.
    lo, hi are None when no CI at this level exists (too few pairs)."""
    alpha = 1 - level
    n = len(d)
    ws = walsh(d)
    m = len(ws)
    est = median(ws)
    ties = _has_ties(d)
    zero_hit = any(_is_zero(w, max(abs(x) for x in d) or 1.0) for w in ws)
    if n > _EXACT_SIGNED_MAX:
        method = "signed-rank, normal approximation"
        p = signed_rank_p(d)
        k = signed_rank_critical(n, alpha)
        return (est, ws[k], ws[m - 1 - k], p, method) if k >= 0 else (est, None, None, p, method)
    if not ties:
        t = signed_rank_critical(n, alpha)
        lo, hi = (ws[t], ws[m - 1 - t]) if t >= 0 else (None, None)
        if zero_hit:  # 0 is a breakpoint: the test at 0 itself sees a tie or a zero
            p, method = signed_rank_p(d), "Wilcoxon signed-rank, exact sign-flip (zeros or ties at 0)"
        else:
            p, method = _scipy_wilcoxon(d), "Wilcoxon signed-rank, exact"
        return est, lo, hi, p, method
    ci = _invert(ws, lambda th: signed_rank_p(d, th), alpha)
    lo, hi = ci if ci else (None, None)
    return est, lo, hi, signed_rank_p(d), "Wilcoxon signed-rank, exact sign-flip permutation (ties)"


def rank_sum_shift(x, y, level=0.95):
    """(estimate, lo, hi, p, method) for the shift of y against x: the Hodges-Lehmann
    estimate (median of all y - x), its CI [D(k), D(M-k+1)] from the exact Mann-Whitney
    null (test inversion when x or y has ties), the exact p at 0."""
    alpha = 1 - level
    n1, n2 = len(x), len(y)
    diffs = sorted(b - a for a in x for b in y)
    m = len(diffs)
    est = median(diffs)
    if n1 + n2 > _EXACT_RANKSUM_MAX:
        p = rank_sum_p(x, y)
        k = math.floor(m / 2 - _z(alpha) * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12))
        lohi = (diffs[k], diffs[m - 1 - k]) if k >= 0 else (None, None)
        return (est, *lohi, p, "Mann-Whitney, normal approximation")
    if not _has_ties(x) and not _has_ties(y):
        probs = rank_sum_null(tuple(range(2, 2 * (n1 + n2) + 1, 2)), n2)
        cdf = probs.cumsum()
        base = n2 * (n2 + 1)  # doubled rank sum when U = 0
        t = _critical(lambda t: cdf[2 * t + base], m, alpha)
        lo, hi = (diffs[t], diffs[m - 1 - t]) if t >= 0 else (None, None)
        if any(_same(a, b) for a in x for b in y):
            p, method = rank_sum_p(x, y), "Mann-Whitney, exact permutation (ties at 0)"
        else:
            p, method = _scipy_mannwhitney(x, y), "Mann-Whitney, exact"
        return est, lo, hi, p, method
    ci = _invert(diffs, lambda th: rank_sum_p(x, y, th), alpha)
    lo, hi = ci if ci else (None, None)
    return est, lo, hi, rank_sum_p(x, y), "Mann-Whitney, exact permutation (ties)"


def _z(alpha):
    from scipy.stats import norm
    return float(norm.isf(alpha / 2))


def _scipy_wilcoxon(d):
    from scipy.stats import wilcoxon
    return float(wilcoxon(d, method="exact").pvalue) if len(d) > 0 else 1.0


def _scipy_mannwhitney(x, y):
    from scipy.stats import mannwhitneyu
    return float(mannwhitneyu(y, x, alternative="two-sided", method="exact").pvalue)


# ---- changes and verdicts -------------------------------------------------------------------

@dataclass
class Change:
    """One configuration against its baseline on one metric.  kind 'ratio': estimate, lo, hi
    are other/base ratios (1 = no change); kind 'diff': other - base in the metric's unit
    (0 = no change; used where a value is <= 0, e.g. counts 0 -> 823).  lo/hi None: no CI
    exists at this level and n.  p: exact two-sided p at no change.  min_p: the smallest p
    this n can give; detectable: min_p <= 1 - level."""
    kind: str
    estimate: float
    lo: Optional[float]
    hi: Optional[float]
    p: float
    n: int
    n_base: int
    method: str
    min_p: float
    detectable: bool
    level: float
    median: float
    base_median: float
    paired: bool
    fleet: Optional["Pooled"] = None  # several machines: each one's change and what they say together

    @property
    def no_change(self):
        return 1.0 if self.kind == "ratio" else 0.0


def _exp(x):
    """math.exp, inf past the largest double (never an OverflowError traceback)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _finish(kind, est, lo, hi, p, method, n, n_base, min_p, level, med, base_med, paired):
    if kind == "ratio":
        est, lo, hi = _exp(est), None if lo is None else _exp(lo), None if hi is None else _exp(hi)
    return Change(kind, est, lo, hi, p, n, n_base, method, min_p, _le(min_p, 1 - level), level, med, base_med,
                  paired)


def paired_change(base, other, level=0.95):
    """other against base, aligned per block (None = missing, that pair dropped): per-block log
    ratios when every value is > 0 (kind 'ratio'), else differences (kind 'diff'); exact
    signed-rank test, HL pseudo-median and its CI.  None when no pair is complete."""
    pairs = [(a, b) for a, b in zip(base, other) if a is not None and b is not None]
    if not pairs:
        return None
    n = len(pairs)
    if all(a > 0 and b > 0 for a, b in pairs):
        kind, d = "ratio", [math.log(b) - math.log(a) for a, b in pairs]
    else:
        kind, d = "diff", [b - a for a, b in pairs]
    est, lo, hi, p, method = signed_rank_shift(d, level)
    return _finish(kind, est, lo, hi, p, method, n, n, 2.0 ** (1 - n), level, median([b for _, b in pairs]),
                   median([a for a, _ in pairs]), True)


def unpaired_change(base, other, level=0.95):
    """other against base as independent samples: HL shift of the logs (kind 'ratio') when
    every value is > 0, else of the values (kind 'diff'), CI from the exact Mann-Whitney
    null, exact p.  None when a side is empty."""
    a = [v for v in base if v is not None]
    b = [v for v in other if v is not None]
    if not a or not b:
        return None
    if min(a) > 0 and min(b) > 0:
        kind, x, y = "ratio", [math.log(v) for v in a], [math.log(v) for v in b]
    else:
        kind, x, y = "diff", a, b
    est, lo, hi, p, method = rank_sum_shift(x, y, level)
    min_p = min(1.0, 2 / math.comb(len(a) + len(b), len(a)))
    return _finish(kind, est, lo, hi, p, method, len(b), len(a), min_p, level, median(b), median(a), False)


def verdict(change, better="higher", floor=0.01):
    """One of VERDICTS, read from the CI alone (ratio: 1 -+ floor is the band; diff: -+ floor x
    |base median|):
      improved / regressed    the whole CI lies beyond the band, in the better / worse direction;
      improved? / regressed?  it excludes no change but reaches into the band: a real change,
                              perhaps smaller than the floor;
      negligible              the whole CI lies inside the band (whether or not it excludes no change);
      within noise            it includes no change and reaches beyond the band;
      too few                 this n cannot reach significance, whatever the data;
      -                       no CI to read (an unpaired ratio of medians, or no change at all)."""
    if change is None or getattr(change, "method", "") == UNPAIRED:
        return "-"
    if not change.detectable or change.lo is None or change.hi is None:
        return "too few"
    if change.kind == "ratio":
        lo_d, hi_d = change.lo - 1, change.hi - 1
        up, down = change.lo > 1 + floor, change.hi < 1 - floor
        inside = change.lo >= 1 - floor and change.hi <= 1 + floor
    else:
        band = floor * abs(change.base_median) if change.base_median == change.base_median else 0.0
        lo_d, hi_d = change.lo, change.hi
        up, down = change.lo > band, change.hi < -band
        inside = change.lo >= -band and change.hi <= band
    if up or down:
        return "improved" if up == (better == "higher") else "regressed"
    if inside:
        return "negligible"
    if lo_d <= 0 <= hi_d:
        return "within noise"
    return ("improved?" if (lo_d > 0) == (better == "higher") else "regressed?")


UNPAIRED = "ratio of medians (unpaired: fewer than 2 pairs)"


def unpaired_ratio(base, other):
    """The ratio of the medians where fewer than 2 pairs exist (a sweep's points, -r 1): a
    Change with no CI, method UNPAIRED, which verdict() reads as no verdict ('-')."""
    a = [v for v in base if v is not None]
    b = [v for v in other if v is not None]
    if not a or not b:
        return None
    ma, mb = median(a), median(b)
    if ma > 0 and mb > 0:
        kind, est = "ratio", mb / ma
    else:
        kind, est = "diff", mb - ma
    return Change(kind, est, None, None, float("nan"), len(b), len(a), UNPAIRED, 1.0, False, 0.95, mb, ma, False)


def flagged(word):
    return word in ("improved", "regressed")


# ---- multiplicity ---------------------------------------------------------------------------

def bonferroni_level(m, alpha=ALPHA):
    """CI level that gives a family-wise alpha over m cells."""
    return 1 - alpha / max(m, 1)


def bh_level(pvalues, q=ALPHA):
    """(R, level): Benjamini-Hochberg at FDR q over the finite p-values; the cells it selects
    are those with p <= R q / m, and CIs at level 1 - max(R, 1) q / m (Benjamini-Yekutieli
    false-coverage-rate intervals) exclude no change for exactly those cells (without ties)."""
    ps = sorted(p for p in pvalues if p is not None and not math.isnan(p))
    m = len(ps)
    if m == 0:
        return 0, 1 - q
    r = 0
    for i, p in enumerate(ps, 1):
        if _le(p, i * q / m):
            r = i
    return r, 1 - max(r, 1) * q / m


def geomean(xs):
    """Geometric mean; None when any value is not positive (never silently dropped)."""
    xs = list(xs)
    if not xs or any(x is None or not x > 0 or math.isinf(x) for x in xs):
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


# ---- several machines: one answer pooled from each machine's own ------------------------------

POOL_MIN = 3  # machines for a pooled CI (with two, tau and a Hartung-Knapp CI are not estimable)
POOLED = "pooled over machines (random effects: Paule-Mandel tau^2, Hartung-Knapp CI)"


@dataclass
class Pooled:
    """Each machine's paired change (machines: [(label, Change)]) and what they say together,
    on the log-ratio scale: estimate/lo/hi the pooled ratio and its Hartung-Knapp CI (None
    with fewer than POOL_MIN machines that have a CI), tau (the machines' spread, a log-ratio
    SD) and I^2 with their Q-profile CIs, Cochran's Q and its p, and `differs`: Q's p below
    alpha and a spread (the largest machine estimate over the smallest) beyond the floor.
    `left_out`: machines without a CI (too few blocks on them, or all of them one value),
    shown, not pooled, and `left_why` {label: why}; a machine whose every block gave one
    ratio is exact, so one lying beyond the others' CIs (or the pooled one) by more than the
    floor makes the cell differ by machine too; `missing`: why nothing was pooled where a
    library is missing."""
    machines: list
    k: int
    estimate: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    p: Optional[float]
    tau: Optional[float]
    tau_ci: Optional[tuple]
    i2: Optional[float]
    i2_ci: Optional[tuple]
    q: Optional[float]
    q_p: Optional[float]
    spread: Optional[float]
    differs: bool
    left_out: list
    level: float
    missing: str = ""
    left_why: dict = field(default_factory=dict)


NO_CI = "too few blocks there for a CI"
NO_SPREAD = "every block there gave one ratio: no spread to weigh it by"


def _log_se(ch):
    """(log ratio, its standard error) of a machine from its CI (the width over 2 z at the CI's
    level: the usual way a meta-analysis reads a CI), else the reason it has none (NO_CI,
    NO_SPREAD)."""
    if ch is None or ch.kind != "ratio" or ch.lo is None or ch.hi is None or not ch.lo > 0:
        return NO_CI
    width = math.log(ch.hi) - math.log(ch.lo)
    if not width > 1e-9:
        return NO_SPREAD
    return math.log(ch.estimate), width / (2 * _z(1 - ch.level))


def _q_gen(y, v, tau2):
    w = [1 / (vi + tau2) for vi in v]
    mu = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
    return sum(wi * (yi - mu) ** 2 for wi, yi in zip(w, y))


def _tau2_ci(y, v, level):
    """Q-profile CI of tau^2 (Viechtbauer 2007): where the generalised Q meets the chi^2
    quantiles of k-1 degrees of freedom (0 where Q at tau^2 = 0 is already below)."""
    from scipy.optimize import brentq
    from scipy.stats import chi2
    k, a = len(y), 1 - level
    out = []
    for q in (chi2.isf(a / 2, k - 1), chi2.isf(1 - a / 2, k - 1)):
        if _q_gen(y, v, 0.0) <= q:
            out.append(0.0)
            continue
        hi = max(v) + 1e-9
        while _q_gen(y, v, hi) > q and hi < 1e6:
            hi *= 4
        out.append(brentq(lambda t: _q_gen(y, v, t) - q, 0.0, hi))
    return tuple(out)


def _typical_var(v):
    """Higgins and Thompson's typical within-machine variance, (k-1) sum w / ((sum w)^2 -
    sum w^2), its denominator as 2 sum_{i<j} w_i w_j (no cancellation when one weight dwarfs
    the rest)."""
    w = [1 / vi for vi in v]
    den = 2 * sum(w[i] * w[j] for i in range(len(w)) for j in range(i + 1, len(w)))
    return (len(w) - 1) * sum(w) / den if den > 0 else math.inf


def pool(machines, floor=0.01, level=0.95, weigh=None):
    """Pooled of [(label, Change)]: statsmodels' combine_effects (Debian's python3-statsmodels)
    on the machines' log ratios, Paule-Mandel tau^2, the Hartung-Knapp CI (t with k-1 degrees
    of freedom) never narrower than the plain random-effects one (its scale at least 1: three
    machines that agree closely do not make a CI narrower than each machine's evidence).
    weigh: the same machines' changes at a fixed level, whose CIs give the standard errors,
    so that the weights, Q, tau and I^2 do not move with the family's level (the default:
    machines' own)."""
    se_of = dict((m, _log_se(ch)) for m, ch in (weigh or machines))

    def weight(m, ch):  # a machine shows a CI (its own level) and has a 95% one to weigh it by
        own = _log_se(ch)
        return own if not isinstance(own, tuple) else se_of.get(m, NO_CI)
    have = [(m, ch, weight(m, ch)) for m, ch in machines]
    used = [(m, ch, ls) for m, ch, ls in have if isinstance(ls, tuple)]
    left_why = {m: ls for m, _, ls in have if not isinstance(ls, tuple)}
    left = list(left_why)
    exact = [(m, ch) for m, ch in machines if left_why.get(m) == NO_SPREAD]
    k = len(used)
    est = lo = hi = p = tau = tau_ci = i2 = i2_ci = q = q_p = spread = None
    differs, missing = False, ""
    if k >= 2:
        import warnings
        try:
            import numpy
            from statsmodels.stats.meta_analysis import combine_effects
        except ImportError as e:
            missing = (f"{e.name or 'statsmodels'} is missing (apt-get install python3-statsmodels): "
                       f"the machines are not pooled")
            return Pooled(machines, k, None, None, None, None, None, None, None, None, None, None, None, False,
                          left, level, missing, left_why)
        y = [ls[0] for _, _, ls in used]
        v = [ls[1] ** 2 for _, _, ls in used]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its per-machine CIs use the normal: we print our own
            res = combine_effects(numpy.array(y), numpy.array(v), method_re="pm", use_t=True, alpha=1 - level)
            frame = res.summary_frame()
        q, q_p = (float(x) for x in res.test_homogeneity().tuple)
        spread = math.exp(max(y) - min(y))
        differs = q_p < 1 - level and spread > 1 + floor
        if k >= POOL_MIN:
            from scipy.stats import t as t_dist
            mu = float(frame.loc["random effect wls", "eff"])
            se = max(float(frame.loc["random effect wls", "sd_eff"]), float(frame.loc["random effect", "sd_eff"]))
            half = float(t_dist.isf((1 - level) / 2, k - 1)) * se
            est, lo, hi = math.exp(mu), math.exp(mu - half), math.exp(mu + half)
            p = float(2 * t_dist.sf(abs(mu) / se, k - 1)) if se > 0 else (0.0 if mu else 1.0)
            t2 = max(float(res.tau2), 0.0)
            tau = math.sqrt(t2)
            t2ci = _tau2_ci(y, v, level)
            tau_ci = (math.sqrt(t2ci[0]), math.sqrt(t2ci[1]))
            s2 = _typical_var(v)
            i2 = t2 / (t2 + s2)
            i2_ci = (t2ci[0] / (t2ci[0] + s2), t2ci[1] / (t2ci[1] + s2))
    if exact and not missing:
        # an exact machine (every block one ratio) beyond every CI the others give, by more
        # than the floor, is a difference Q cannot weigh: it differs by machine
        cis = [(lo, hi)] if est is not None else [(ch.lo, ch.hi) for _, ch, _ in used]
        for _, ch in exact:
            if cis and all(ch.estimate > b * (1 + floor) or ch.estimate < a / (1 + floor) for a, b in cis):
                differs = True
        xs = [ch.estimate for _, ch in exact]
        if not cis and max(xs) > min(xs) * (1 + floor):  # exact machines only, and they disagree
            differs = True
        ests = [ch.estimate for _, ch, _ in used] + [ch.estimate for _, ch in exact]
        spread = max(ests) / min(ests)
    return Pooled(machines, k, est, lo, hi, p, tau, tau_ci, i2, i2_ci, q, q_p, spread, differs, left, level,
                  missing, left_why)


def pooled_change(pl, base_med=math.nan, med=math.nan):
    """The Change a table prints for a pooled cell (pl.estimate not None): the pooled ratio and
    its CI, the machines' own beside it."""
    n = sum(ch.n for m, ch in pl.machines if ch is not None and m not in pl.left_out)  # the blocks pooled
    return Change("ratio", pl.estimate, pl.lo, pl.hi, pl.p, n, n, POOLED, 0.0, True, pl.level, med, base_med,
                  True, pl)
