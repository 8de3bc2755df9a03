"""stats.py - the statistics behind compare.py, in plain Python (no scipy):
medians and their distribution-free confidence intervals, the Mann-Whitney
U test (exact for small samples without ties, normal approximation with tie
and continuity correction otherwise), Hodges-Lehmann ratios, block-paired
ratios, Holm's correction.  Pure functions, tested against values computed
independently (tests/test_stats.py)."""
import math

Z95 = 1.959963984540054


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def median_ci(xs, z=Z95):
    """95% CI of the median from order statistics (normal approximation to
    the binomial): ranks n/2 -+ z*sqrt(n)/2.  None when n < 6."""
    s = sorted(xs)
    n = len(s)
    if n < 6:
        return None
    half = z * math.sqrt(n) / 2
    lo = max(1, math.floor(n / 2 - half))
    hi = min(n, math.ceil(n / 2 + 1 + half))
    return s[lo - 1], s[hi - 1]


def _norm_sf(x):
    return 0.5 * math.erfc(x / math.sqrt(2))


def _exact_u_cdf(n1, n2):
    """Counts of rank arrangements giving each U, for the exact test."""
    # f(n1, n2, u) = f(n1-1, n2, u-n2) + f(n1, n2-1, u), memoised
    table = {}

    def f(a, b):
        key = (a, b)
        if key in table:
            return table[key]
        if a == 0 or b == 0:
            res = [1]
        else:
            x = f(a - 1, b)
            y = f(a, b - 1)
            size = a * b + 1
            res = [0] * size
            for u, c in enumerate(x):
                if u + b < size:
                    res[u + b] += c
            for u, c in enumerate(y):
                res[u] += c
        table[key] = res
        return res

    return f(n1, n2)


def mann_whitney(a, b):
    """Two-sided p-value of the Mann-Whitney U test of a against b, and U
    (the count of pairs with a > b, ties counted 1/2)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return float("nan"), float("nan")
    combined = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(combined)
    ties = []
    i = 0
    while i < len(combined):
        j = i
        while j + 1 < len(combined) and combined[j + 1][0] == combined[i][0]:
            j += 1
        r = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[k] = r
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    r1 = sum(r for r, (v, g) in zip(ranks, combined) if g == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    if not ties and n1 <= 25 and n2 <= 25:
        counts = _exact_u_cdf(n1, n2)
        total = sum(counts)
        u = min(u1, n1 * n2 - u1)
        p = 2 * sum(counts[: int(u) + 1]) / total
        return min(1.0, p), u1
    n = n1 + n2
    mu = n1 * n2 / 2
    tie_term = sum(t ** 3 - t for t in ties) / (n * (n - 1)) if n > 1 else 0
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sigma == 0:
        return 1.0, u1
    zv = (abs(u1 - mu) - 0.5) / sigma
    return min(1.0, 2 * _norm_sf(max(zv, 0.0))), u1


def hodges_lehmann_ratio(a, b, z=Z95):
    """b/a as exp of the Hodges-Lehmann shift of log values, with its 95% CI
    from the Mann-Whitney rank bounds; None where a value is not positive."""
    if not a or not b or min(a) <= 0 or min(b) <= 0:
        return None
    d = sorted(math.log(y) - math.log(x) for x in a for y in b)
    n1, n2 = len(a), len(b)
    m = len(d)
    est = math.exp(median(d))
    k = math.floor(n1 * n2 / 2 - z * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12))
    if k < 1:
        return est, None, None
    return est, math.exp(d[k - 1]), math.exp(d[m - k])


def paired_ratio(pairs, z=Z95):
    """Median of per-block ratios b/a with its order-statistic CI."""
    rs = [y / x for x, y in pairs if x > 0]
    if not rs:
        return None
    ci = median_ci(rs, z)
    return (median(rs),) + (ci if ci else (None, None))


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values, in the input order (NaN kept)."""
    idx = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    order = sorted(idx, key=lambda i: pvalues[i])
    m = len(order)
    adj = list(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        v = min(1.0, (m - rank) * pvalues[i])
        running = max(running, v)
        adj[i] = running
    return adj


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and not math.isnan(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
