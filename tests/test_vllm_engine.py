"""`--engine vllm` (mentor/evaluation/vllm_engine.py) on vLLM's CPU build (`make test-vllm-engine`): `mentor failures
--source policy` samples the real SmolLM2-135M-Instruct through the offline `LLM`, in a `mentor` process of its own
(vLLM spawns its engine, so the `LLM` is built under `__main__`). One engine start of its own (minutes on 2 cores,
which CI's 30 do not have: `make test-vllm` leaves it out)."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.vllm, pytest.mark.vllm_engine]


def test_the_vllm_engine_writes_the_groups_generate_would_with_the_budget_kept(smollm2, tmp_path):
    out = tmp_path / "failures.jsonl"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
    run = subprocess.run([sys.executable, "-m", "mentor.cli", "failures", "--source", "policy", "--policy", smollm2,
                          "--family", "sum", "--n", "3", "--samples", "4", "--max-new-tokens", "8", "--all",
                          "--engine", "vllm", "-o", str(out)], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and all(len(r["attempts"]) == 4 for r in rows)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    lengths = [len(tokenizer(a["completion"], add_special_tokens=False)["input_ids"]) for r in rows
               for a in r["attempts"]]
    assert max(lengths) <= 9 and len({a["completion"] for r in rows for a in r["attempts"]}) > 1  # T=1: draws differ
    assert "3 groups to" in run.stdout or "wrote 3 groups" in run.stdout
