"""Is SDPO's self-teacher a better policy than its student in the composed lab? See docs/evidence/sdpo42.md, "Why the
SDPO arms unlearned".

SDPO distils the student towards the policy itself, reading a reprompt: the plain prompt plus a demonstration or
feedback, in the templates of `SDPOConfig`. That helps only where the policy, given the reprompt, answers better than
without it. This prints, per pre-training seed (the blocks' policies at step 0), greedy accuracy on the blocks' 1,000
held-out problems of:

- `student`: the plain prompt (the held-out figure);
- `hinted`: the lab's hint line with the one-step hint of step 1 (what a GRPO re-attempt reads);
- `feedback_trl` / `feedback_lab`: SDPO's reprompt with that same hint as feedback, in TRL's default templates / in
  the lab's (`LAB_SDPO_TEMPLATES`), as the teacher of `sdpo_library` / `sdpo_mentor` reads it;
- `solution_trl` / `solution_lab`: SDPO's reprompt with the right answer as its demonstration (the teacher of `sdpo`).

No training, no sampling: greedy decoding of fixed policies, so one run is the figure (a minute or two once the
policies are cached; a missing one is pre-trained first).

    .venv/bin/python benchmarks/sdpo_teacher.py [--seeds 0-5] [--problems 1000]
"""

from __future__ import annotations

import argparse
import statistics


def reprompt(templates: dict[str, str], prompt: str, solution: str = "", feedback: str = "") -> str:
    """The teacher's prompt text as SDPO's context builder makes it for a plain-text prompt."""
    solution_text = templates["solution_template"].format(successful_previous_attempt=solution) if solution else ""
    feedback_text = templates["feedback_template"].format(feedback_raw=feedback) if feedback else ""
    return templates["reprompt_template"].format(prompt=prompt, solution=solution_text, feedback=feedback_text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-5", help="pre-training seeds, as ranges and lists (default: 0-5)")
    parser.add_argument("--problems", type=int, default=1000, help="held-out problems (default: 1000, the blocks')")
    args = parser.parse_args()

    import torch
    from trl.experimental.sdpo import SDPOConfig

    from mentor.lab import composed_demo as cd
    from mentor.lab.demo_cli import parse_seed_list
    from mentor.lab.sampling import completions, evaluate
    from mentor.models.checkpoint import load_checkpoint
    from mentor.tasks.composed import response, step_hint

    torch.set_num_threads(1)
    defaults = SDPOConfig.__dataclass_fields__
    trl = {name: defaults[name].default for name in cd.LAB_SDPO_TEMPLATES}
    lab = cd.LAB_SDPO_TEMPLATES
    problems, seeds = cd.heldout(args.problems), parse_seed_list("--seeds", args.seeds)

    def hint(row) -> str:
        return step_hint([int(c) for c in row["answer"]], 1)

    def answer(row) -> str:  # a successful rollout as SDPO decodes it: the completion, EOS dropped
        return response([int(c) for c in row["answer"]])

    columns = {
        "student": lambda row: row["prompt"],
        "feedback_trl": lambda row: reprompt(trl, row["prompt"], feedback=hint(row)),
        "feedback_lab": lambda row: reprompt(lab, row["prompt"], feedback=hint(row)),
        "solution_trl": lambda row: reprompt(trl, row["prompt"], solution=answer(row)),
        "solution_lab": lambda row: reprompt(lab, row["prompt"], solution=answer(row)),
    }
    first = problems[0]
    model, tokenizer = load_checkpoint(cd.policy(seeds[0], {}))
    print(f"one problem ({first['prompt']!r}, answer {answer(first)!r}): the prompt and the first seed's greedy answer")
    for name, build in columns.items():
        [[out]] = completions(model, tokenizer, [dict(first, prompt=build(first))], lab="composed")
        print(f"  {name}: {build(first)!r} -> {out!r}")
    print(f"\ngreedy accuracy on {len(problems)} held-out problems, step-0 policies:")
    print("seed | student | hinted | " + " | ".join(n for n in columns if n != "student"))
    table: dict[str, list[float]] = {}
    for seed in seeds:
        model, tokenizer = load_checkpoint(cd.policy(seed, {}))
        row = {"student": evaluate(model, tokenizer, problems, lab="composed"),
               "hinted": cd.hinted_accuracy(model, tokenizer, problems, 1)}
        for name, build in columns.items():
            if name != "student":
                row[name] = evaluate(model, tokenizer, [dict(p, prompt=build(p)) for p in problems], lab="composed")
        for name, value in row.items():
            table.setdefault(name, []).append(value)
        print(f"{seed} | " + " | ".join(f"{v:.3f}" for v in row.values()), flush=True)
    print("mean | " + " | ".join(f"{statistics.mean(v):.3f}" for v in table.values()))


if __name__ == "__main__":
    main()
