"""`hint_choice: learning`: each hinted group gets the candidate hint the policy is predicted to learn most from.

The candidates are the graph's hint and the group's `hint_candidates` columns (each checked for leaks and made safe
for the template as the graph's is; duplicates dropped). The policy tries every candidate with G attempts, through
the re-attempt's own generation path. A candidate's score is HiLL's transfer-weighted figure,

    p(1 - p) * exp(reliance_penalty * min(0, reliance)),

p the share of the group's rows, spliced as the strategy would splice this candidate's attempts, that earn reward
(p(1 - p) is the variance of the group's success: a group all right or all wrong carries no GRPO gradient), and
reliance HiLL's over the candidate's correct attempts (mentor/reliance.py: below 0 where the hint makes them likelier,
so the weight is below 1 for a hint they lean on, and 1 without a correct attempt). The best candidate's attempts are
the group's re-attempt; a tie (every candidate without gradient, say) goes to the earlier one, the graph's first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Candidate:
    """One hint a group may get, where it came from (`graph`, `graph#2`... for further draws, or its column), and,
    once tried, its figures and whether it was given."""

    hint: str
    source: str
    from_graph: bool = False
    p: float | None = None
    reliance: float | None = None
    score: float | None = None
    chosen: bool = False

    def to_dict(self) -> dict:
        return {"hint": self.hint, "source": self.source, "p": self.p, "reliance": self.reliance, "score": self.score,
                "chosen": self.chosen}


def score(p: float, reliance: float | None, penalty: float) -> float:
    """The predicted learning of a candidate whose spliced group succeeds with share `p`, with HiLL's `reliance`
    (None without a correct attempt) weighted by `penalty`.

    >>> score(0.5, None, 1.0)
    0.25
    >>> round(score(0.5, -1.0, 1.0), 4)  # the correct attempts are e^1 likelier per token with the hint
    0.092
    >>> score(1.0, -0.2, 1.0) < score(0.25, -0.2, 1.0)  # every row right: no gradient left to gain
    True
    """
    return p * (1 - p) * math.exp(penalty * min(0.0, reliance or 0.0))


def best(candidates: list[Candidate]) -> int:
    """The index of the highest-scoring candidate; the earliest among equals.

    >>> best([Candidate("a", "graph", score=0.1), Candidate("b", "x", score=0.2), Candidate("c", "y", score=0.2)])
    1
    """
    return max(range(len(candidates)), key=lambda i: (candidates[i].score, -i))
