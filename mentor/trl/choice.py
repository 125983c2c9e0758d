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

`HintChoice` also computes the training metric `mentor/reliance` over the rows a step trains on, with the same
reliance code. The hook (mentor/trl/hook.py) asks it; it asks the hook's re-attempt for the candidates' attempts.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from mentor.config import MentorConfig
from mentor.leakage import check_leak
from mentor.leakage.fold import visible_text
from mentor.reliance import HintedResponse, log_ratios, mean, reliance_terms
from mentor.tasks.base import Task
from mentor.trl.batch import BatchRules, Generation, Reattempt
from mentor.trl.distributed import split_map
from mentor.types import FailedGroup, Intervention

logger = logging.getLogger("mentor")
# (prompts, rows, [(group, hint)]) -> each pair's re-attempt, in order, and the seconds it took: the hook's
ReattemptFn = Callable[[dict[int, Any], dict[int, dict], list[tuple[int, str]]], tuple[list[Reattempt], float]]


@dataclass
class Candidate:
    """One hint a group may get, where it came from (`graph`, `graph#2`... for further draws, `memory` where
    `hint_memory` gave the intervention's hint, or its column), and, once tried, its figures and whether it was given."""

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


class HintChoice:
    """`hint_choice: learning` and the `mentor/reliance` metric, for one trainer.

    Args:
        config: the MentorConfig (`graph_draws`, `hint_candidates`, `reliance_penalty`, `reliance_every`...).
        rules: the batch rules (which rows a strategy splices, what counts as success); their placement gives the
            prefix ids that reliance scores.
        adapter: the trainer's adapter (the policy, its batch size, the ids TRL gives a prompt).
        task: the task adapter, for the leakage check of candidate columns.
    """

    def __init__(self, config: MentorConfig, rules: BatchRules, adapter, task: Task):
        self.config, self.rules, self.placement, self.adapter, self.task = config, rules, rules.placement, adapter, task

    def chosen(self, step: int, prompts: dict[int, Any], rows: dict[int, dict], hinted: list[tuple[int, Intervention]],
               groups: dict[int, FailedGroup], stats: Counter, reattempt: ReattemptFn,
               library: dict[int, list[tuple[str, str]]] | None = None
               ) -> tuple[dict[int, Reattempt], dict[int, list[Candidate]], float]:
        """Every hinted group's candidates tried, G attempts each (through `reattempt`); each intervention's hint
        becomes its best candidate, whose attempts are the group's re-attempt. `library`: by group, further
        (hint, source) candidates, `hint_memory`'s rescuing hints of the group's error class. Returns the re-attempts
        and the candidates tried, by group, and the seconds taken; the extra attempts go to `stats`."""
        G, library = self.rules.num_generations, library or {}
        options = {g: self.candidates(rows[g * G], iv.hint, groups[g], stats, library.get(g, []),
                                      iv.backend.get("hint_source") or "graph") for g, iv in hinted}
        tries = [(g, c) for g, _ in hinted for c in options[g]]
        attempts, seconds = reattempt(prompts, rows, [(g, c.hint) for g, c in tries])
        totals = [self.rules.success(a.scores).tolist() for a in attempts]
        picks = [self.rules.picks(t) for t in totals]  # the rows the strategy would splice
        correct = [self.correct_responses(prompts[g * G], a.gen, row_totals, c.hint, picked)
                   for (g, c), a, row_totals, picked in zip(tries, attempts, totals, picks)]
        flat = [r for responses in correct for r in responses]
        terms, reliance_s = self.reliance_terms(step, flat) if flat else ([], 0.0)
        stats["reliance_errors"] += terms is None
        at = 0
        threshold = self.config.collapse_threshold
        for (_, c), responses, picked, row_totals in zip(tries, correct, picks, totals):
            c.p = sum(row_totals[j] > threshold for j in picked) / G  # the group as spliced: its other rows failed
            own = terms[at:at + len(responses)] if terms else []
            at += len(responses)
            c.reliance = mean(own)
            c.score = score(c.p, c.reliance, self.config.reliance_penalty)
        reattempts, k = {}, 0
        for g, iv in hinted:
            tried = options[g]
            pick = best(tried)
            tried[pick].chosen = True
            iv.hint = tried[pick].hint
            reattempts[g] = attempts[k + pick]
            stats["candidate_attempts"] += (len(tried) - 1) * G
            stats["chosen_not_graph"] += not tried[pick].from_graph
            k += len(tried)
        return reattempts, options, seconds + reliance_s

    def candidates(self, row: dict, hint: str, group: FailedGroup, stats: Counter,
                   library: list[tuple[str, str]] = (), origin: str = "graph") -> list[Candidate]:
        """The intervention's `hint` (`graph_draws` times), labelled by its `origin` (`graph`, or `memory` where
        `hint_memory` gave it), then the group's `hint_candidates` columns (read from its first `row`) and the
        `library`'s (hint, source) pairs that are there, pass the leakage check against this group's reference and
        differ from the intervention's and each other, each as the policy would see it."""
        options = [Candidate(hint, origin if k == 0 else f"{origin}#{k + 1}", from_graph=True)
                   for k in range(self.config.graph_draws)]
        others = [(row.get(column), column) for column in self.config.hint_candidates] + list(library)
        for text, column in others:
            if not isinstance(text, str) or not text.strip():
                continue
            if check_leak(text, group.reference, self.task, problem=group.prompt).leaked:
                stats["candidates_leaking"] += 1
                continue
            text, broken = self.placement.safe_hint(visible_text(text))
            stats["special_tokens_neutralised"] += broken > 0
            if all(text != c.hint for c in options):  # a column repeating the graph's hint is no other choice
                options.append(Candidate(text, column))
        return options

    def reliance(self, step: int, prompts: dict[int, Any], spliced: dict[int, tuple[Reattempt, str]]
                 ) -> dict[str, float]:
        """`mentor/reliance` (HiLL's, mentor/reliance.py) over the hinted rows the step trains on whose re-attempt
        earned reward, and `mentor/reliance_s`, its seconds, on steps that are a multiple of `reliance_every`; {}
        on other steps or without such a row. `spliced` holds each spliced group's re-attempt and hint."""
        every, G = self.config.reliance_every, self.rules.num_generations
        if not every or step % every or not spliced:
            return {}
        responses = []
        for g, (reattempt, hint) in spliced.items():
            totals = self.rules.success(reattempt.scores).tolist()
            responses += self.correct_responses(prompts[g * G], reattempt.gen, totals, hint, self.rules.picks(totals))
        if not responses:
            return {}
        terms, seconds = self.reliance_terms(step, responses)
        if terms is None:
            return {"mentor/reliance_errors": 1}
        return {"mentor/reliance": mean(terms), "mentor/reliance_s": seconds}

    def correct_responses(self, prompt: Any, gen: Generation, totals: list[float], hint: str, rows: list[int]
                          ) -> list[HintedResponse]:
        """The re-attempts among `rows` of a group (whose prompt is `prompt`, its hint `hint`, its re-attempts'
        rewards `totals`) that earned reward, as the ids HiLL's reliance scores."""
        plain = self.adapter.prompt_ids(self.placement.rendered(prompt))  # the ids TRL gave the prompt
        responses = []
        for j in rows:
            hinted, generated = list(gen.prompt_ids[j]), list(gen.completion_ids[j])
            prefix = self.placement.prefix_ids(plain, hinted, hint)
            if totals[j] > self.config.collapse_threshold and (prefix or generated):
                responses.append(HintedResponse(plain, hinted, prefix, generated))
        return responses

    def reliance_terms(self, step: int, responses: list[HintedResponse]) -> tuple[list[float] | None, float]:
        """HiLL's reliance term of each response (mentor/reliance.py) and the seconds it took; None (logged) where
        the policy could not score them (`scored`)."""
        return self.scored(step, responses, reliance_terms, "hint reliance")

    def log_ratios(self, step: int, responses: list[HintedResponse]) -> tuple[list[float] | None, float]:
        """Each response's log importance ratio log pi(y|x) - log pi(y|x,h) (`correct_off_policy`), as `scored`."""
        return self.scored(step, responses, log_ratios, "the off-policy weights")

    def scored(self, step: int, responses: list[HintedResponse], fn: Callable, what: str
               ) -> tuple[list[float] | None, float]:
        """`fn(model, pad_id, share, batch)` over the responses split across ranks in equal shares (every rank holds
        every re-attempt, so all make as many forward passes), and the seconds it took; None (logged as `what`)
        where the policy could not score them. The policy scores them in eval mode, without gradients."""
        batch, model = self.adapter.per_device_batch_size, self.adapter.model
        pad_id = self.adapter.tokenizer.pad_token_id

        def values_of(share: list[HintedResponse]) -> list[float | None]:
            try:
                return fn(model, pad_id, share, batch)
            except Exception as e:  # it may not stop training; None keeps the ranks' gathers aligned
                logger.warning("%s not computed at step %d (%s: %s)", what, step, type(e).__name__, e)
                return [None] * len(share)

        values, seconds = split_map(values_of, responses, pad=True)
        return (None if None in values else values), seconds
