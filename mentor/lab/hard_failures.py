"""`mentor failures --source lab -o FILE`: the lab policy's own failures on the hard level, as a `mentor diagnose` /
`mentor eval` input file.

The problems and samples are those of docs/lab.md's measured figures (`python -m mentor.lab`): `--n` held-out hard
problems (seed `--seed`), 8 samples each at T=1 with the same sampling seed. Each row's reference holds `hint1`,
`hint2` and `hint3`, the first 1, 2 and 3 answer digits: three static hint libraries in one file, chosen per config by
`columns: {hint: hint2}`. `--all` keeps the groups that are not collapsed too, so that `mentor eval` sees exactly the
problems of docs/lab.md's rescue rates (which count every problem). The command is mentor/cli/failures.py.
"""

from __future__ import annotations

from pathlib import Path

from mentor.lab import data
from mentor.lab.sampling import completions
from mentor.models.checkpoint import COMMITTED_POLICY, load_checkpoint
from mentor.policy import torch_threads
from mentor.tasks import arithmetic


def lab_failure_rows(policy: str | Path = COMMITTED_POLICY, n: int = 500, seed: int = 0, samples: int = 8,
                 temperature: float = 1.0, keep_all: bool = False, num_threads: int = 1) -> list[dict]:
    model, tok = load_checkpoint(policy)
    problems = data.generate_problems("hard", n, seed=seed, split="heldout")
    with torch_threads(num_threads):
        outs = completions(model, tok, problems, num_samples=samples, temperature=temperature, seed=seed)
    rows = []
    for row, group in zip(problems, outs):
        attempts = [{"completion": c, "reward": arithmetic.reward(c, row["answer"])} for c in group]
        if keep_all or not any(a["reward"] for a in attempts):
            reference = {"answer": row["answer"], "operands": row["operands"],
                         **{f"hint{k}": arithmetic.partial_answer_hint(row["answer"], k) for k in (1, 2, 3)}}
            rows.append({"problem_id": row["problem_id"], "task": "arithmetic", "prompt": row["prompt"],
                         "reference": reference, "attempts": attempts})
    return rows

