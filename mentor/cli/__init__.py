"""The `mentor` command: diagnose stored failures, write failures files, draw the graph, run the demo, view traces.

This folder is the command line: the entry point and the commands with no layer of their own (`diagnose` here,
`failures` in failures.py, `graph copy` in graph_copy.py). `mentor eval`, `mentor demo` and `mentor traces` keep their
arguments beside their code (mentor/evaluation/, mentor/lab/, mentor/traces/viewer/); this module adds them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mentor.command_files import read_failures
from mentor.summary import summarise
from mentor.types import InputError, Intervention, Terminated


def summary_text(interventions: list[Intervention], structured=None) -> str:
    """Error-class counts, hints, withheld, leaks blocked, fallbacks and latency, as printed text.

    Latency covers the groups that finished: a group cut off by the timeout or an error has no full run to time,
    so it is counted apart (with the time its records show) rather than as a short one. `structured` is the
    runtime's `mentor.llm.client.StructuredOutput`, when it has one."""
    counts = summarise(interventions)
    latency = sorted(sum(i.latency_s.values()) for i in interventions if i.error is None)
    cut = [i for i in interventions if i.error is not None]
    lines = [
        f"groups: {counts.groups}",
        f"hints: {counts.hinted}" + (f" ({counts.format_only} format-only)" if counts.format_only else "")
        + f"  withheld: {counts.withheld}  leaks blocked: {counts.leaks_blocked}"
        f"  llm fallbacks: {counts.llm_fallbacks}  failed: {counts.failures} ({counts.timed_out} timed out)",
        "tiers: " + ", ".join(f"{t}: {c}" for t, c in sorted(counts.tiers.items())),
        "error classes: " + ", ".join(f"{c}: {k}" for c, k in counts.classes.most_common()),
        (f"latency per finished group ({len(latency)}): median {1000 * latency[len(latency) // 2]:.1f} ms, "
         f"p95 {1000 * latency[min(len(latency) - 1, int(0.95 * len(latency)))]:.1f} ms, "
         f"max {1000 * latency[-1]:.1f} ms (mean {1000 * sum(latency) / len(latency):.1f} ms)")
        if latency else "latency per finished group: none finished",
    ]
    if cut:
        lines.append(f"failed or timed-out groups ({len(cut)}), not in the latency above: "
                     + "; ".join(f"{i.problem_id}: {i.error[:80]}" for i in cut[:3]) + (" ..." if len(cut) > 3 else ""))
    if structured is not None and structured.fallbacks:
        lines.append(f"structured-output fallbacks: {structured.fallbacks} request(s) found it unusable; structured "
                     f"output off ({structured.off_reason[:120]})")
    return "\n".join(lines)


def cmd_diagnose(args) -> int:
    """Each intervention goes to `-o`.partial as it finishes; `-o` is written whole at the end (mentor/output.py), so
    Ctrl-C keeps what finished and an existing `-o` is never half-replaced."""
    from tqdm import tqdm

    from mentor.api import Mentor
    from mentor.output import ResultLines, check_output, partial_path
    from mentor.runtime.node_errors import report_node_errors
    from mentor.runtime.versions import describe
    from mentor.traces.jsonl import intervention_line

    out, failures = Path(args.output), Path(args.failures)
    check_output(out, inputs=[failures])  # before any group runs, not after
    check_output(partial_path(out), f"-o {out}: its partial file", inputs=[failures])  # opened first, emptied
    groups, problems = read_failures(failures)
    for problem in problems:
        print(problem, file=sys.stderr)
    mentor = Mentor.from_config(args.config)
    print(describe(mentor.runtime.versions), file=sys.stderr)  # which graph, prompts and backends run
    results = ResultLines(out)

    def done(group, intervention) -> None:
        results.add(intervention_line(group, intervention))
        bar.update()

    try:
        with tqdm(total=len(groups), desc="diagnosing", unit="group") as bar:
            interventions = mentor.runtime.run(groups, done, clock="group")  # what Mentor.diagnose does
    except KeyboardInterrupt:
        kept = results.stop()
        print(f"mentor: interrupted: {kept} of {len(groups)} groups finished; their interventions are in "
              f"{results.partial} ({out} is left as it was)", file=sys.stderr)
        return 130
    results.complete(intervention_line(g, i) for g, i in zip(groups, interventions))
    print(summary_text(interventions, mentor.runtime.structured))
    print(f"wrote {len(interventions)} interventions to {out}" + (f"; skipped {len(problems)} bad lines" if problems else ""))
    return report_node_errors(interventions, args.allow_node_errors)


