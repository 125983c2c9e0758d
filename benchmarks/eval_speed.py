"""`mentor eval`'s speed on the lab: 30 collapsed groups x G=8 x 4 rows (none, 1- and 3-digit prefix libraries, the
mentor), against a baseline from the same run: the lab's own batched sampling (mentor.lab.sampling.completions) of
the same groups, 4 times. Prints wall seconds, the ratio and the load average.

    .venv/bin/python benchmarks/eval_speed.py [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from mentor.cli import main as cli
from mentor.lab.hard_failures import lab_failure_rows
from mentor.lab.sampling import completions
from mentor.models.checkpoint import load_checkpoint
from mentor.policy import torch_threads

CONFIGS = Path(__file__).resolve().parent / "eval_configs"


def run(threads: int) -> dict:
    rows = lab_failure_rows(n=40, seed=0)[:30]  # 40 problems give at least 30 collapsed groups (99.8% collapse)
    assert len(rows) == 30
    with tempfile.TemporaryDirectory() as tmp:
        failures = Path(tmp) / "f.jsonl"
        failures.write_text("".join(json.dumps(r) + "\n" for r in rows))
        args = ["eval", str(failures), "--policy", "lab", "--samples", "8", "--threads", str(threads), "-o",
                f"{tmp}/r.json", "--config", f"lib1={CONFIGS / 'lib1_prefix.yaml'}",
                "--config", f"lib3={CONFIGS / 'lib3_prefix.yaml'}",
                "--config", f"mentor={CONFIGS / 'mentor_prefix.yaml'}"]
        t0 = time.perf_counter()
        assert cli(args) == 0
        eval_s = time.perf_counter() - t0
        report = json.loads(Path(f"{tmp}/r.json").read_text())
    t0 = time.perf_counter()
    model, tok = load_checkpoint(str(CONFIGS.parent.parent / "mentor" / "lab" / "policy"))
    problems = [{"prompt": r["prompt"], "answer": r["reference"]["answer"]} for r in rows]
    with torch_threads(threads):
        for seed in range(4):
            completions(model, tok, problems, num_samples=8, temperature=1.0, seed=seed)
    base_s = time.perf_counter() - t0
    return {"eval_s": round(eval_s, 2), "baseline_s": round(base_s, 2), "ratio": round(eval_s / base_s, 2),
            "rows": {n: {k: e[k] for k in ("rescue_rate", "mentor_s", "sample_s")}
                     for n, e in report["configs"].items()},
            "load_average": os.getloadavg(), "cpus": os.cpu_count(), "threads": threads}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    print(json.dumps(run(ap.parse_args().threads), indent=2))
