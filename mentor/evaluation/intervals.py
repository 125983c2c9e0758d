"""The intervals and the decision rule of the pre-registered comparisons.

- `mentor eval`'s rescue figures count groups: Wilson's score interval for a row's rescue rate, and Newcombe's (1998,
  method 10) for its difference from `none` on the same groups. Both stay inside their range and keep a width at 0/n
  and n/n, where the textbook Wald interval shrinks to a point.
- A mean paired difference over clusters (the lab's policies, the pooled eval's problems): a cluster bootstrap
  (`paired_bootstrap`), decided by round 4's rule (`decide`, docs/evidence/round4-retry-control.md) with an
  equivalence margin of `MARGIN`.
"""

from __future__ import annotations

import math
import random
from typing import Any

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
MARGIN = 0.03  # the equivalence margin of the decision rule


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a rate of `successes` out of `n`; (0, 1) for n = 0.

    >>> [round(x, 3) for x in wilson(0, 6)], [round(x, 3) for x in wilson(6, 6)]
    ([0.0, 0.39], [0.61, 1.0])
    """
    if n == 0:
        return 0.0, 1.0
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0/n and n/n one end is the rate itself; computed, it misses by a rounding error.
    return (0.0 if successes == 0 else centre - half), (1.0 if successes == n else centre + half)


def paired_difference(row: list[bool], base: list[bool]) -> dict:
    """The difference of `row`'s rate from `base`'s over the same groups (paired: group i in both), with Newcombe's
    95% hybrid score interval (method 10): each side from the two rates' Wilson intervals, joined by the pairs'
    correlation. `gained`: groups only `row` rescued; `lost`: groups only `base` did.

    Newcombe's example (a), 36 groups both rescue, 12 only the row, 2 only the base, none neither: 0.2 (0.0569 to
    0.3404).

    >>> d = paired_difference([True] * 48 + [False] * 2, [True] * 36 + [False] * 12 + [True] * 2)
    >>> round(d["difference"], 4), [round(x, 4) for x in d["ci"]], d["gained"], d["lost"]
    (0.2, [0.0569, 0.3404], 12, 2)
    """
    n = len(row)
    both = sum(r and b for r, b in zip(row, base))
    gained = sum(r and not b for r, b in zip(row, base))
    lost = sum(b and not r for r, b in zip(row, base))
    neither = n - both - gained - lost
    if n == 0:
        return {"difference": 0.0, "ci": [-1.0, 1.0], "gained": 0, "lost": 0}
    p1, p2 = (both + gained) / n, (both + lost) / n
    (l1, u1), (l2, u2) = wilson(both + gained, n), wilson(both + lost, n)
    margins = (both + gained) * (lost + neither) * (both + lost) * (gained + neither)
    phi = (both * neither - gained * lost) / math.sqrt(margins) if margins else 0.0
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    d = p1 - p2
    return {"difference": d, "ci": [max(-1.0, d - below), min(1.0, d + above)], "gained": gained, "lost": lost}


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def paired_bootstrap(diffs: dict[Any, list[float]], resamples: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Cluster bootstrap of a mean paired difference: `diffs` maps each cluster (a policy) to its blocks' differences.
    Each resample draws as many clusters as there are, with replacement, and takes the mean over all their blocks.
    Returns the observed mean, percentile 95% and 90% intervals, the blocks `n` and the clusters.

    >>> r = paired_bootstrap({0: [0.1, 0.1], 1: [0.1]})
    >>> round(r["mean"], 6), [round(x, 6) for x in r["ci"]], r["n"], r["clusters"]
    (0.1, [0.1, 0.1], 3, 2)
    >>> r = paired_bootstrap({0: [0.0], 1: [1.0]}, resamples=2000)  # a resample is one policy twice, or both
    >>> r["mean"], r["ci"], r["ci90"]
    (0.5, [0.0, 1.0], [0.0, 1.0])
    """
    clusters = [list(v) for v in diffs.values() if v]
    if not clusters:
        raise ValueError("paired_bootstrap: no differences")
    n = sum(len(c) for c in clusters)
    mean = sum(sum(c) for c in clusters) / n
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        drawn = [clusters[rng.randrange(len(clusters))] for _ in clusters]
        means.append(sum(sum(c) for c in drawn) / sum(len(c) for c in drawn))
    means.sort()
    return {"mean": mean, "ci": [_quantile(means, 0.025), _quantile(means, 0.975)],
            "ci90": [_quantile(means, 0.05), _quantile(means, 0.95)], "n": n, "clusters": len(clusters)}


def decide(stats: dict[str, Any], margin: float = MARGIN) -> dict[str, Any]:
    """The pre-registered decision on one comparison: `win` (95% CI above 0), `loss` (below 0), `matches` (90% CI
    inside ±margin), else `unresolved` with the blocks needed for a 95% CI of ±margin, n × (half-width / margin)².

    >>> decide({"ci": [0.01, 0.05], "ci90": [0.02, 0.04], "n": 10})["decision"]
    'win'
    >>> decide({"ci": [-0.02, 0.02], "ci90": [-0.015, 0.015], "n": 10})["decision"]
    'matches'
    >>> decide({"ci": [-0.06, 0.06], "ci90": [-0.05, 0.05], "n": 10})
    {'decision': 'unresolved', 'n_needed': 40}
    """
    lo, hi = stats["ci"]
    if lo > 0:
        return {"decision": "win"}
    if hi < 0:
        return {"decision": "loss"}
    return undecided(stats, margin)


def undecided(stats: dict[str, Any], margin: float = MARGIN) -> dict[str, Any]:
    """Where no win or loss is declared: `matches` (90% CI inside ±margin), else `unresolved` with the n needed for a
    95% CI of ±margin, n × (half-width / margin)²."""
    if -margin <= stats["ci90"][0] and stats["ci90"][1] <= margin:
        return {"decision": "matches"}
    half = (stats["ci"][1] - stats["ci"][0]) / 2
    return {"decision": "unresolved", "n_needed": math.ceil(stats["n"] * (half / margin) ** 2)}
