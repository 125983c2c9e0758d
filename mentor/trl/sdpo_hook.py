"""The SDPO hook: the mentor's hint for a collapsed group becomes that group's privileged context in TRL's
SDPOTrainer, so the self-teacher (the policy conditioned on the reprompt) is conditioned on a live diagnosis of why
this policy failed this problem, and the student, on the plain prompt, is distilled towards it. No re-attempt is
generated: the hint conditions the teacher's forward pass only.

A step, through mentor/trl/sdpo.py (the one file that speaks to the trainer):
- `_calculate_rewards` scores the batch as TRL does and keeps this rank's rows, prompts and completions beside the
  gathered rewards;
- `teacher_context_builder.build` finds the collapsed groups (as for GRPO: every row at or below
  `collapse_threshold`; never one with a rollout SDPO takes as its demonstration), runs the graph on them (same
  runtime, budget, fallbacks), and gives each row of a collapsed group the leak-checked hint as its feedback, or none
  (a withheld hint, a fault, a skipped group: no feedback, whatever the dataset's `privileged_context` says); other
  groups keep theirs. SDPO's own builder then makes the reprompts; the trace records what the teacher got, as
  tokenized.

The steps that do not touch the batch (the failed group, the graph run split across ranks, the gather of the
collapsed groups' rows, graduation) are the GRPO hook's own, shared as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from mentor.config import MentorConfig
from mentor.placement import Placement
from mentor.runtime import MentorRuntime
from mentor.runtime.node_errors import NodeErrorLog
from mentor.tasks.base import Task, completion_text
from mentor.trace_format import trace_record
from mentor.trl.batch import BatchRules
from mentor.trl.distributed import gather, rank_and_world
from mentor.trl.hook import GenerationHook, StepWork
from mentor.trl.metrics import count_intervention, count_skipped, earlier_tier, step_metrics
from mentor.trl.sdpo import SDPOAdapter
from mentor.types import InputError

# Keys that choose how GRPO's hinted re-attempts are made and enter the batch: SDPO makes none, so a value other than
# the default would describe a run that does not happen. Their parameters (k, mixed_share, hint_candidates,
# graph_draws, reliance_penalty) are inert while these are at their defaults, as under GRPO.
REATTEMPT_KEYS = ("strategy", "max_rounds", "hint_placement", "strip_hint", "train_prefix", "mode", "hint_choice",
                  "hint_source", "reliance_every", "redraw_all_pass", "hint_memory", "correct_off_policy")
# The re-attempt's metrics, which an SDPO step has no figure for.
REATTEMPT_METRICS = ("mentor/collapse_rate_after", "mentor/recovered", "mentor/regen_s")


def check_config(config: MentorConfig) -> None:
    """Refuses (InputError) a config that sets a re-attempt key away from its default, naming each such key."""
    default = MentorConfig()
    changed = {key: getattr(config, key) for key in REATTEMPT_KEYS if getattr(config, key) != getattr(default, key)}
    if changed:
        raise InputError(f"under SDPOTrainer the mentor's hint becomes the teacher's feedback and no hinted "
                         f"re-attempt is generated, so {changed} would configure nothing: remove "
                         f"{'it' if len(changed) == 1 else 'them'} from the mentor config (defaults: "
                         f"{ {key: getattr(default, key) for key in changed} })")


@dataclass
class Scored:
    """What `_calculate_rewards` saw of a training step: this rank's rows, prompts and completions, and the whole
    batch's rewards per function (gathered)."""

    rows: list[dict[str, Any]]
    prompts: list
    completions: list
    rewards: torch.Tensor


