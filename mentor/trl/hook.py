"""The generation hook: after TRL generates and scores a batch, collapsed groups get a hint and a re-attempt (mode
in_step), or a hint for their next sampling (mode next_attempt).

It wraps three methods of one trainer instance through mentor/trl/adapter.py (no TRL code is copied or changed):
- `_generate_and_score_completions(inputs)`: remembers the dataset rows of the generation batch;
- `_generate(prompts)`: generates, scores once, runs the mentor on collapsed groups, re-generates their hinted
  prompts through the same `_generate` (transformers, vLLM colocate or server alike), and splices the rows;
- `_calculate_rewards(...)`: returns the scores already computed, so no completion is scored twice.
The batch rules (collapse, splice) live in mentor/trl/batch.py, free of TRL; where a hint goes and what it may hold,
shared with `mentor eval`, in mentor/placement.py; which hint a group gets under `hint_choice: learning`, and the
`mentor/reliance` metric, in mentor/trl/choice.py.

Under many processes (DDP, DeepSpeed, FSDP) each rank holds a slice of the generation batch, and a group can span
ranks. TRL's rewards are gathered, so every rank finds the same collapsed groups; their rows are gathered, the mentor
runs once per group (the groups split across ranks), each rank re-generates an equal share of the hinted groups, and
each rank splices the rows it holds. Every rank makes the same collective calls (see mentor/trl/distributed.py).
"""

from __future__ import annotations

import logging
import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from mentor.config import MentorConfig
from mentor.leakage import check_leak
from mentor.placement import Placement, prompt_text
from mentor.reliance import HintedResponse
from mentor.runtime import MentorRuntime
from mentor.runtime.node_errors import NodeErrorLog
from mentor.runtime.state import LIBRARY_FIELD
from mentor.summary import summarise
from mentor.tasks.base import Task, completion_text
from mentor.trace_format import ALL_PASS_SOURCE, MEMORY_SOURCE, TraceRecord, trace_record
from mentor.trl.adapter import TrainerAdapter
from mentor.trl.batch import REDRAW_MARKER, BatchRules, Generation, Reattempt, problem_id
from mentor.trl.choice import Candidate, HintChoice
from mentor.trl.distributed import gather, rank_and_world, split_map
from mentor.trl.metrics import count_intervention, count_skipped, earlier_tier, step_metrics
from mentor.types import Attempt, Diagnosis, FailedGroup, Intervention

logger = logging.getLogger("mentor")
SLOW_MENTOR_S = 30.0  # a mentor phase this long gets a progress line on rank 0: a slow `llm` mentor is not a hang


def library_columns(row: dict, reference: dict, candidates: list[str]) -> dict[str, str]:
    """The text columns of a dataset `row` that hold hints, beyond the mentor's `reference`: each `hint*` column
    (static libraries: `hint`, `hint2`, `hint_partial`...) and each `hint_candidates` column. The trace record keeps
    them in its reference, so `mentor eval` can evaluate a library on the run (`columns: {hint: hint_partial}`);
    a value that is not text is no hint, and is left out."""
    return {column: value for column, value in row.items() if isinstance(value, str) and column not in reference
            and (column.startswith(LIBRARY_FIELD) or column in candidates)}


@dataclass
class StepWork:
    """What one step's intervention gathers as its rounds run: the batch it works on (`prompts` and `rows` by row
    number in the whole batch, this rank's `out`, the whole batch's `rewards`, spliced in place) and its tallies."""

    step: int
    offset: int  # the row number of this rank's first row
    prompts: dict[int, Any]
    rows: dict[int, dict]
    out: Generation
    rewards: torch.Tensor
    fallbacks_before: int  # this rank's structured-output fallbacks before the step
    stats: Counter = field(default_factory=Counter)
    records: list[TraceRecord] = field(default_factory=list)
    history: dict[int, list[dict]] = field(default_factory=dict)  # hints given each group in this step
    attempts: dict[int, list[tuple[str, float]]] = field(default_factory=dict)  # each group's latest attempts
    parts: dict[int, list[dict[str, float | None]]] = field(default_factory=dict)  # their scores per reward function
    spliced: dict[int, tuple[Reattempt, str]] = field(default_factory=dict)  # each group's last splice and hint
    mentor_s: float = 0.0
    regen_s: float = 0.0


