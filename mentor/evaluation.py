"""`mentor eval`: do a mentor config's hints rescue this policy's stored failures, what do they give away, what do
they cost. Each config's graph hints every failed group once; the policy then samples G seeded re-attempts per group
with the hint placed as the config says, and the task's verifier scores them. The row `none` samples with no hint.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mentor.output import partial_path, write_atomically
from mentor.summary import summarise
from mentor.types import FailedGroup, InputError, Intervention

BATCH_SIZE = 512  # sequences per generate call, as the lab's batched evaluation (mentor.lab.sampling.completions)
LAB_MAX_NEW_TOKENS = 6  # the lab's response: a space, 4 digits, EOS
DEFAULT_MAX_NEW_TOKENS = 256


# --- inputs ------------------------------------------------------------------------------------------

ANNOTATED_STEP = "annotated_first_wrong_step"  # an attempt's annotated first wrong step (mentor.data.champ writes it)


class _BadAnnotation(Exception):
    """An attempt's annotation that is not a step number (raised through parse_lines, which skips InputErrors)."""


def read_annotations(path: str | Path) -> list[list[int | None]] | None:
    """Per group of `read_failures(path)` (same order, the same lines skipped), each attempt's
    `annotated_first_wrong_step` or None; None when no attempt has one (a trace store never has)."""
    from mentor.failures import checked_group, is_trace_store
    from mentor.traces.jsonl import parse_lines

    path = Path(path)
    if is_trace_store(path):
        return None

    def steps(number: int, row: Any) -> list[int | None]:
        checked_group(row)  # refuses exactly the lines read_failures skips, so the groups stay aligned
        for i, attempt in enumerate(row["attempts"]):
            step = attempt.get(ANNOTATED_STEP)
            if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 1):
                # Not a skipped line (that would misalign the groups): a bad annotation is the file's error.
                raise _BadAnnotation(f"FAILURES {path}:{number}: attempts[{i}].{ANNOTATED_STEP} must be a step "
                                     f"number >= 1 (the attempt's first wrong step) or null, got {step!r}")
        return [a.get(ANNOTATED_STEP) for a in row["attempts"]]

    with path.open("rb") as f:
        try:
            annotated, _ = parse_lines(f, path, steps)
        except _BadAnnotation as e:
            raise InputError(str(e)) from None
    return annotated if any(s is not None for group in annotated for s in group) else None


def parse_configs(specs: list[str] | None) -> dict[str, str | None]:
    """`--config NAME=CFG` values as {name: YAML path}; none given: {"mentor": None} (the default config).
    `NAME=default` is the default config (the installed graph and prompts, rules everywhere) under that name."""
    if not specs:
        return {"mentor": None}
    configs: dict[str, str | None] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--config {spec!r}: expected NAME=CFG, e.g. --config mine=configs/mine.yaml")
        if name == "none" or name in configs:
            raise InputError(f"--config {spec!r}: the name {name!r} is " +
                             ("the unhinted row's" if name == "none" else "given twice") + "; choose another")
        configs[name] = None if path == "default" and not Path(path).exists() else path
    return configs


def parse_fail_under(specs: list[str] | None, names: list[str]) -> dict[str, float]:
    """`--fail-under NAME=RATE` values as {name: rate}, each NAME a row of the report."""
    out = {}
    for spec in specs or []:
        name, sep, rate = spec.partition("=")
        try:
            value = float(rate)
        except ValueError:
            value = None
        if not sep or value is None or not 0 <= value <= 1:
            raise InputError(f"--fail-under {spec!r}: expected NAME=RATE with RATE in [0, 1], e.g. mentor=0.5")
        if name not in names:
            raise InputError(f"--fail-under {spec!r}: no row {name!r}; the rows are {names}")
        out[name] = value
    return out


# --- the policy --------------------------------------------------------------------------------------

@dataclass
class Policy:
    name: str
    model: Any
    tokenizer: Any
    max_new_tokens: int  # the default response length for this policy

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def render(self, prompt: str) -> str:
        """The text the policy continues for a problem: its user turn through the chat template (with the generation
        prompt) where the tokenizer has one, as TRL renders a conversational prompt; else the text as it is. The lab's
        template renders a user turn as its bare text, so lab prompts are unchanged."""
        if not getattr(self.tokenizer, "chat_template", None):
            return prompt
        # Encoded with add_special_tokens=False, so a BOS the template writes is kept once, never doubled.
        return self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                  add_generation_prompt=True)


