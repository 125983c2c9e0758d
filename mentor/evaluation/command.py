"""The `mentor eval` command: check the arguments, read the failures, load every config and the policy, write the
report (each finished row to `-o`.partial first), print the table, and exit 1 under `--fail-under`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mentor.evaluation.annotations import read_annotations
from mentor.evaluation.arguments import add_arguments, check_counts, parse_configs, parse_fail_under
from mentor.evaluation.page import write_html
from mentor.evaluation.policy import load_policy
from mentor.evaluation.report import evaluate, load_configs
from mentor.output import partial_path, write_atomically
from mentor.types import InputError, Intervention


def cmd_eval(args) -> int:
    """Each finished row's figures go to `-o`.partial; `-o` and `--html` are written whole at the end
    (mentor/output.py), so Ctrl-C keeps the rows that finished."""
    from mentor.command_files import read_failures, run_settings
    from mentor.evaluation.rewards import scoring
    from mentor.output import check_output
    from mentor.policy import torch_threads
    from mentor.runtime.node_errors import report_node_errors
    from mentor.runtime.versions import describe
    from mentor.traces.jsonl import write_interventions

    out, html = Path(args.output), Path(args.html) if args.html else None
    kept = Path(args.interventions) if args.interventions else None
    failures = Path(args.failures)
    for flag, path, inputs in (("-o", out, [failures]), ("--html", html, [failures, out])):
        if path:
            check_output(path, flag, inputs)
    if partial_path(out).resolve() == failures.resolve():  # each finished row would overwrite it, the end delete it
        raise InputError(f"-o {out}: its finished rows go to {partial_path(out)}, which is the failures file being "
                         "read; give another output path")
    check_counts(args)
    if args.lookahead < 0 or (args.lookahead_lr is not None and not args.lookahead_lr > 0):
        raise InputError(f"--lookahead {args.lookahead} / --lookahead-lr {args.lookahead_lr}: K must be at least 0 "
                         "(0: off) and the learning rate above 0")
    if args.temperature is not None and not args.temperature >= 0:
        raise InputError(f"--temperature {args.temperature}: must be >= 0 (0 is greedy)")
    run = run_settings(failures)
    scorer = scoring(args.reward, args.success_reward, run)
    temperature = args.temperature if args.temperature is not None else run.get("temperature") or 1.0
    max_new_tokens = args.max_new_tokens or run.get("max_completion_length")
    if temperature == 0 and args.samples > 1:
        raise InputError(f"--temperature 0 is greedy, so its {args.samples} samples of a group would all be the "
                         "same: give --samples 1, or a temperature above 0")
    template_kwargs = run.get("chat_template_kwargs") or {}
    print(f"{scorer.describe()}\nsampling: temperature {temperature:g}, max_new_tokens "
          f"{max_new_tokens or 'the policy default'}" + (f", chat_template_kwargs {template_kwargs}" if template_kwargs
                                                        else "") + (" (the run's, unless given)" if run else ""),
          file=sys.stderr)
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
    policy = load_policy(args.policy, args.engine)
    policy.chat_template_kwargs = dict(template_kwargs)  # rendered as the run rendered its prompts

    ran: dict[str, list[Intervention]] = {}

    def keep(name: str, interventions: list[Intervention], hinted_prompts: list[str | None]) -> None:
        ran[name] = interventions  # for the node errors, told after the table
        if kept:
            write_interventions(kept / f"{name}.jsonl", groups, interventions, hinted_prompts)

    finished: dict[str, Any] = {}

    def row_done(name: str, row: dict[str, Any]) -> None:
        finished[name] = row
        write_atomically(partial_path(out), [json.dumps({"policy": policy.name, "configs": finished,
                                                         "skipped": skipped}, indent=2)])

    try:
        with torch_threads(args.threads):
            report = evaluate(groups, policy, runtimes, args.samples, temperature, max_new_tokens,
                              args.seed, annotated, keep, row_done, args.lookahead, args.lookahead_lr, scorer)
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
    print(f"{'config':<16}{'n':>5}{'rescued':>9}{'95% CI':>15}{'vs none':>9}{'95% CI':>16}{'reward':>9}"
          f"{'hint tok':>10}{'reliance':>10}{'withheld':>10}{'fallbacks':>11}{'failures':>10}")
    for name, row in report["configs"].items():
        rely = "" if row["reliance"] is None else f"{row['reliance']:.3f}"
        vs = row["vs_none"]
        paired = f"{100 * vs['difference']:>+9.1f}{points(vs['ci'], '+'):>16}" if vs else " " * 25
        print(f"{name:<16}{row['groups']:>5}{100 * row['rescue_rate']:>8.1f}%{points(row['rescue_ci']):>15}{paired}"
              f"{row['mean_reward']:>9.3f}{row['hint_tokens']:>10.2f}{rely:>10}{row['withheld']:>10}"
              f"{row['llm_fallbacks']:>11}{row['failures']:>10}")
    for warning in report["warnings"]:
        print(f"mentor: warning: {warning}", file=sys.stderr)
    for name, row in report["configs"].items():
        if row["diagnosis_accuracy"]:
            d = row["diagnosis_accuracy"]
            print(f"{name}: first_error_step matches {100 * d['exact']:.1f}% of {d['attempts']} annotated attempts "
                  f"exactly, {100 * d['within_1']:.1f}% within 1")
    if "lookahead" in report:
        la = report["lookahead"]
        print(f"lookahead ({la['steps']} steps at lr {la['lr']:g}, {la['targets']} held-out correct responses): "
              + ", ".join(f"{n} {r['lookahead']:+.4f}" for n, r in report["configs"].items()
                          if r.get("lookahead") is not None) + f"; best {la['best']}")
    o = report["oracle"]
    print(f"oracle {100 * o['rescue_rate']:.1f}%, best single {o['best_single']} {100 * o['best_single_rate']:.1f}%; "
          f"{len(groups)} groups, {len(skipped)} skipped; wrote {out}" + (f" and {html}" if html else "")
          + (f"; each row's interventions in {kept}/NAME.jsonl (`mentor traces view FILE` pages one)" if kept else ""))
    below = [f"{n} {100 * report['configs'][n]['rescue_rate']:.1f}% < {100 * r:.1f}%" for n, r in fail_under.items()
             if report["configs"][n]["rescue_rate"] < r]
    status = max([report_node_errors(ivs, args.allow_node_errors, f"[{name}] ") for name, ivs in ran.items()] + [0])
    if below:
        print("--fail-under: " + "; ".join(below), file=sys.stderr)
        return 1
    return status


def points(interval: list[float], sign: str = "") -> str:
    """A 95% interval of shares, in percentage points: `[3.0, 56.4]` (`sign="+"`: `[-12.5, +40.1]`)."""
    lo, hi = (f"{100 * x:{sign}.1f}" for x in interval)
    return f"[{lo}, {hi}]"


def add_eval_command(sub) -> None:
    p = sub.add_parser("eval", help="measure how well each config's hints rescue a policy's stored failures")
    add_arguments(p)
    p.set_defaults(func=cmd_eval)
