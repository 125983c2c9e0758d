"""The report of `mentor eval`: per row (`none` and each config), its rescue rate with its interval and its paired
difference from `none`, reward, hint cost, counts of what the graph did, reliance, per-class rescue and diagnosis
accuracy; the oracle over the rows; and a warning for each row that withheld most groups for a missing column."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Callable

from mentor.evaluation.inputs import Inputs, group_inputs
from mentor.evaluation.intervals import paired_difference, wilson
from mentor.evaluation.policy import Policy
from mentor.evaluation.rewards import Scoring
from mentor.evaluation.sampling import sample
from mentor.summary import summarise
from mentor.types import FailedGroup, InputError, Intervention


def with_columns(group: FailedGroup, columns: dict[str, str]) -> FailedGroup:
    """The group with each reference field the config maps (`columns: {hint: hint2}`) read from its column, as the
    in-step hook reads dataset columns: one failures file can hold several hint libraries."""
    from mentor.runtime.state import LIBRARY_FIELD

    if not columns:
        return group
    # A run stores the task's fields under the mentor's names (a missing mapped column falls back to them), but a
    # library's column under its own: one the failure lacks leaves `hint` out, so the row withholds and
    # `withheld_for_missing` warns, rather than giving another library's `hint`.
    reference = {k: v for k, v in group.reference.items() if k != LIBRARY_FIELD or LIBRARY_FIELD not in columns}
    reference.update({ours: group.reference[theirs] for ours, theirs in columns.items() if theirs in group.reference})
    return FailedGroup(group.problem_id, group.task, group.prompt, reference, group.attempts, group.previous_hints)


def error_class(group: FailedGroup) -> str:
    """The group's error class by the task's rules classifier (the mentor's default): one grouping for every row."""
    from mentor.tasks import get_task

    task = get_task(group.task)
    counts = defaultdict(int)
    for attempt in group.attempts:
        counts[task.classify(attempt, group.reference)] += 1
    return task.dominant_class(counts, "unknown")


def diagnosis_accuracy(predicted: list[int | None], annotated: list[list[int | None]] | None
                       ) -> dict[str, Any] | None:
    """How often the analyst's `first_error_step` of each group (`predicted`) equals each of its attempts' annotated
    first wrong step (`annotated`, per group per attempt; None where an attempt has none): `{"attempts": n,
    "exact": share, "within_1": share}` over the n annotated attempts; a None prediction matches nothing. None
    without an annotated attempt."""
    pairs = [(p, s) for p, steps in zip(predicted, annotated or []) for s in steps if s is not None]
    if not pairs:
        return None
    return {"attempts": len(pairs), "exact": sum(p == s for p, s in pairs) / len(pairs),
            "within_1": sum(p is not None and abs(p - s) <= 1 for p, s in pairs) / len(pairs)}


LIBRARY_NODE = "hint_library"  # the static library's node (graphs/static_hints), which reads LIBRARY_FIELD


def withheld_for_missing(groups: list[FailedGroup], interventions: list[Intervention], columns: dict[str, str]
                         ) -> dict[str, int]:
    """Per reference column a config row reads by name (each column its `columns` maps, and the library's column
    where its graph ran the library node), how many groups the row withheld whose reference lacks it (and the field
    it maps to, which `with_columns` would read instead)."""
    from mentor.runtime.state import LIBRARY_FIELD

    read = dict(columns)  # field the graph reads -> the column it comes from
    if any(LIBRARY_NODE in iv.backend for iv in interventions):
        read.setdefault(LIBRARY_FIELD, LIBRARY_FIELD)
    mapped = [with_columns(g, columns).reference for g in groups]
    counts = {column: sum(iv.withheld and field not in m for m, iv in zip(mapped, interventions))
              for field, column in sorted(read.items())}
    return {column: k for column, k in counts.items() if k}


def missing_column_warnings(name: str, row: dict[str, Any]) -> list[str]:
    """A warning for each column whose absence withheld more than half of the row's groups."""
    return [f"row {name}: {k} of {row['groups']} groups were withheld and lack the reference column {c!r} the row "
            f"reads, so on them the row is `none` by construction; give each failure's reference {c!r} (a run "
            f"stores its dataset's hint* and hint_candidates columns; a run of an earlier version did not)"
            for c, k in row["withheld_missing_column"].items() if k > row["groups"] / 2]


def load_configs(configs: dict[str, str | None]) -> dict[str, Any]:
    """A MentorRuntime per row name: every config and graph loads before any sampling, so a bad one costs nothing.
    `hint_choice: learning` and `hint_source: none` are refused (docs/evaluation.md says why)."""
    from mentor.runtime import MentorRuntime

    runtimes = {}
    for name, path in configs.items():
        try:
            runtimes[name] = MentorRuntime(path)
        except InputError as e:
            raise InputError(f"--config {name}={path}: {e}") from None
        if runtimes[name].config.hint_source == "none":
            raise InputError(f"--config {name}={path}: hint_source: none is training's retry control, which `mentor "
                             f"eval` does not run: the row would get the mentor's hints. eval's re-draw row is the "
                             f"row `none` (every report has it, sampled unhinted); leave this --config out, or set "
                             f"hint_source: graph")
        if runtimes[name].config.hint_choice == "learning":
            raise InputError(f"--config {name}={path}: hint_choice: learning is training's choice among hints by "
                             f"predicted learning, which `mentor eval` does not make; set hint_choice: graph, and "
                             f"give each hint_candidates column its own static-library row (graph: "
                             f"graphs/static_hints/graph.py:graph, columns: {{hint: COLUMN}}), whose rows and oracle "
                             f"compare the candidates (docs/evaluation.md)")
    return runtimes


def evaluate(groups: list[FailedGroup], policy: Policy, runtimes: dict[str, Any], samples: int = 8,
             temperature: float = 1.0, max_new_tokens: int | None = None, seed: int = 0,
             annotated: list[list[int | None]] | None = None,
             on_interventions: Callable[[str, list[Intervention], list[str | None]], None] | None = None,
             on_row: Callable[[str, dict[str, Any]], None] | None = None, lookahead_steps: int = 0,
             lookahead_lr: float | None = None, scorer: Scoring | None = None) -> dict[str, Any]:
    """The report of `mentor eval` (see the module doc) for the rows `none` and each of `runtimes` (name ->
    MentorRuntime, from `load_configs`), without the `skipped` list. `annotated`: per group, each attempt's annotated
    first wrong step or None (`read_annotations`), for the rows' `diagnosis_accuracy`. `on_interventions(name,
    interventions, hinted_prompts)` is called once a row's graph has run, before its sampling, with the text the
    policy is sent for each group (None without a hint); `on_row(name, figures)` once a row is done.
    `lookahead_steps` K > 0 adds each row's `lookahead` (mentor/evaluation/lookahead.py) at learning rate
    `lookahead_lr`, after every row has sampled (its targets come from all of them). `scorer`: how a response is
    scored and judged a success (mentor/evaluation/rewards.py; default: the task's verifier)."""
    from tqdm.auto import tqdm

    scorer = scorer or Scoring()
    max_new_tokens = max_new_tokens or policy.max_new_tokens
    classes = [error_class(g) for g in groups]
    report: dict[str, Any] = {"policy": policy.name, "samples": samples, "temperature": temperature, "seed": seed,
                              "max_new_tokens": max_new_tokens, "chat_template_kwargs": policy.chat_template_kwargs,
                              "scoring": scorer.describe(), "configs": {},
                              "warnings": [],
                              "problem_ids": [g.problem_id for g in groups]}
    rescued_by: dict[str, list[bool]] = {}
    sampled: dict[str, tuple[list, list, list]] = {}  # per row: inputs, responses, rewards (for the lookahead)
    for name in ["none", *runtimes]:
        t0 = time.perf_counter()
        if name == "none":
            hints, placement, interventions = [None] * len(groups), "prompt", []
        else:
            runtime = runtimes[name]
            with tqdm(total=len(groups), desc=f"mentoring {name}", unit="group", leave=False) as bar:
                interventions = runtime.run([with_columns(g, runtime.config.columns) for g in groups],
                                            on_done=lambda *_: bar.update(), clock="group")
            hints, placement = [iv.hint for iv in interventions], runtime.config.hint_placement
        mentor_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        inputs = [group_inputs(policy, g, h, placement) for g, h in zip(groups, hints)]
        if on_interventions and name != "none":
            on_interventions(name, interventions, [x.hinted_text for x in inputs])
        responses = sample(policy, inputs, samples, temperature, max_new_tokens, seed, desc=f"sampling {name}")
        scored = [scorer.score(g, [text for text, _ in rs]) for g, rs in zip(groups, responses)]
        rewards, succeeded = [s[0] for s in scored], [s[1] for s in scored]
        rescued = [any(s) for s in succeeded]
        if lookahead_steps:
            sampled[name] = (inputs, responses, rewards)
        hinted_correct = [(x, ids) for x, h, rs, ok in zip(inputs, hints, responses, succeeded) if h
                          for (_, ids), good in zip(rs, ok) if good]
        rely = reliance(policy, hinted_correct) if name != "none" else None
        sample_s = time.perf_counter() - t0
        given = [h for h in hints if h]
        counts = summarise(interventions)
        per_class: dict[str, dict[str, Any]] = {}
        for c, ok in zip(classes, rescued):
            entry = per_class.setdefault(c, {"groups": 0, "rescued": 0})
            entry["groups"], entry["rescued"] = entry["groups"] + 1, entry["rescued"] + ok
        report["configs"][name] = {
            "groups": len(groups),
            "rescue_rate": sum(rescued) / len(groups),
            "mean_reward": sum(map(sum, rewards)) / (len(groups) * samples),
            "hint_tokens": sum(len(policy.encode(h)) for h in given) / len(given) if given else 0.0,
            # As the training metrics (one mentor.summary.summarise): an llm node that fell back to rules, and a
            # group whose graph run failed (no hint), so a row that silently became its rules twin says so.
            **{key: getattr(counts, key) for key in ("withheld", "leaks_blocked", "llm_fallbacks", "failures")},
            "reliance": rely,
            "per_error_class": {c: {"groups": e["groups"], "rescue_rate": e["rescued"] / e["groups"]}
                                for c, e in sorted(per_class.items())},
            "diagnosis_accuracy": diagnosis_accuracy([iv.diagnosis.first_error_step for iv in interventions],
                                                     annotated) if name != "none" else None,
            "mentor_s": round(mentor_s, 3),
            "sample_s": round(sample_s, 3),
            # Added after the fields above (kept as they were): the sample size's say in the headline.
            "rescued": sum(rescued),
            "rescue_ci": list(wilson(sum(rescued), len(groups))),
            "vs_none": paired_difference(rescued, rescued_by["none"]) if name != "none" else None,
            "withheld_missing_column": withheld_for_missing(groups, interventions, runtime.config.columns)
                                       if name != "none" else {},
            # Per group, in the order of `problem_ids`: for paired analyses across runs (mentor.evaluation.pooled).
            "group_rescued": rescued,
            # Each reward function's mean over the row's responses (with --reward or a run's rewards): the parts of
            # a total such as 0.5, a format reward's share beside the correctness reward's.
            "reward_parts": {n: sum(sum(s[2][n]) for s in scored) / (len(groups) * samples)
                             for n in (scored[0][2] if scored else {})},
        }
        report["warnings"] += missing_column_warnings(name, report["configs"][name])
        rescued_by[name] = rescued
        if on_row:
            on_row(name, report["configs"][name])
    if lookahead_steps:
        add_lookahead(report, groups, policy, runtimes, sampled, lookahead_steps, lookahead_lr)
    best = max(report["configs"], key=lambda n: report["configs"][n]["rescue_rate"])  # ties: the first row
    report["oracle"] = {"rescue_rate": sum(map(any, zip(*rescued_by.values()))) / len(groups),
                        "best_single": best, "best_single_rate": report["configs"][best]["rescue_rate"]}
    return report


def add_lookahead(report: dict[str, Any], groups: list[FailedGroup], policy: Policy, runtimes: dict[str, Any],
                  sampled: dict[str, tuple[list, list, list]], steps: int, lr: float | None) -> None:
    """Each row's `lookahead` figure in `report`, and `report["lookahead"]`: K, the learning rate, the held-out
    targets and the row it ranks first. The `none` row trains by the first config's strategy (a retry spliced as the
    hints are); without a config, by the default one."""
    from mentor.config import MentorConfig
    from mentor.evaluation.lookahead import DEFAULT_LR, lookahead_figures

    lr = DEFAULT_LR if lr is None else lr
    configs = {name: runtimes[name].config for name in runtimes}
    configs = {"none": next(iter(configs.values()), None) or MentorConfig(), **configs}
    figures = lookahead_figures(policy, groups, configs, *(
        {name: sampled[name][i] for name in configs} for i in range(3)), steps=steps, lr=lr)
    for name, fig in figures.items():
        report["configs"][name]["lookahead"] = fig["lookahead"]
        report["configs"][name]["lookahead_train_groups"] = fig["train_groups"]
    scored = {n: f["lookahead"] for n, f in figures.items() if f["lookahead"] is not None}
    report["lookahead"] = {"steps": steps, "lr": lr, "targets": next(iter(figures.values()))["targets"],
                           "best": max(scored, key=scored.get) if scored else None}


def reliance(policy: Policy, rescued: list[tuple[Inputs, list[int]]]) -> float | None:
    """HiLL's hint reliance (mentor/reliance.py) over correct hinted responses, each its inputs and generated ids.
    In prefix placement y is the whole response, prefix included. None without a correct hinted response."""
    from mentor.reliance import HintedResponse, mean, reliance_terms

    responses = [HintedResponse(x.plain, x.hinted, x.prefix, gen) for x, gen in rescued]
    return mean(reliance_terms(policy.model, policy.tokenizer.pad_token_id, responses))