def load_policy(name: str) -> Policy:
    """`lab` (the committed lab policy), a local save_pretrained directory, or a hub id (via mentor.models.resolve)."""
    from mentor.lab.pretrain import COMMITTED_POLICY
    from mentor.lab.pretrain import load_policy as load_checkpoint
    from mentor.models import resolve

    path = str(COMMITTED_POLICY) if name == "lab" else name if Path(name).exists() else resolve(name)
    if Path(path).exists() and not (Path(path) / "config.json").is_file():
        raise InputError(f"--policy {name}: {path} has no config.json; give `lab`, a save_pretrained directory or "
                         f"a hub id")
    try:
        model, tokenizer = load_checkpoint(path)  # in eval mode
    except (OSError, ValueError) as e:
        raise InputError(f"--policy {name}: not `lab`, a save_pretrained directory or a loadable hub id "
                         f"({type(e).__name__}: {str(e).splitlines()[0][:200]})") from None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    lab = (Path(path) / "meta.json").is_file() and "weights_key" in json.loads((Path(path) / "meta.json").read_text())
    return Policy(name, model, tokenizer, LAB_MAX_NEW_TOKENS if lab else DEFAULT_MAX_NEW_TOKENS)


# --- sampling and scoring ----------------------------------------------------------------------------

@dataclass
class Inputs:
    """What the policy continues for one group: the unhinted text's ids, the hinted input's ids (prompt or prompt +
    prefix) and, in prefix placement, the prefix's ids (the given start of the response)."""

    plain: list[int]
    hinted: list[int]
    prefix: list[int]
    prefix_text: str = ""


def group_inputs(policy: Policy, group: FailedGroup, hint: str | None, placement: str) -> Inputs:
    from mentor.tasks import get_task
    from mentor.tasks.base import response_prefix_ids
    from mentor.trl.batch import neutralised, special_token_texts

    task, rendered = get_task(group.task), policy.render(group.prompt)
    plain = policy.encode(rendered)
    if not hint:
        return Inputs(plain, plain, [])
    hint, _ = neutralised(hint, special_token_texts(policy.tokenizer))  # as in training: no forged chat turns
    if placement == "prompt":  # the task formats the hint into the user turn, as the in-step hook does
        return Inputs(plain, policy.encode(policy.render(task.hinted_prompt(group.prompt, hint))), [])
    prefix_text = task.response_prefix(hint)
    hinted = policy.encode(rendered + prefix_text)
    prefix = response_prefix_ids(plain, hinted, lambda: policy.encode(prefix_text))
    return Inputs(plain, plain + prefix, prefix, prefix_text)


