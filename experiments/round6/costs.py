"""What each round-6 row's mentor costs (issue 54 item 5), from the committed files: per row, the analyst's and the
composer's seconds per group (each record's `latency_s`: one group's own wait and work), the row's graph wall time
over its groups (`mentor_s`: the groups ran at once, so this is what a batch of them costs a group), the tokens a
hint adds to the policy's prompt (`hint_tokens`), and the tokens the 1.5B wrote per group (its nodes' answers, counted
with its own tokenizer). Then what a training step pays, here and, as an estimate, on one GPU. Reads only; samples
nothing. No rate is printed: it can run before the last seed's eval.

    .venv/bin/python experiments/round6/costs.py [--dir DIR] [--prompts-per-step 8] [--no-tokens]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from summarise import records, seed_of  # this folder's: the script runs from it

HERE = Path(__file__).parent
NODES = ("root_cause_analyst", "hint_composer")
BIG = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
# The estimate for one H100 (not measured): decoding a 1.5B model in bf16 reads its 3.1 GB of weights per token,
# about 1 ms at 3.35 TB/s, so a sequence writes about 1,000 tokens/s at small batches; prefill is compute-bound,
# 2 x 1.5e9 FLOP a token at about 200 TFLOP/s (20% of the bf16 peak), about 70,000 tokens/s.
GPU_DECODE_TOKENS_S = 1000.0
GPU_PREFILL_TOKENS_S = 70000.0


def node_answer(record: dict, node: str) -> str:
    """The text a node wrote (its output, as JSON), or "" where it ran on rules."""
    for step in record.get("nodes") or []:
        if step.get("node") == node and step.get("backend") == "llm":
            return json.dumps(step.get("output") or {}, ensure_ascii=False)
    return ""


def count(tokenizer, text: str) -> int:
    return len(tokenizer(text)["input_ids"]) if text else 0


def report_tokens(tokenizer, recs: list[dict], per_step: float) -> None:
    """The tokens the row's llm nodes wrote and read a group, and the GPU estimate from them. What a node read is
    estimated as the problem and the group's attempts, once per llm node: its prompt's template is not stored."""
    written, read = [], []
    for rec in recs:
        answers = [node_answer(rec, n) for n in NODES]
        written.append(float(sum(count(tokenizer, a) for a in answers)))
        group = rec.get("prompt", "") + "".join(a.get("completion", "") for a in rec.get("attempts") or [])
        read.append(float(sum(1 for a in answers if a) * count(tokenizer, group)))
    if not any(written):
        return
    decode = per_step * statistics.fmean(written) / GPU_DECODE_TOKENS_S
    prefill = per_step * statistics.fmean(read) / GPU_PREFILL_TOKENS_S
    print(f"  tokens its llm nodes wrote a group: {spread(written)}; read, about: {spread(read)}")
    print(f"  estimate, not measured, one H100 in bf16: about {decode:.1f} s of decoding and {prefill:.2f} s of "
          f"prefill a step, one group after another ({GPU_DECODE_TOKENS_S:.0f} tokens/s decoding, "
          f"{GPU_PREFILL_TOKENS_S:.0f} prefill; a batch of groups costs less)")


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    qs = statistics.quantiles(values, n=10) if len(values) > 1 else [values[0]] * 9
    return f"median {statistics.median(values):.1f}, p90 {qs[-1]:.1f}, mean {statistics.fmean(values):.1f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=HERE, help="the round's folder (default: this one)")
    parser.add_argument("--prompts-per-step", type=int, default=8, help="prompts a training step (default 8)")
    parser.add_argument("--collapse-share", type=float, default=138 / 492,
                        help="share of a step's groups that collapse (default: qwen40's 138 of 492 over all of "
                             "HumanEval; round 6's problems were chosen to collapse, so they overstate it)")
    parser.add_argument("--no-tokens", action="store_true", help="skip counting the 1.5B's tokens (no tokenizer load)")
    args = parser.parse_args(argv)
    found = sorted(seed_of(p) for p in args.dir.glob("eval_*.json"))
    if not found:
        print(f"error: no eval_S.json in {args.dir}", file=sys.stderr)
        return 2
    reports = {s: json.loads((args.dir / f"eval_{s}.json").read_text()) for s in found}
    tokenizer = None
    if not args.no_tokens:
        from transformers import AutoTokenizer

        from mentor.models import resolve
        tokenizer = AutoTokenizer.from_pretrained(resolve(BIG))
    per_step = args.prompts_per_step * args.collapse_share
    print(f"seeds {', '.join(map(str, found))}; a training step of {args.prompts_per_step} prompts with "
          f"{args.collapse_share:.3f} of its groups collapsed has {per_step:.2f} collapsed groups")
    for row in next(iter(reports.values()))["configs"]:
        if row == "none":
            continue
        groups = sum(r["configs"][row]["groups"] for r in reports.values())
        wall = sum(r["configs"][row]["mentor_s"] for r in reports.values())
        tokens = sum(r["configs"][row]["hint_tokens"] * r["configs"][row]["groups"] for r in reports.values())
        recs = [rec for s in found for rec in records(args.dir, s, row)]
        print(f"\n{row}: {groups} groups, {len(recs)} records")
        for node in NODES:
            seconds = [rec["latency_s"][node] for rec in recs if node in (rec.get("latency_s") or {})]
            print(f"  {node} s a group (latency_s): {spread(seconds)}")
        print(f"  graph wall a group (mentor_s / groups): {wall / groups:.1f} s; hint tokens a group: "
              f"{tokens / groups:.1f}")
        print(f"  a training step here: {per_step * wall / groups:.0f} s of mentor for its {per_step:.2f} collapsed"
              f" groups (as this eval batched them)")
        if tokenizer is not None:
            report_tokens(tokenizer, recs, per_step)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