class GenerationHook:
    """Wraps a trainer instance so collapsed groups are mentored inside the step.

    Args:
        trainer: a GRPOTrainer or RLOOTrainer (or subclass) instance.
        config: the MentorConfig (strategy, placement, threshold, rounds...).
        runtime: runs the mentor graph over failed groups.
        task: the task adapter that reads references and formats hinted prompts.
        callback: the MentorCallback that checkpoints the hint ledger and keeps counters and traces.
    """

    def __init__(self, trainer, config: MentorConfig, runtime: MentorRuntime, task: Task, callback):
        self.config, self.runtime, self.task, self.callback = config, runtime, task, callback
        self.ledger = callback.ledger  # the hint state, which the callback checkpoints
        self.adapter = adapter = TrainerAdapter(trainer)
        self.placement = Placement(config.hint_placement, task, adapter.render, adapter.encode, adapter.special_tokens)
        self.rules = BatchRules(config, self.placement, adapter.num_generations, adapter.reward_weights,
                                adapter.reward_names)
        self.choice = HintChoice(config, self.rules, adapter, task)
        self.rows: list[dict[str, Any]] | None = None
        self.node_errors = NodeErrorLog()  # each distinct node exception's traceback, once, on rank 0
        self.cached_rewards: torch.Tensor | None = None
        self.row_weights: dict[int, float] = {}  # `correct_off_policy`: this rank's row -> its advantage's weight
        adapter.install(self.generate_and_score, self.generate, self.calculate_rewards)

    # --- the three wrapped methods ------------------------------------------------------------------------
    def generate_and_score(self, inputs):
        self.rows, self.row_weights = inputs, {}
        try:
            output = self.adapter.generate_and_score_raw(inputs)
            for i, weight in self.row_weights.items():  # every token of the row's loss is linear in its advantage
                output["advantages"][i] = output["advantages"][i] * weight
            return output
        finally:
            self.rows, self.cached_rewards, self.row_weights = None, None, {}

    def calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        if self.cached_rewards is not None and len(self.cached_rewards) == len(prompts) * rank_and_world()[1]:
            rewards, self.cached_rewards = self.cached_rewards, None
            return rewards
        return self.adapter.score(inputs, prompts, completions, completion_ids_list)

    def generate(self, prompts):
        if self.rows is None or not self.adapter.training:
            return self.adapter.generate_raw(prompts)  # evaluation, or a call from outside a training step
        originals, hints = prompts, [""] * len(prompts)
        if self.config.mode == "next_attempt":
            hints = [self.ledger.pending.get(problem_id(row), "") for row in self.rows]
            prompts = self.placement.hinted_batch(prompts, hints)
        out = self.adapter.generate(prompts)
        out.completions = self.placement.whole_responses(originals, hints, out.completions)
        rows = [{**row, **{k: v[i] for k, v in out.extra_fields.items() if isinstance(v, list)},
                 "mentor_hint": hints[i]} for i, row in enumerate(self.rows)]
        rewards = self.adapter.score(rows, originals, out.completions, out.completion_ids)  # the whole batch's
        out.extra_fields = {**out.extra_fields, "mentor_hint": hints}
        self.intervene(originals, rows, out, rewards)
        self.cached_rewards = rewards
        self.adapter.log_column("mentor_hint", list(out.extra_fields["mentor_hint"]))  # the table's column
        return self.adapter.output(out)

    # --- the intervention -----------------------------------------------------------------------------------
    def intervene(self, prompts: list, rows: list[dict], out: Generation, rewards: torch.Tensor) -> None:
        """Mentors collapsed groups and splices hinted re-attempts into `out` and `rewards` in place.

        `prompts`, `rows` and `out` are this rank's rows of the batch; `rewards` is the whole batch's (TRL gathers
        it), so every rank finds the same collapsed groups, and gathers their rows from the ranks that hold them.
        """
        step, offset = self.adapter.global_step, rank_and_world()[0] * len(prompts)
        redrawn, redraw_s = self.redraw_all_pass(step, offset, prompts, rows, out, rewards) \
            if self.config.redraw_all_pass else ([], 0.0)
        targets = self.rules.collapsed(rewards)  # a re-drawn group that collapsed among them
        graduated = self.graduates(targets, offset, rows)  # before this step's hints join the history
        completions = out.completions
        if targets or self.ledger.pending:  # the same on every rank, so all ranks gather or none does
            prompts, rows, completions = self.gather_needed(targets, offset, prompts, rows, completions)
        work = StepWork(step, offset, prompts, rows, out, rewards, self.runtime.structured.fallbacks)
        work.records, work.regen_s = [record for record, _ in redrawn], redraw_s
        for _, outcome in redrawn:
            work.stats["all_pass_redrawn"] += 1
            work.stats["all_pass_zero_variance"] += outcome["zero_variance"]
            work.stats["all_pass_collapsed"] += outcome["collapsed"]
        work.history = {g: [] for g in targets}
        totals, G = self.rules.row_rewards(rewards), self.rules.num_generations
        work.attempts = {g: [(completion_text(completions[g * G + j]), totals[g * G + j]) for j in range(G)]
                         for g in targets}
        parts = self.rules.row_parts(rewards)
        work.parts = {g: parts[g * G:(g + 1) * G] for g in targets}
        for round_ in range(1, self.config.max_rounds + 1):
            targets = self.mentor_round(work, round_, targets)
            if not targets or self.config.mode == "next_attempt":
                break
        if self.config.correct_off_policy:
            self.weigh_off_policy(work)
        self.log_step(work, graduated)

    def redraw_all_pass(self, step: int, offset: int, prompts: list, rows: list[dict], out: Generation,
                        rewards: torch.Tensor) -> tuple[list[tuple[TraceRecord, dict]], float]:
        """Replaces each group whose every row succeeded with one total reward (`redraw_all_pass`), in place, by G
        fresh attempts at another training row (`fresh_row`); returns each one's trace record with its outcome, and
        the seconds the draws took. TRL's own prompt list (`prompts`) and rows (`self.rows`) become the fresh row's,
        so its completions table and the step's later rounds read the problem the rows now hold. Every rank finds
        the same groups (the rewards are gathered) and draws the same rows."""
        groups = self.rules.all_passed(rewards)
        if not groups:
            return [], 0.0
        G = self.rules.num_generations
        before = self.rows_of(groups, offset, prompts, rows, out.completions)
        fresh = {g: self.fresh_row(step, g) for g in groups}
        draws, seconds = self.reattempt({g * G: fresh[g]["prompt"] for g in groups},
                                        {g * G + j: {**fresh[g], "mentor_hint": ""} for g in groups for j in range(G)},
                                        [(g, "") for g in groups])
        totals_before = self.rules.row_rewards(rewards)
        redrawn = []
        for g, draw in zip(groups, draws):
            totals, parts = self.rules.row_rewards(draw.scores), self.rules.row_parts(draw.scores)
            outcome = {"problem_id": problem_id(fresh[g]), "prompt": prompt_text(fresh[g]["prompt"]),
                       "attempts": [scored(completion_text(c), r, q)
                                    for c, r, q in zip(draw.gen.completions, totals, parts)],
                       "zero_variance": bool(self.rules.zero_variance(draw.scores)),
                       "collapsed": bool(self.rules.collapsed(draw.scores))}
            first_prompt, first_row, _ = before[g * G]
            attempts = [scored(completion_text(before[g * G + j][2]), totals_before[g * G + j], {}) for j in range(G)]
            redrawn.append((self.all_pass_record(step, g, first_prompt, first_row, attempts, outcome), outcome))
            self.rules.replace_group(g, draw.gen, draw.scores, out, offset, rewards)
            for j in range(G):
                i = g * G + j - offset
                if 0 <= i < len(prompts):  # a row this rank holds
                    prompts[i], self.rows[i] = fresh[g]["prompt"], fresh[g]
                    rows[i] = {**fresh[g], **{k: v[i] for k, v in out.extra_fields.items() if isinstance(v, list)}}
        return redrawn, seconds

    def fresh_row(self, step: int, g: int) -> dict:
        """The training row that replaces all-pass group g at `step`: drawn with replacement from the whole training
        set by a seed of the run's seed, the step and the group, so a resumed run, and every rank, draws the same;
        the sampler and its epochs are untouched."""
        rng = random.Random(f"mentor/redraw_all_pass/{self.adapter.seed}/{step}/{g}")
        return self.adapter.train_row(rng.randrange(self.adapter.train_size))

    def all_pass_record(self, step: int, g: int, prompt: Any, row: dict, attempts: list[dict], replacement: dict
                        ) -> TraceRecord:
        """The trace record of all-pass group g's re-draw: the group as it was (its attempts all succeeded) and, in
        `replacement`, the row and attempts that took its place. No graph ran, and no hint was given."""
        reference = {name: row[self.config.columns.get(name, name)]
                     for name in self.task.reference_fields + self.task.optional_reference_fields
                     if row.get(self.config.columns.get(name, name)) is not None}
        group = FailedGroup(problem_id(row), self.task.name, prompt_text(prompt), reference,
                            [Attempt(a["completion"], a["reward"] or 0.0) for a in attempts])
        iv = Intervention(group.problem_id, group.task, hint="", backend={"hint_source": ALL_PASS_SOURCE})
        training = {"step": step, "group": g, "round": 0, "reattempt": [], "recovered": None,
                    "strategy": self.config.strategy, "placement": self.config.hint_placement,
                    "strip_hint": self.config.strip_hint, "train_prefix": self.config.train_prefix,
                    "replacement": replacement}
        return trace_record(group, iv, attempts, None, training)

    def rows_of(self, groups: list[int], offset: int, prompts: list, rows: list[dict], completions: list
                ) -> dict[int, tuple[Any, dict, Any]]:
        """Every rank's (prompt, row, completion) of the `groups`' rows, by row number in the whole batch, in one
        collective."""
        G = self.rules.num_generations
        wanted = {g * G + j for g in groups for j in range(G)}
        mine = {offset + i: entry for i, entry in enumerate(zip(prompts, rows, completions)) if offset + i in wanted}
        return {i: entry for part in gather(mine) for i, entry in part.items()}

    def weigh_off_policy(self, work: StepWork) -> None:
        """`correct_off_policy`: each spliced row trained after the unhinted prompt gets the truncated importance
        ratio pi(y|x) / pi(y|x,h) of its response as the weight of its advantage (`row_weights`, applied once TRL has
        computed the advantages), from the log-probabilities HiLL's reliance computes. Under vLLM with TRL's own
        correction on, the rows kept their hinted sampling log-probs (BatchRules.splice), and TRL weights them."""
        G, rows, responses = self.rules.num_generations, [], []
        for g, (reattempt, hint) in sorted(work.spliced.items()):
            totals = self.rules.success(reattempt.scores).tolist()
            plain = self.adapter.prompt_ids(self.placement.rendered(work.prompts[g * G]))  # the ids TRL gave it
            for slot, j in enumerate(self.rules.picks(totals)):
                if not self.rules.trained_unhinted(totals[j]):
                    continue
                hinted, generated = list(reattempt.gen.prompt_ids[j]), list(reattempt.gen.completion_ids[j])
                prefix = self.placement.prefix_ids(plain, hinted, hint) if self.config.train_prefix else []
                rows.append(g * G + slot)
                responses.append(HintedResponse(plain, hinted, prefix, generated))
        work.stats["off_policy_rows"] = len(rows)
        if not rows or self.adapter.corrects_sampling:
            return
        ratios, seconds = self.choice.log_ratios(work.step, responses)
        work.stats["off_policy_s"] = seconds
        if ratios is None:  # logged; the rows train unweighted, as without the option
            work.stats["off_policy_errors"] += 1
            return
        floor, cap = self.adapter.importance_bounds
        weights = [cap if r >= math.log(cap) else max(floor, math.exp(r)) for r in ratios]
        for row, weight in zip(rows, weights):
            if 0 <= row - work.offset < len(work.out.completions):
                self.row_weights[row - work.offset] = weight
        work.stats["off_policy_weight_sum"] = sum(weights)
        work.stats["off_policy_capped"] = sum(w >= cap for w in weights)

    def graduates(self, targets: list[int], offset: int, rows: list[dict]) -> set[str]:
        """The problems hinted at an earlier step of the run whose group this step earns reward without a hint (not
        collapsed, its rows unhinted): Scaf-GRPO's graduation. Each rank reads the groups whose first row it holds
        (`rows` are its rows, `offset` the first one's number); one gather joins them, in every step with a hint
        history, which every rank holds the same."""
        history = self.ledger.hint_history
        if not history:
            return set()
        G, collapsed = self.rules.num_generations, set(targets)
        mine = [pid for i, row in enumerate(rows) if (offset + i) % G == 0 and (offset + i) // G not in collapsed
                and not row["mentor_hint"] and (pid := problem_id(row)) in history]
        return {pid for part in gather(mine) for pid in part}

    def gather_needed(self, targets: list[int], offset: int, prompts: list, rows: list[dict], completions: list
                      ) -> tuple[dict[int, Any], dict[int, dict], dict[int, Any]]:
        """What the step needs of every rank's rows, in one collective: the prompts, rows and completions of the
        `targets` groups, each by its row number in the whole batch, on every rank; and it drops the pending hints
        the batch used (a pending hint is used once, by the batch that sampled its problem).

        `prompts`, `rows` and `completions` are this rank's rows; `offset` is the row number of its first.
        """
        G, pending = self.adapter.num_generations, self.ledger.pending
        wanted = {g * G + j for g in targets for j in range(G)}
        used = [pid for pid in map(problem_id, rows) if pid in pending]
        mine = {offset + i: entry for i, entry in enumerate(zip(prompts, rows, completions)) if offset + i in wanted}
        parts = gather((used, mine))
        for part_used, _ in parts:
            self.ledger.use_pending(part_used)
        needed = {i: entry for _, part in parts for i, entry in part.items()}
        return tuple({i: entry[column] for i, entry in needed.items()} for column in range(3))

    def mentor_round(self, work: StepWork, round_: int, targets: list[int]) -> list[int]:
        """One round over the `targets` groups: mentor them, re-attempt (in_step) the hinted ones and splice the
        re-attempts in; returns the groups that, as spliced, still collapsed (the next round escalates them)."""
        G, rows = self.rules.num_generations, work.rows
        groups, kept = [], []
        for g in targets:
            failed = self.failed_group(rows[g * G], work.attempts[g], work.history[g])
            if isinstance(failed, str):
                count_skipped(work.stats, failed)
                continue
            groups.append(failed)
            kept.append(g)
        remembered = self.remembered(kept, groups) if self.config.hint_memory and round_ == 1 else {}
        fresh = iter(self.mentored(work, [group for g, group in zip(kept, groups) if g not in remembered]))
        interventions = [self.from_memory(group, remembered[g]) if g in remembered else next(fresh)
                         for g, group in zip(kept, groups)]
        hinted = [(g, iv) for g, iv in zip(kept, interventions) if iv.hint]
        reattempts: dict[int, Reattempt] = {}
        tried: dict[int, list[Candidate]] = {}  # `hint_choice: learning`: each group's candidates
        if hinted and self.config.mode == "in_step" and self.config.hint_choice == "learning":
            library = {g: self.library_hints(iv) for g, iv in hinted} if self.config.hint_memory else {}
            reattempts, tried, seconds = self.choice.chosen(work.step, work.prompts, rows, hinted,
                                                            dict(zip(kept, groups)), work.stats, self.reattempt,
                                                            library)
            work.regen_s += seconds
        elif hinted and self.config.mode == "in_step":
            attempts, seconds = self.reattempt(work.prompts, rows, [(g, iv.hint) for g, iv in hinted])
            reattempts = {g: a for (g, _), a in zip(hinted, attempts)}
            work.regen_s += seconds
        still = []
        for g, group, iv in zip(kept, groups, interventions):
            stored = library_columns(rows[g * G], group.reference, self.config.hint_candidates)
            record = self.record(work.step, g, round_, replace(group, reference={**group.reference, **stored}),
                                 work.prompts[g * G], work.attempts[g], iv, reattempts.get(g), tried.get(g),
                                 work.parts.get(g))
            if g in remembered:
                record["memory"] = {"step": remembered[g]["step"], "problem_id": remembered[g]["problem_id"]}
            work.records.append(record)
            count_intervention(work.stats, iv, record["recovered"], earlier_tier(group))
            if self.config.hint_memory:
                self.learn(work, g in remembered, group, iv, record["recovered"])
            if not iv.hint:
                continue
            self.ledger.remember(group.problem_id, iv.tier, iv.hint, self.config.mode == "next_attempt")
            work.history[g].append({"tier": iv.tier, "hint": iv.hint})
            if self.config.mode == "in_step" and self.splice(work, g, reattempts[g], iv.hint):
                work.attempts[g] = [(a["completion"], a["reward"]) for a in record["reattempt"]]
                work.parts[g] = [a.get("rewards", {}) for a in record["reattempt"]]
                still.append(g)
        return still

    def remembered(self, kept: list[int], groups: list[FailedGroup]) -> dict[int, dict]:
        """The groups `hint_memory` serves this round, with their problem's remembered hint: those whose hint passes
        the leakage check against the group's reference again (a hint that now leaks is forgotten)."""
        served = {}
        for g, group in zip(kept, groups):
            entry = self.ledger.memory.get(group.problem_id)
            if entry is None:
                continue
            if check_leak(entry["hint"], group.reference, self.task, problem=group.prompt).leaked:
                self.ledger.forget(group.problem_id)
                continue
            served[g] = entry
        return served

    def from_memory(self, group: FailedGroup, entry: dict) -> Intervention:
        """The intervention `hint_memory` gives `group`: its problem's remembered hint, with no graph run."""
        return Intervention(group.problem_id, group.task, Diagnosis(error_class=entry["error_class"]),
                            hint=entry["hint"], tier=entry["tier"], backend={"hint_source": MEMORY_SOURCE})

    def library_hints(self, iv: Intervention) -> list[tuple[str, str]]:
        """Under `hint_choice: learning`, the rescuing hints `hint_memory` keeps for the group's error class, as
        (hint, source) candidates; the choice checks each against this group's reference."""
        entries = self.ledger.library.get(iv.diagnosis.error_class, [])
        return [(e["hint"], f"memory:{e['problem_id']}@{e['step']}") for e in entries]

    def learn(self, work: StepWork, from_memory: bool, group: FailedGroup, iv: Intervention, recovered: bool) -> None:
        """What `hint_memory` takes from one intervention: a remembered hint that failed is forgotten, and a graph
        hint (or a remembered one) that recovered is remembered for its problem and its error class."""
        work.stats["memory_hits"] += from_memory
        work.stats["memory_rescues"] += from_memory and recovered
        if not iv.hint:
            return
        if recovered and not from_memory:
            self.ledger.remember_rescue(group.problem_id, iv.hint, iv.tier, iv.diagnosis.error_class, work.step,
                                        self.config.hint_memory_size)
        elif from_memory and not recovered:
            self.ledger.forget(group.problem_id)

    def failed_group(self, row: dict, attempts: list[tuple[str, float]], history: list[dict]) -> FailedGroup | str:
        """The FailedGroup of a collapsed group, or the reason it cannot be mentored."""
        reference = {}
        for name in self.task.reference_fields + self.task.optional_reference_fields + (LIBRARY_FIELD,):
            value = row.get(self.config.columns.get(name, name))
            if value is not None:
                reference[name] = value
        reference = self.task.completed_reference(reference)  # e.g. math's answer from a worked solution
        if self.task.missing_reference(reference):
            return "missing_reference"
        pid = problem_id(row)
        return FailedGroup(pid, self.task.name, prompt_text(row["prompt"]), reference,
                           [Attempt(c, 0.0 if r is None else r) for c, r in attempts],
                           previous_hints=self.ledger.hint_history.get(pid, []) + history)

    def mentored(self, work: StepWork, groups: list[FailedGroup]) -> list[Intervention]:
        """The mentor's interventions on `groups` (split across ranks), each hint made safe for the template."""
        if self.config.hint_source == "none":  # the retry control: no graph runs, each group is re-drawn unhinted
            return [Intervention(g.problem_id, g.task, hint=REDRAW_MARKER, backend={"hint_source": "none"})
                    for g in groups]
        interventions, seconds = split_map(self.runtime.run, groups) if groups else ([], 0.0)
        work.mentor_s += seconds
        if rank_and_world()[0] == 0:  # every rank holds every group's result: one rank tells the user
            self.node_errors.report(interventions)
            if seconds >= SLOW_MENTOR_S:
                counts = summarise(interventions)
                logger.warning("mentor: step %d: %d group(s) took %.0f s in the mentor graph (%d hinted, %d llm "
                               "fallbacks); the step goes on", work.step, len(groups), seconds, counts.hinted,
                               counts.llm_fallbacks)
        for iv in interventions:  # model-written text: it may not forge the template's turns
            if iv.hint:
                iv.hint, broken = self.placement.safe_hint(iv.hint)
                work.stats["special_tokens_neutralised"] += broken > 0
        return interventions

    def reattempt(self, prompts: dict[int, Any], rows: dict[int, dict], hinted: list[tuple[int, str]]
                  ) -> tuple[list[Reattempt], float]:
        """G fresh completions per (group, hint) in `hinted` through the trainer's own generation path, scored once,
        in `hinted`'s order, each with the text of the prompt it was generated from; and the seconds it took (the
        slowest rank's). `prompts` and `rows` hold at least the hinted groups' rows, by row number in the whole
        batch.

        Whole groups of identical prompts are asked for, as TRL's vLLM server mode needs. Each rank re-generates an
        equal, contiguous share of the hinted groups (padded with copies of the first, dropped after), so every rank
        asks for as many rows; then every rank receives every re-attempt.
        """
        G = self.rules.num_generations
        batch_scores: list[torch.Tensor] = []  # scoring gathers the rewards of every rank's share, in hinted order

        def regenerate(mine: list[tuple[int, str]]) -> list[tuple[Generation, str]]:
            # One hinted prompt per group, G times (TRL's `_generate` copies its prompts before it changes them).
            once = [self.placement.hinted_prompt(prompts[g * G], self.rules.shown(hint)) for g, hint in mine]
            gen = self.adapter.generate([p for p in once for _ in range(G)])
            hint_rows = [{**rows[g * G + j], "mentor_hint": self.rules.shown(hint)}
                         for g, hint in mine for j in range(G)]
            completions = gen.completions = self.placement.whole_responses(
                [prompts[g * G] for g, _ in mine for _ in range(G)], [r["mentor_hint"] for r in hint_rows],
                gen.completions)
            with self.adapter.extra_logs_kept():
                batch_scores.append(self.adapter.score(hint_rows, [prompts[g * G] for g, _ in mine for _ in range(G)],
                                                       completions, gen.completion_ids))
            return [(Generation(*(v[k * G:(k + 1) * G] if isinstance(v, list) else v for v in gen.astuple())),
                     self.placement.rendered(prompt)) for k, prompt in enumerate(once)]

        gens, seconds = split_map(regenerate, hinted, pad=True)
        scores = batch_scores[0]
        return [Reattempt(gen, scores[k * G:(k + 1) * G], text) for k, (gen, text) in enumerate(gens)], seconds

    def record(self, step: int, g: int, round_: int, group: FailedGroup, prompt: Any,
               attempts: list[tuple[str, float]], iv: Intervention, reattempt: Reattempt | None,
               candidates: list[Candidate] | None = None, parts: list[dict] | None = None) -> TraceRecord:
        """The trace record of one intervention on `group`, whose rows' prompt is `prompt`; `candidates`: the hints
        tried under `hint_choice: learning`; `parts`: each attempt's score per reward function (`row_parts`). Its
        hinted prompt is the re-attempt's, as handed to generation; under `next_attempt` (no re-attempt yet) the
        prompt the problem's next sampling will get."""
        hinted = None
        if reattempt is not None:
            hinted = reattempt.prompt
        elif iv.hint:
            hinted = self.placement.rendered(self.placement.hinted_prompt(prompt, self.rules.shown(iv.hint)))
        training = {"step": step, "group": g, "round": round_, "reattempt": [], "recovered": False,
                    "strategy": self.config.strategy, "placement": self.config.hint_placement,
                    "strip_hint": self.config.strip_hint, "train_prefix": self.config.train_prefix}
        if reattempt is not None:
            totals = self.rules.row_rewards(reattempt.scores)
            training["reattempt"] = [scored(completion_text(c), r, p) for c, r, p in
                                     zip(reattempt.gen.completions, totals, self.rules.row_parts(reattempt.scores))]
            training["recovered"] = bool(self.rules.succeeded(reattempt.scores).any())
        if candidates:
            training["candidates"] = [c.to_dict() for c in candidates]
        parts = parts or [{}] * len(attempts)
        return trace_record(group, iv, [scored(c, r, p) for (c, r), p in zip(attempts, parts)], hinted, training)

    def splice(self, work: StepWork, g: int, reattempt: Reattempt, hint: str) -> bool:
        """Splices group g's hinted re-attempt into the batch as the strategy says; whether the group as spliced
        still scores all zero (under `mixed` the spliced re-attempts may all have failed even if another one
        succeeded), and so escalates."""
        self.rules.splice(g, reattempt.gen, reattempt.scores, hint, work.out, work.offset, work.rewards)
        work.spliced[g] = (reattempt, hint)
        G = self.rules.num_generations
        return bool(self.rules.collapsed(work.rewards[g * G:(g + 1) * G]))

    def log_step(self, work: StepWork, graduated: set[str]) -> None:
        """The step's mentor/* metrics and trace records, to the callback."""
        G, rewards = self.rules.num_generations, work.rewards
        metrics = {
            **step_metrics(work.stats, len(work.history), len(self.rules.collapsed(rewards)), len(rewards) // G,
                           work.mentor_s, work.regen_s, redraws=self.config.hint_source == "none"),
            "mentor/graduated": len(graduated), "mentor/graduated_total": self.ledger.graduate(graduated, work.step),
            **self.choice.reliance(work.step, work.prompts, work.spliced),
            "mentor/structured_output_fallbacks": sum(gather(self.runtime.structured.fallbacks
                                                             - work.fallbacks_before)),
        }
        if self.config.correct_off_policy:
            rows = work.stats["off_policy_rows"]
            metrics.update({"mentor/off_policy_rows": rows, "mentor/off_policy_capped": work.stats["off_policy_capped"],
                            "mentor/off_policy_s": work.stats["off_policy_s"],
                            "mentor/off_policy_errors": work.stats["off_policy_errors"]})
            if rows and not self.adapter.corrects_sampling and not work.stats["off_policy_errors"]:
                metrics["mentor/off_policy_weight"] = work.stats["off_policy_weight_sum"] / rows
        if self.config.hint_memory:
            metrics.update({"mentor/memory_hits": work.stats["memory_hits"],
                            "mentor/memory_rescues": work.stats["memory_rescues"],
                            "mentor/graph_runs_saved": work.stats["memory_hits"]})
        if self.config.redraw_all_pass:
            metrics.update({f"mentor/{key}": work.stats[key] for key in
                            ("all_pass_redrawn", "all_pass_zero_variance", "all_pass_collapsed")})
        if self.config.hint_choice == "learning":  # mentor/trl/choice.py's figures
            metrics.update({f"mentor/{key}": work.stats[key] for key in
                            ("candidate_attempts", "chosen_not_graph", "candidates_leaking", "reliance_errors")})
        self.callback.log_step(self.adapter, work.step, metrics, work.records)


def scored(completion: str, reward: float | None, parts: dict[str, float | None]) -> dict[str, Any]:
    """An attempt as a trace record holds it: its completion, its total reward and, with several reward functions,
    each one's part (`rewards`)."""
    return {"completion": completion, "reward": reward, **({"rewards": parts} if parts else {})}
