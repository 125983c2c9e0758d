"""The 95% intervals of `mentor eval`'s rescue figures, which count groups: Wilson's score interval for a row's
rescue rate, and Newcombe's (1998, method 10) for its difference from `none` on the same groups. Both stay inside
their range and keep a width at 0/n and n/n, where the textbook Wald interval shrinks to a point."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


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
