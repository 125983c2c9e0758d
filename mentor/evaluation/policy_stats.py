"""The tests over clusters: the blocked run's primary analysis over policies (docs/evidence/round5-fresh-policies.md):
one mean paired difference per policy, a paired t-interval with n − 1 degrees of freedom, an exact sign-flip p-value,
and Holm's correction; the same sign-flip test and Holm over problem clusters for pooled `mentor eval` reports
(mentor.evaluation.pooled `--holm`).

Pure Python (no scipy in the package's dependencies): Student's t from the regularized incomplete beta function.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random

EXACT_SIGN_FLIP_MAX = 40  # policies up to which the sign-flip p enumerates every sign (2 halves of 2^20 sums)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), as in Numerical Recipes' betacf."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def t_sf2(t: float, df: int) -> float:
    """Two-sided p of Student's t: P(|T| >= |t|) with `df` degrees of freedom.

    >>> round(t_sf2(2.570582, 5), 4), t_sf2(0.0, 3)
    (0.05, 1.0)
    """
    return _betainc(df / 2, 0.5, df / (df + t * t))


def t_quantile(q: float, df: int) -> float:
    """The q-quantile (q in (0.5, 1)) of Student's t, by bisection on `t_sf2`.

    >>> round(t_quantile(0.975, 5), 4), round(t_quantile(0.975, 23), 4)
    (2.5706, 2.0687)
    """
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > 2 * (1 - q):
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_sf2(mid, df) > 2 * (1 - q) else (lo, mid)
    return (lo + hi) / 2


def t_test(diffs: list[float]) -> dict[str, object]:
    """The paired t-interval (95% and 90%) of the mean of `diffs` (one per policy), n − 1 degrees of freedom, and the
    two-sided p of mean = 0. Fewer than 2 differences have no interval: `t_ci` and `t_p` are None.

    >>> r = t_test([0.1, 0.2, 0.3])
    >>> [round(x, 4) for x in r["t_ci"]], round(r["t_p"], 4)
    ([-0.0484, 0.4484], 0.0742)
    """
    n = len(diffs)
    mean = sum(diffs) / n if n else float("nan")
    if n < 2:
        return {"t_ci": None, "t_ci90": None, "t_p": None}
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    if se == 0:  # every policy differs by the same amount
        return {"t_ci": [mean, mean], "t_ci90": [mean, mean], "t_p": 1.0 if mean == 0 else 0.0}
    half95, half90 = t_quantile(0.975, n - 1) * se, t_quantile(0.95, n - 1) * se
    return {"t_ci": [mean - half95, mean + half95], "t_ci90": [mean - half90, mean + half90],
            "t_p": t_sf2(mean / se, n - 1)}


def sign_flip_p(diffs: list[float], resamples: int = 100_000, seed: int = 0) -> float:
    """Two-sided sign-flip (permutation) p of mean = 0: the share of the 2^n sign patterns of `diffs` whose sum is at
    least as far from 0 as the observed one. Exact up to `EXACT_SIGN_FLIP_MAX` differences (the two halves' sums
    met in the middle), else estimated from `resamples` random patterns.

    >>> sign_flip_p([0.1, 0.2, 0.3, 0.1, 0.2, 0.3]) == 2 / 64
    True
    """
    if not diffs:
        raise ValueError("sign_flip_p: no differences")
    observed = abs(sum(diffs)) - 1e-12 * sum(abs(d) for d in diffs)  # ties with the observed sum count as extreme
    if observed <= 0:  # a sum of 0: every pattern is as far from 0
        return 1.0
    if len(diffs) > EXACT_SIGN_FLIP_MAX:
        rng = random.Random(seed)
        hits = sum(abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed for _ in range(resamples))
        return (hits + 1) / (resamples + 1)
    half = len(diffs) // 2
    left = [sum(s) for s in itertools.product(*[(d, -d) for d in diffs[:half]])]
    right = sorted(sum(s) for s in itertools.product(*[(d, -d) for d in diffs[half:]]))
    hits = sum(len(right) - bisect.bisect_left(right, observed - a) + bisect.bisect_right(right, -observed - a)
               for a in left)
    return hits / (len(left) * len(right))


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values: the i-th smallest of m times (m − i + 1), never below an earlier one,
    at most 1.

    >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'c': 0.06, 'b': 0.06}
    """
    adjusted, running = {}, 0.0
    for i, (name, p) in enumerate(sorted(p_values.items(), key=lambda kv: kv[1])):
        running = max(running, min(1.0, (len(p_values) - i) * p))
        adjusted[name] = running
    return adjusted