class SDPOHook:
    """Wraps an SDPOTrainer instance so collapsed groups get the mentor's hint as their privileged context.

    Args:
        trainer: an SDPOTrainer (or subclass) instance that passed `mentor.trl.sdpo.check_sdpo`.
        config: the MentorConfig (its graph, runtime and record keys; `check_config` refuses the re-attempt keys).
        runtime: runs the mentor graph over failed groups.
        task: the task adapter that reads references.
        callback: the MentorCallback that keeps the hint ledger, counters and traces.
    """

    # The GRPO hook's steps that read the batch but never change it, shared as they are.
    failed_group = GenerationHook.failed_group
    mentored = GenerationHook.mentored
    gather_needed = GenerationHook.gather_needed
    graduates = GenerationHook.graduates

    def __init__(self, trainer, config: MentorConfig, runtime: MentorRuntime, task: Task, callback):
        self.config, self.runtime, self.task, self.callback = config, runtime, task, callback
        self.ledger = callback.ledger
        self.adapter = adapter = SDPOAdapter(trainer)
        # No re-attempt under SDPO: the placement only makes hints safe, the rules find collapse and sum rewards.
        self.placement = Placement(config.hint_placement, task, None, None, adapter.special_tokens)
        self.rules = BatchRules(config, self.placement, adapter.num_generations, adapter.reward_weights,
                                adapter.reward_names)  # the names `success_reward` selects its columns by
        self.node_errors = NodeErrorLog()
        self.scored: Scored | None = None
        adapter.install(self.calculate_rewards, self.build)

    # --- the two wrapped methods --------------------------------------------------------------------------------
    def calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards = self.adapter.score_raw(inputs, prompts, completions, completion_ids_list)
        if self.adapter.training:  # evaluation keeps SDPO's own teacher
            self.scored = Scored([{**row, "mentor_hint": ""} for row in inputs], list(prompts), list(completions),
                                 rewards)
        return rewards

    def build(self, output, prompts, rewards, feedbacks=None):
        scored, self.scored = self.scored, None
        if scored is None or len(scored.prompts) != len(prompts):
            return self.adapter.build_raw(output, prompts, rewards, feedbacks)
        return self.taught(scored, output, prompts, rewards, feedbacks)

    # --- the step --------------------------------------------------------------------------------------------
    def taught(self, scored: Scored, output, prompts, rewards, feedbacks):
        """The teacher context of a training step whose collapsed groups got the mentor's hint as feedback."""
        G, step = self.rules.num_generations, self.adapter.global_step
        offset = rank_and_world()[0] * len(prompts)
        totals = self.rules.row_rewards(scored.rewards)
        work = StepWork(step, offset, {}, {}, None, scored.rewards, self.runtime.structured.fallbacks)
        targets = []
        for g in self.rules.collapsed(scored.rewards):  # a demonstration in the group: SDPO's own teacher
            if any(r is not None and r >= self.adapter.success_threshold for r in totals[g * G:(g + 1) * G]):
                count_skipped(work.stats, "successful_rollout")
            else:
                targets.append(g)
        graduated = self.graduates(targets, offset, scored.rows)
        completions: dict[int, Any] = {}
        if targets:  # the same on every rank, so all ranks gather or none does
            work.prompts, work.rows, completions = self.gather_needed(targets, offset, scored.prompts, scored.rows,
                                                                      scored.completions)
        groups, kept = [], []
        for g in targets:
            attempts = [(completion_text(completions[g * G + j]), totals[g * G + j]) for j in range(G)]
            work.attempts[g] = attempts
            failed = self.failed_group(work.rows[g * G], attempts, [])
            if isinstance(failed, str):
                count_skipped(work.stats, failed)
            else:
                groups.append(failed)
                kept.append(g)
        interventions = dict(zip(kept, self.mentored(work, groups)))
        hints = {g: interventions[g].hint if g in interventions else None for g in targets}
        own = feedbacks if feedbacks is not None else [None] * len(prompts)
        feedbacks = [hints.get((offset + i) // G, f) for i, f in enumerate(own)]  # a withheld hint: None
        context = self.adapter.build_raw(output, prompts, rewards, feedbacks)

        hinted = [g for g in targets if hints[g]]
        teacher = self.teacher_prompts(context, output["completion_ids"].size(1), offset, hinted, len(prompts))
        for g, group in zip(kept, groups):
            iv = interventions[g]
            if iv.hint:
                self.ledger.remember(group.problem_id, iv.tier, iv.hint, False)
            training = {"step": step, "group": g, "round": 1, "reattempt": [], "teacher_prompt": teacher.get(g)}
            work.records.append(trace_record(group, iv, [{"completion": c, "reward": r} for c, r in work.attempts[g]],
                                             None, training))
            count_intervention(work.stats, iv, False, earlier_tier(group))
        self.log_step(work, targets, len(totals) // G, len(hinted), graduated)
        return context

    def teacher_prompts(self, context: dict, completion_width: int, offset: int, hinted: list[int], rows: int
                        ) -> dict[int, str]:
        """Each hinted group's teacher prompt as tokenized, on every rank: each rank decodes the first row it holds
        of each, and one gather (every rank holds the same `hinted`) joins them."""
        if not hinted:
            return {}
        G, wanted = self.rules.num_generations, set(hinted)
        firsts: dict[int, int] = {}
        for i in range(rows):
            g = (offset + i) // G
            if g in wanted:
                firsts.setdefault(g, i)
        texts = self.adapter.teacher_prompts(context, completion_width, list(firsts.values()))
        return {g: text for part in gather(dict(zip(firsts, texts))) for g, text in part.items()}

    def log_step(self, work: StepWork, targets: list[int], n_groups: int, fed: int, graduated: set[str]) -> None:
        """The step's mentor/* metrics (the GRPO hook's, less the re-attempt's) and trace records, to the callback."""
        metrics = step_metrics(work.stats, len(targets), len(targets), n_groups, work.mentor_s, 0.0)
        metrics = {k: v for k, v in metrics.items() if k not in REATTEMPT_METRICS}
        metrics.update({
            "mentor/feedback_groups": fed,
            "mentor/graduated": len(graduated), "mentor/graduated_total": self.ledger.graduate(graduated, work.step),
            "mentor/structured_output_fallbacks": sum(gather(self.runtime.structured.fallbacks
                                                             - work.fallbacks_before)),
        })
        self.callback.log_step(self.adapter, work.step, metrics, work.records)
