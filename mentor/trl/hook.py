"""The generation hook: after TRL generates and scores a batch, collapsed groups get a hint and a re-attempt (mode
in_step), or a hint for their next sampling (mode next_attempt).

It wraps three methods of one trainer instance through mentor/trl/adapter.py (no TRL code is copied or changed):
- `_generate_and_score_completions(inputs)`: remembers the dataset rows of the generation batch;
- `_generate(prompts)`: generates, scores once, runs the mentor on collapsed groups, re-generates their hinted
  prompts through the same `_generate` (transformers, vLLM colocate or server alike), and splices the rows;
- `_calculate_rewards(...)`: returns the scores already computed, so no completion is scored twice.
The batch rules (collapse, placement, splice) live in mentor/trl/batch.py, free of TRL; what a hint may hold and
where its ids start, shared with `mentor eval`, in mentor/placement.py.

Under many processes (DDP, DeepSpeed, FSDP) each rank holds a slice of the generation batch, and a group can span
ranks. TRL's rewards are gathered, so every rank finds the same collapsed groups; their rows are gathered, the mentor
runs once per group (the groups split across ranks), each rank re-generates an equal share of the hinted groups, and
each rank splices the rows it holds. Every rank makes the same collective calls (see mentor/trl/distributed.py).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from mentor.config import MentorConfig
from mentor.leakage import check_leak
from mentor.leakage.fold import visible_text
from mentor.placement import prompt_text
from mentor.reliance import HintedResponse, mean, reliance_terms
from mentor.runtime import MentorRuntime
from mentor.runtime.node_errors import NodeErrorLog
from mentor.runtime.state import LIBRARY_FIELD
from mentor.summary import summarise
from mentor.tasks.base import Task, completion_text
from mentor.trace_format import TraceRecord, trace_record
from mentor.trl.adapter import TrainerAdapter
from mentor.trl.batch import REDRAW_MARKER, BatchRules, Generation, problem_id
from mentor.trl.choice import Candidate, best, score
from mentor.trl.distributed import gather, rank_and_world, split_map
from mentor.trl.metrics import count_intervention, count_skipped, step_metrics
from mentor.types import Attempt, FailedGroup, Intervention

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
    spliced: dict[int, tuple[Generation, torch.Tensor, str]] = field(default_factory=dict)  # last splice: trains
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
        self.rules = BatchRules(config, task, adapter.num_generations, adapter.reward_weights, adapter.render,
                                adapter.encode, adapter.special_tokens, adapter.reward_names)
        self.rows: list[dict[str, Any]] | None = None
        self.node_errors = NodeErrorLog()  # each distinct node exception's traceback, once, on rank 0
        self.cached_rewards: torch.Tensor | None = None
        adapter.install(self.generate_and_score, self.generate, self.calculate_rewards)

    # --- the three wrapped methods ------------------------------------------------------------------------
    def generate_and_score(self, inputs):
        self.rows = inputs
        try:
            return self.adapter.generate_and_score_raw(inputs)
        finally:
            self.rows, self.cached_rewards = None, None

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
            if any(hints) and self.config.hint_placement == "prefix":
                prompts = [self.rules.rendered(p) for p in prompts]  # one batch, one prompt type: TRL reads the first
            prompts = [self.rules.hinted_prompt(p, h) if h else p for p, h in zip(prompts, hints)]
        out = self.adapter.generate(prompts)
        out.completions = self.rules.whole_responses(originals, hints, out.completions)
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
        targets = self.rules.collapsed(rewards)
        graduated = self.graduates(targets, offset, rows)  # before this step's hints join the history
        completions = out.completions
        if targets or self.ledger.pending:  # the same on every rank, so all ranks gather or none does
            prompts, rows, completions = self.gather_needed(targets, offset, prompts, rows, completions)
        work = StepWork(step, offset, prompts, rows, out, rewards, self.runtime.structured.fallbacks)
        work.history = {g: [] for g in targets}
        totals, G = self.rules.row_rewards(rewards), self.rules.num_generations
        work.attempts = {g: [(completion_text(completions[g * G + j]), totals[g * G + j]) for j in range(G)]
                         for g in targets}
        for round_ in range(1, self.config.max_rounds + 1):
            targets = self.mentor_round(work, round_, targets)
            if not targets or self.config.mode == "next_attempt":
                break
        self.log_step(work, graduated)

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
        interventions = self.mentored(work, groups)
        hinted = [(g, iv) for g, iv in zip(kept, interventions) if iv.hint]
        reattempts: dict[int, tuple[Generation, torch.Tensor]] = {}
        tried: dict[int, list[Candidate]] = {}  # `hint_choice: learning`: each group's candidates
        if hinted and self.config.mode == "in_step" and self.config.hint_choice == "learning":
            reattempts, tried = self.chosen(work, hinted, dict(zip(kept, groups)))
        elif hinted and self.config.mode == "in_step":
            gens, seconds = self.reattempt(work.prompts, rows, [(g, iv.hint) for g, iv in hinted])
            reattempts = {g: gen for (g, _), gen in zip(hinted, gens)}
            work.regen_s += seconds
        still = []
        for g, group, iv in zip(kept, groups, interventions):
            stored = library_columns(rows[g * G], group.reference, self.config.hint_candidates)
            record = self.record(work.step, g, round_, replace(group, reference={**group.reference, **stored}),
                                 work.prompts[g * G], work.attempts[g], iv, reattempts.get(g), tried.get(g))
            work.records.append(record)
            count_intervention(work.stats, iv, record["recovered"])
            if not iv.hint:
                continue
            self.ledger.remember(group.problem_id, iv.tier, iv.hint, self.config.mode == "next_attempt")
            work.history[g].append({"tier": iv.tier, "hint": iv.hint})
            if self.config.mode == "in_step" and self.splice(work, g, reattempts[g], iv.hint):
                work.attempts[g] = [(a["completion"], a["reward"]) for a in record["reattempt"]]
                still.append(g)
        return still

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
                iv.hint, broken = self.rules.safe_hint(iv.hint)
                work.stats["special_tokens_neutralised"] += broken > 0
        return interventions

    def splice(self, work: StepWork, g: int, reattempt: tuple[Generation, torch.Tensor], hint: str) -> bool:
        """Splices group g's hinted re-attempt into the batch as the strategy says; whether the group as spliced
        still scores all zero (under `mixed` the spliced re-attempts may all have failed even if another one
        succeeded), and so escalates."""
        gen, hint_rewards = reattempt
        self.rules.splice(g, gen, hint_rewards, hint, work.out, work.offset, work.rewards)
        work.spliced[g] = (gen, hint_rewards, hint)
        G = self.rules.num_generations
        return bool(self.rules.collapsed(work.rewards[g * G:(g + 1) * G]))

    def log_step(self, work: StepWork, graduated: set[str]) -> None:
        """The step's mentor/* metrics and trace records, to the callback."""
        G, rewards = self.rules.num_generations, work.rewards
        metrics = {
            **step_metrics(work.stats, len(work.history), len(self.rules.collapsed(rewards)), len(rewards) // G,
                           work.mentor_s, work.regen_s),
            "mentor/graduated": len(graduated), "mentor/graduated_total": self.ledger.graduate(graduated, work.step),
            **self.reliance(work.step, work.prompts, work.spliced),
            "mentor/structured_output_fallbacks": sum(gather(self.runtime.structured.fallbacks
                                                             - work.fallbacks_before)),
        }
        if self.config.hint_choice == "learning":  # mentor/trl/choice.py's figures
            metrics.update({f"mentor/{key}": work.stats[key] for key in
                            ("candidate_attempts", "chosen_not_graph", "candidates_leaking", "reliance_errors")})
        self.callback.log_step(self.adapter, work.step, metrics, work.records)

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

    def reliance(self, step: int, prompts: dict[int, Any], spliced: dict[int, tuple[Generation, torch.Tensor, str]]
                 ) -> dict[str, float]:
        """`mentor/reliance` (HiLL's, mentor/reliance.py) over the hinted rows the step trains on whose re-attempt
        earned reward, and `mentor/reliance_s`, its seconds, on steps that are a multiple of `reliance_every`; {}
        on other steps or without such a row. The policy scores them in eval mode without gradients, the rows split
        across ranks in equal shares (every rank holds every re-attempt, so all make as many forward passes)."""
        every, G = self.config.reliance_every, self.rules.num_generations
        if not every or step % every or not spliced:
            return {}
        responses = []
        for g, (gen, hint_rewards, hint) in spliced.items():
            totals = self.rules.success(hint_rewards).tolist()
            responses += self.correct_responses(prompts[g * G], gen, totals, hint, self.rules.picks(totals))
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
        plain = self.adapter.prompt_ids(self.rules.rendered(prompt))  # the ids TRL gave the prompt
        responses = []
        for j in rows:
            hinted, generated = list(gen.prompt_ids[j]), list(gen.completion_ids[j])
            prefix = self.rules.prefix_ids(plain, hinted, hint) if self.config.hint_placement == "prefix" else []
            if totals[j] > self.config.collapse_threshold and (prefix or generated):
                responses.append(HintedResponse(plain, hinted, prefix, generated))
        return responses

    def reliance_terms(self, step: int, responses: list[HintedResponse]) -> tuple[list[float] | None, float]:
        """HiLL's reliance term of each response (mentor/reliance.py), the responses split across ranks in equal
        shares, and the seconds it took; None (logged) where the policy could not score them."""
        batch, model = self.adapter.per_device_batch_size, self.adapter.model
        pad_id = self.adapter.tokenizer.pad_token_id

        def terms_of(share: list[HintedResponse]) -> list[float | None]:
            try:
                return reliance_terms(model, pad_id, share, batch)
            except Exception as e:  # it may not stop training; None keeps the ranks' gathers aligned
                logger.warning("hint reliance not computed at step %d (%s: %s)", step, type(e).__name__, e)
                return [None] * len(share)

        terms, seconds = split_map(terms_of, responses, pad=True)
        return (None if None in terms else terms), seconds

    def chosen(self, work: StepWork, hinted: list[tuple[int, Intervention]], groups: dict[int, FailedGroup]
               ) -> tuple[dict[int, tuple[Generation, torch.Tensor]], dict[int, list[Candidate]]]:
        """`hint_choice: learning` (mentor/trl/choice.py): every hinted group's candidates tried, G attempts each;
        each intervention's hint becomes its best candidate, whose attempts are the group's re-attempt. Returns the
        re-attempts and the candidates tried, by group; the extra attempts go to the counters."""
        G = self.rules.num_generations
        options = {g: self.candidates(work, work.rows[g * G], iv.hint, groups[g]) for g, iv in hinted}
        tries = [(g, c) for g, _ in hinted for c in options[g]]
        gens, seconds = self.reattempt(work.prompts, work.rows, [(g, c.hint) for g, c in tries])
        work.regen_s += seconds
        totals = [self.rules.success(scores).tolist() for _, scores in gens]
        picks = [self.rules.picks(t) for t in totals]  # the rows the strategy would splice
        correct = [self.correct_responses(work.prompts[g * G], gen, row_totals, c.hint, rows)
                   for (g, c), (gen, _), row_totals, rows in zip(tries, gens, totals, picks)]
        flat = [r for responses in correct for r in responses]
        terms, seconds = self.reliance_terms(work.step, flat) if flat else ([], 0.0)
        work.regen_s += seconds
        work.stats["reliance_errors"] += terms is None
        at = 0
        threshold = self.config.collapse_threshold
        for (_, c), responses, rows, row_totals in zip(tries, correct, picks, totals):
            c.p = sum(row_totals[j] > threshold for j in rows) / G  # the group as spliced: its other rows failed
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
            reattempts[g] = gens[k + pick]
            work.stats["candidate_attempts"] += (len(tried) - 1) * G
            work.stats["chosen_not_graph"] += not tried[pick].from_graph
            k += len(tried)
        return reattempts, options

    def candidates(self, work: StepWork, row: dict, hint: str, group: FailedGroup) -> list[Candidate]:
        """The graph's `hint` (`graph_draws` times) and the group's `hint_candidates` columns (read from its first
        `row`) that are there, pass the leakage check and differ from the graph's and each other, each as the policy
        would see it."""
        options = [Candidate(hint, "graph" if k == 0 else f"graph#{k + 1}", from_graph=True)
                   for k in range(self.config.graph_draws)]
        for column in self.config.hint_candidates:
            text = row.get(column)
            if not isinstance(text, str) or not text.strip():
                continue
            if check_leak(text, group.reference, self.task, problem=group.prompt).leaked:
                work.stats["candidates_leaking"] += 1
                continue
            text, broken = self.rules.safe_hint(visible_text(text))
            work.stats["special_tokens_neutralised"] += broken > 0
            if all(text != c.hint for c in options):  # a column repeating the graph's hint is no other choice
                options.append(Candidate(text, column))
        return options

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

    def failed_group(self, row: dict, attempts: list[tuple[str, float]], history: list[dict]) -> FailedGroup | str:
        """The FailedGroup of a collapsed group, or the reason it cannot be mentored."""
        reference = {}
        for name in self.task.reference_fields + self.task.optional_reference_fields + (LIBRARY_FIELD,):
            value = row.get(self.config.columns.get(name, name))
            if value is not None:
                reference[name] = value
        if self.task.missing_reference(reference):
            return "missing_reference"
        pid = problem_id(row)
        return FailedGroup(pid, self.task.name, prompt_text(row["prompt"]), reference,
                           [Attempt(c, 0.0 if r is None else r) for c, r in attempts],
                           previous_hints=self.ledger.hint_history.get(pid, []) + history)

    def reattempt(self, prompts: dict[int, Any], rows: dict[int, dict], hinted: list[tuple[int, str]]
                  ) -> tuple[list[tuple[Generation, torch.Tensor]], float]:
        """G fresh completions per (group, hint) in `hinted` through the trainer's own generation path, scored once,
        in `hinted`'s order; and the seconds it took (the slowest rank's). `prompts` and `rows` hold at least the
        hinted groups' rows, by row number in the whole batch.

        Whole groups of identical prompts are asked for, as TRL's vLLM server mode needs. Each rank re-generates an
        equal, contiguous share of the hinted groups (padded with copies of the first, dropped after), so every rank
        asks for as many rows; then every rank receives every re-attempt.
        """
        G = self.rules.num_generations
        batch_scores: list[torch.Tensor] = []  # scoring gathers the rewards of every rank's share, in hinted order

        def regenerate(mine: list[tuple[int, str]]) -> list[Generation]:
            # One hinted prompt per group, G times (TRL's `_generate` copies its prompts before it changes them).
            hinted_prompts = [p for g, hint in mine for p in [self.rules.hinted_prompt(prompts[g * G], hint)] * G]
            gen = self.adapter.generate(hinted_prompts)
            hint_rows = [{**rows[g * G + j], "mentor_hint": self.rules.shown(hint)}
                         for g, hint in mine for j in range(G)]
            completions = gen.completions = self.rules.whole_responses(
                [prompts[g * G] for g, _ in mine for _ in range(G)], [r["mentor_hint"] for r in hint_rows],
                gen.completions)
            with self.adapter.extra_logs_kept():
                batch_scores.append(self.adapter.score(hint_rows, [prompts[g * G] for g, _ in mine for _ in range(G)],
                                                       completions, gen.completion_ids))
            return [Generation(*(v[k * G:(k + 1) * G] if isinstance(v, list) else v for v in gen.astuple()))
                    for k in range(len(mine))]

        gens, seconds = split_map(regenerate, hinted, pad=True)
        scores = batch_scores[0]
        return [(gens[k], scores[k * G:(k + 1) * G]) for k in range(len(hinted))], seconds

    def record(self, step: int, g: int, round_: int, group: FailedGroup, prompt: Any,
               attempts: list[tuple[str, float]], iv: Intervention, reattempt: tuple[Generation, torch.Tensor] | None,
               candidates: list[Candidate] | None = None) -> TraceRecord:
        """The trace record of one intervention on `group`, whose rows' prompt is `prompt`; `candidates`: the hints
        tried under `hint_choice: learning`."""
        hinted = self.rules.rendered(self.rules.hinted_prompt(prompt, iv.hint)) if iv.hint else None
        training = {"step": step, "group": g, "round": round_, "reattempt": [], "recovered": False,
                    "strategy": self.config.strategy, "placement": self.config.hint_placement,
                    "strip_hint": self.config.strip_hint, "train_prefix": self.config.train_prefix}
        if reattempt is not None:
            gen, scores = reattempt
            totals = self.rules.row_rewards(scores)
            training["reattempt"] = [{"completion": completion_text(c), "reward": r}
                                     for c, r in zip(gen.completions, totals)]
            training["recovered"] = bool(self.rules.succeeded(scores).any())
        if candidates:
            training["candidates"] = [c.to_dict() for c in candidates]
        return trace_record(group, iv, [{"completion": c, "reward": r} for c, r in attempts], hinted, training)