def sample(policy: Policy, inputs: list[Inputs], samples: int, temperature: float, max_new_tokens: int, seed: int,
           desc: str = "sampling") -> list[list[tuple[str, list[int]]]]:
    """`samples` responses per input: (whole response text, the prefix included; generated token ids). Batched and
    seeded as mentor.lab.sampling.completions: the same seed, chunks and inputs give the same samples. Each response is
    at most `max_new_tokens` long, a prefix hint included, so a hint buys no extra length."""
    import torch
    from tqdm.auto import tqdm

    from mentor.lab.sampling import generate_ids

    per = max(1, BATCH_SIZE // samples)
    out: list[list[tuple[str, list[int]]]] = []
    eos, pad = policy.tokenizer.eos_token_id, policy.tokenizer.pad_token_id
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for s in tqdm(range(0, len(inputs), per), desc=desc, unit="batch", leave=False):
            chunk = inputs[s:s + per]
            budget = max(1, max_new_tokens - min(len(x.prefix) for x in chunk))
            ids = generate_ids(policy.model, policy.tokenizer, [x.hinted for x in chunk], samples, temperature, budget)
            for j, x in enumerate(chunk):
                group = []
                for row in ids[j * samples:(j + 1) * samples].tolist():
                    row = row[:max(1, max_new_tokens - len(x.prefix))]
                    row = row[:row.index(eos)] if eos in row else [t for t in row if t != pad]
                    group.append((x.prefix_text + policy.tokenizer.decode(row, skip_special_tokens=True), row))
                out.append(group)
    return out


def reliance(policy: Policy, rescued: list[tuple[Inputs, list[int]]]) -> float | None:
    """HiLL's hint reliance (mentor/reliance.py) over correct hinted responses, each its inputs and generated ids.
    In prefix placement y is the whole response, prefix included. None without a correct hinted response."""
    from mentor.reliance import HintedResponse, mean, reliance_terms

    responses = [HintedResponse(x.plain, x.hinted, x.prefix, gen) for x, gen in rescued]
    return mean(reliance_terms(policy.model, policy.tokenizer.pad_token_id, responses))


# --- the evaluation ----------------------------------------------------------------------------------

def with_columns(group: FailedGroup, columns: dict[str, str]) -> FailedGroup:
    """The group with each reference field the config maps (`columns: {hint: hint2}`) read from its column, as the
    in-step hook reads dataset columns: one failures file can hold several hint libraries."""
    if not columns:
        return group
    reference = {**group.reference, **{ours: group.reference[theirs] for ours, theirs in columns.items()
                                        if theirs in group.reference}}
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


def load_configs(configs: dict[str, str | None]) -> dict[str, Any]:
    """A MentorRuntime per row name: every config and graph loads before any sampling, so a bad one costs nothing."""
    from mentor.runtime import MentorRuntime

    runtimes = {}
    for name, path in configs.items():
        try:
            runtimes[name] = MentorRuntime(path)
        except InputError as e:
            raise InputError(f"--config {name}={path}: {e}") from None
    return runtimes


def evaluate(groups: list[FailedGroup], policy: Policy, runtimes: dict[str, Any], samples: int = 8,
             temperature: float = 1.0, max_new_tokens: int | None = None, seed: int = 0,
             annotated: list[list[int | None]] | None = None,
             on_interventions: Callable[[str, list[Intervention]], None] | None = None,
             on_row: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The report of `mentor eval` (see the module doc) for the rows `none` and each of `runtimes` (name ->
    MentorRuntime, from `load_configs`), without the `skipped` list. `annotated`: per group, each attempt's annotated
    first wrong step or None (`read_annotations`), for the rows' `diagnosis_accuracy`. `on_interventions(name,
    interventions)` is called once a row's graph has run, before its sampling; `on_row(name, figures)` once a row is
    done."""
    from tqdm.auto import tqdm

    from mentor.tasks import get_task

    max_new_tokens = max_new_tokens or policy.max_new_tokens
    classes = [error_class(g) for g in groups]
    report: dict[str, Any] = {"policy": policy.name, "samples": samples, "temperature": temperature, "seed": seed,
                              "max_new_tokens": max_new_tokens, "configs": {}}
    rescued_by: dict[str, list[bool]] = {}
    for name in ["none", *runtimes]:
        t0 = time.perf_counter()
        if name == "none":
            hints, placement, interventions = [None] * len(groups), "prompt", []
        else:
            runtime = runtimes[name]
            with tqdm(total=len(groups), desc=f"mentoring {name}", unit="group", leave=False) as bar:
                interventions = runtime.run([with_columns(g, runtime.config.columns) for g in groups],
                                            on_done=lambda *_: bar.update(), clock="group")
            if on_interventions:
                on_interventions(name, interventions)
            hints, placement = [iv.hint for iv in interventions], runtime.config.hint_placement
        mentor_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        inputs = [group_inputs(policy, g, h, placement) for g, h in zip(groups, hints)]
        responses = sample(policy, inputs, samples, temperature, max_new_tokens, seed, desc=f"sampling {name}")
        rewards = [[get_task(g.task).score(text, g.reference) for text, _ in rs] for g, rs in zip(groups, responses)]
        rescued = [max(r) > 0 for r in rewards]
        hinted_correct = [(x, ids) for x, h, rs, r in zip(inputs, hints, responses, rewards) if h
                          for (_, ids), ok in zip(rs, r) if ok > 0]
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
        }
        rescued_by[name] = rescued
        if on_row:
            on_row(name, report["configs"][name])
    best = max(report["configs"], key=lambda n: report["configs"][n]["rescue_rate"])  # ties: the first row
    report["oracle"] = {"rescue_rate": sum(map(any, zip(*rescued_by.values()))) / len(groups),
                        "best_single": best, "best_single_rate": report["configs"][best]["rescue_rate"]}
    return report


# --- the command -------------------------------------------------------------------------------------

def write_html(report: dict[str, Any], path: Path) -> None:
    """One self-contained page: the table, bars of each row's rescue rate overall and per error class, and each row's
    diagnosis accuracy where the failures carry annotated first wrong steps."""
    from html import escape

    rows, classes = report["configs"], sorted({c for r in report["configs"].values() for c in r["per_error_class"]})

    def bar(rate: float) -> str:
        return (f'<div class="bar"><div style="width:{100 * rate:.1f}%"></div></div>'
                f'<span>{100 * rate:.1f}%</span>')

    def fmt(v: Any) -> str:
        return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    keys = ["groups", "rescue_rate", "mean_reward", "hint_tokens", "withheld", "leaks_blocked", "llm_fallbacks",
            "failures", "reliance", "mentor_s", "sample_s"]
    table = "".join(f"<tr><th>{escape(n)}</th>" + "".join(f"<td>{fmt(r[k])}</td>" for k in keys) + "</tr>"
                    for n, r in rows.items())
    bars = "".join(f"<tr><th>{escape(n)}</th><td>{bar(r['rescue_rate'])}</td></tr>" for n, r in rows.items())
    sizes = {c: e["groups"] for r in rows.values() for c, e in r["per_error_class"].items()}
    per_class = "".join(
        f"<h3>{escape(c)} ({sizes[c]} groups)</h3><table>" + "".join(
            f"<tr><th>{escape(n)}</th><td>{bar(r['per_error_class'][c]['rescue_rate'])}</td></tr>"
            for n, r in rows.items() if c in r["per_error_class"]) + "</table>" for c in classes)
    scored = {n: r["diagnosis_accuracy"] for n, r in rows.items() if r.get("diagnosis_accuracy")}
    diagnosis = "" if not scored else (
        "<h2>Diagnosis accuracy</h2><p>The analyst's first_error_step against each attempt's annotated first wrong "
        "step (docs/evaluation.md).</p><table><tr><th>config</th><th>attempts</th><th>exact</th><th>within 1</th>"
        "</tr>" + "".join(f"<tr><th>{escape(n)}</th><td>{d['attempts']}</td><td>{bar(d['exact'])}</td>"
                          f"<td>{bar(d['within_1'])}</td></tr>" for n, d in scored.items()) + "</table>")
    o = report["oracle"]
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>mentor eval: {escape(report['policy'])}</title>
<style>body{{font:14px sans-serif;margin:2em}}td,th{{padding:2px 8px;text-align:right}}th{{text-align:left}}
.bar{{display:inline-block;width:240px;height:12px;background:#eee;margin-right:6px}}
.bar div{{height:100%;background:#4a7}}
</style></head><body><h1>mentor eval</h1>
<p>policy {escape(report['policy'])}, {report['samples']} samples a group at temperature {report['temperature']}, seed
{report['seed']}. Oracle: {100 * o['rescue_rate']:.1f}% rescued if each group got the row that rescued it; best single
row {escape(o['best_single'])} at {100 * o['best_single_rate']:.1f}%.</p>
<table><tr><th>config</th>{''.join(f'<th>{k}</th>' for k in keys)}</tr>{table}</table>
<h2>Rescue rate</h2><table>{bars}</table><h2>Per error class</h2>{per_class}{diagnosis}</body></html>
"""
    write_atomically(path, [page])


def cmd_eval(args) -> int:
    """Each finished row's figures go to `-o`.partial; `-o` and `--html` are written whole at the end
    (mentor/output.py), so Ctrl-C keeps the rows that finished."""
    from mentor.failures import check_output, read_failures
    from mentor.lab.pretrain import torch_threads
    from mentor.runtime.versions import describe
    from mentor.traces.jsonl import write_interventions

    out, html = Path(args.output), Path(args.html) if args.html else None
    kept = Path(args.interventions) if args.interventions else None
    failures = Path(args.failures)
    for flag, path, inputs in (("-o", out, [failures]), ("--html", html, [failures, out])):
        if path:
            check_output(path, flag, inputs)
    for flag, value in (("--samples", args.samples), ("--max-new-tokens", args.max_new_tokens or 1)):
        if value < 1:
            raise InputError(f"{flag} {value}: must be at least 1")
    if not args.temperature >= 0:
        raise InputError(f"--temperature {args.temperature}: must be >= 0 (0 is greedy)")
    configs = parse_configs(args.config)
    fail_under = parse_fail_under(args.fail_under, ["none", *configs])
    groups, skipped = read_failures(args.failures)
    annotated = read_annotations(args.failures)
    for problem in skipped:
        print(problem, file=sys.stderr)
    runtimes = load_configs(configs)
    for name, runtime in runtimes.items():  # which graph, prompts and backends each row runs
        print(f"[{name}] " + describe(runtime.versions).replace("\n", f"\n[{name}] "), file=sys.stderr)
    for name in runtimes if kept else ():
        check_output(kept / f"{name}.jsonl", "--interventions", [failures, out] + ([html] if html else []))
    policy = load_policy(args.policy)

    def keep(name: str, interventions: list[Intervention]) -> None:
        write_interventions(kept / f"{name}.jsonl", groups, interventions)

    finished: dict[str, Any] = {}

    def row_done(name: str, row: dict[str, Any]) -> None:
        finished[name] = row
        write_atomically(partial_path(out), [json.dumps({"policy": policy.name, "configs": finished,
                                                         "skipped": skipped}, indent=2)])

    try:
        with torch_threads(args.threads):
            report = evaluate(groups, policy, runtimes, args.samples, args.temperature, args.max_new_tokens,
                              args.seed, annotated, keep if kept else None, row_done)
    except KeyboardInterrupt:
        print(f"mentor: interrupted: {len(finished)} of {len(runtimes) + 1} rows finished"
              + (f" ({', '.join(finished)}); their figures are in {partial_path(out)}" if finished else "")
              + f" ({out} is left as it was)", file=sys.stderr)
        return 130
    report["skipped"] = skipped
    write_atomically(out, [json.dumps(report, indent=2)])
    partial_path(out).unlink(missing_ok=True)
    if html:
        write_html(report, html)
    print(f"{'config':<16}{'rescued':>9}{'reward':>9}{'hint tok':>10}{'reliance':>10}{'withheld':>10}"
          f"{'fallbacks':>11}{'failures':>10}")
    for name, row in report["configs"].items():
        rely = "" if row["reliance"] is None else f"{row['reliance']:.3f}"
        print(f"{name:<16}{100 * row['rescue_rate']:>8.1f}%{row['mean_reward']:>9.3f}{row['hint_tokens']:>10.2f}"
              f"{rely:>10}{row['withheld']:>10}{row['llm_fallbacks']:>11}{row['failures']:>10}")
    for name, row in report["configs"].items():
        if row["diagnosis_accuracy"]:
            d = row["diagnosis_accuracy"]
            print(f"{name}: first_error_step matches {100 * d['exact']:.1f}% of {d['attempts']} annotated attempts "
                  f"exactly, {100 * d['within_1']:.1f}% within 1")
    o = report["oracle"]
    print(f"oracle {100 * o['rescue_rate']:.1f}%, best single {o['best_single']} {100 * o['best_single_rate']:.1f}%; "
          f"{len(groups)} groups, {len(skipped)} skipped; wrote {out}" + (f" and {html}" if html else "")
          + (f"; each row's interventions in {kept}/NAME.jsonl (`mentor traces view FILE` pages one)" if kept else ""))
    below = [f"{n} {100 * report['configs'][n]['rescue_rate']:.1f}% < {100 * r:.1f}%" for n, r in fail_under.items()
             if report["configs"][n]["rescue_rate"] < r]
    if below:
        print("--fail-under: " + "; ".join(below), file=sys.stderr)
        return 1
    return 0


def add_eval_command(sub) -> None:
    p = sub.add_parser("eval", help="measure how well each config's hints rescue a policy's stored failures")
    p.add_argument("failures", help="a `mentor diagnose` .jsonl file, a run directory or its traces.sqlite")
    p.add_argument("--policy", required=True, help="`lab`, a save_pretrained directory, or a hub id")
    p.add_argument("--config", action="append", metavar="NAME=CFG",
                   help="a mentor config YAML under a row name, or NAME=default for the default config "
                        "(repeatable; default: mentor = the default config)")
    p.add_argument("--samples", type=int, default=8, help="re-attempts per group, G (default 8)")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1; 0 is greedy)")
    p.add_argument("--max-new-tokens", type=int, help="response length cap, a prefix hint included "
                                                      f"(default {LAB_MAX_NEW_TOKENS} for the lab policy, "
                                                      f"else {DEFAULT_MAX_NEW_TOKENS})")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("-o", "--output", required=True, help="REPORT.json to write")
    p.add_argument("--html", help="also write a self-contained HTML page")
    p.add_argument("--fail-under", action="append", metavar="NAME=RATE",
                   help="exit 1 when row NAME rescues less than RATE (0 to 1) of the groups (repeatable)")
    p.add_argument("--interventions", metavar="DIR", help="also write each config row's interventions (what its "
                                                            "graph did per group) to DIR/NAME.jsonl, as `mentor "
                                                            "diagnose -o` does; `mentor traces view` pages them")
    p.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    p.set_defaults(func=cmd_eval)