def cmd_graph_draw(args) -> int:
    from mentor.config import MentorConfig
    from mentor.runtime import load_graph

    config = MentorConfig.load(args.config)
    drawable = load_graph(config.graph, config).get_graph()
    if args.format == "png":
        if not args.output:
            raise InputError("--format png needs -o FILE.png")
        try:
            drawable.draw_png(args.output)  # graphviz, offline; draw_mermaid_png would call a web service
        except ImportError:
            raise InputError("--format png needs pygraphviz: pip install 'mentor-rl[draw]'") from None
        print(f"wrote {args.output}")
        return 0
    try:
        text = drawable.draw_mermaid() if args.format == "mermaid" else drawable.draw_ascii()
        if args.format == "ascii":  # grandalf lays out an acyclic graph: the loops would be lost without a word
            loops = back_edges(drawable)
            text += "".join(f"\n{e.source} {'-.->' if e.conditional else '-->'} {e.target}   (loops back: not drawn above)"
                            for e in loops)
    except ImportError:
        raise InputError("--format ascii needs grandalf: pip install 'mentor-rl[draw]'") from None
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}")
    else:
        print(text)
    return 0


def back_edges(drawable) -> list:
    """The edges of a drawable graph that close a loop (depth-first from its first node): the leak retry's
    leakage_checker -> hint_composer in the mentor graph."""
    out: dict[str, list] = {}
    for edge in drawable.edges:
        out.setdefault(edge.source, []).append(edge)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found = []

    def visit(node: str) -> None:
        state[node] = 1
        for edge in out.get(node, []):
            if state.get(edge.target) == 1:
                found.append(edge)
            elif edge.target not in state:
                visit(edge.target)
        state[node] = 2

    for node in drawable.nodes:
        if node not in state:
            visit(node)
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mentor", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    diagnose = sub.add_parser("diagnose", help="replay stored failed groups through the mentor graph")
    diagnose.add_argument("failures", help="a JSONL file (one failed group per line), a run directory or its "
                                           "traces.sqlite")
    diagnose.add_argument("-o", "--output", required=True, help="JSONL file for the interventions")
    diagnose.add_argument("--config", help="mentor config YAML (default: rules backend everywhere)")
    diagnose.add_argument("--allow-node-errors", action="store_true",
                          help="exit 0 even when a group failed from an exception in a node (default: exit 1)")
    diagnose.set_defaults(func=cmd_diagnose)

    graph = sub.add_parser("graph", help="the mentor graph").add_subparsers(dest="graph_command", required=True)
    draw = graph.add_parser("draw", help="draw the graph, offline")
    draw.add_argument("--format", choices=("mermaid", "ascii", "png"), default="mermaid")
    draw.add_argument("-o", "--output", help="file to write (default: print)")
    draw.add_argument("--config", help="mentor config YAML naming the graph")
    draw.set_defaults(func=cmd_graph_draw)
    from mentor.cli.graph_copy import cmd_graph_copy

    copy = graph.add_parser("copy", help="write an editable copy of the installed graph and prompts, and a "
                                         "mentor.yaml that runs it")
    copy.add_argument("folder", metavar="DIR", help="folder to write graphs/, prompts/ and mentor.yaml into")
    copy.set_defaults(func=cmd_graph_copy)

    from mentor.cli.failures import add_failures_command
    from mentor.evaluation.command import add_eval_command
    from mentor.lab.demo_cli import add_demo_command
    from mentor.traces.viewer import add_traces_command

    add_demo_command(sub)
    add_eval_command(sub)
    add_failures_command(sub)
    add_traces_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as e:
        print(f"mentor: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # before any result: nothing to keep (the commands keep theirs themselves)
        print("mentor: interrupted", file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130  # 128 + the signal, as a shell reports one

