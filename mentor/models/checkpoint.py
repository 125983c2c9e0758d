"""Loading a policy checkpoint outside training, and the lab's committed one. `mentor eval`, mentor/data (a policy's own
failures) and the CPU lab (mentor/lab/) share them; they live here so that evaluation and data need not import the
lab."""

from __future__ import annotations

import os
from pathlib import Path

# The addition lab's default policy (seed 0, default hyper-parameters), committed so that a fresh machine need not
# pre-train: `python -m mentor.lab --commit` rebuilds it; `mentor eval --policy lab` and `mentor failures --source lab`
# load it. Named here, below the lab, so that evaluation finds it without importing mentor.lab.
COMMITTED_POLICY = Path(__file__).resolve().parent.parent / "lab" / "policy"


def load_checkpoint(path: str | os.PathLike):
    """`(model, tokenizer)` from a checkpoint directory, in eval mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model.eval()
    return model, tokenizer
