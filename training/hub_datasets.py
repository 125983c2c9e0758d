"""Dataset factories for the ready configs: a Hugging Face hub dataset mapped to the columns TRL and the mentor read.

Name one in a training YAML (`training/` is on `sys.path` when `training/train_grpo.py` runs):

    dataset_factory: hub_datasets.math_dataset
    dataset_factory_kwargs: {path: agentica-org/DeepScaleR-Preview-Dataset, split: train}

- `math_dataset`: rows with a problem, a final answer and (optionally) a worked solution -> `prompt` (what TRL
  generates from), `answer` (what `mentor.rewards.math_reward` and the mentor check against), `solution` (the
  mentor's worked reference, when the dataset has one) and `problem_id` (the mentor's hint history key).
- `mbpp_dataset`: MBPP rows (`google-research-datasets/mbpp`, configs `full` or `sanitized`) -> `prompt`, `test`
  (the asserts, with their imports and set-up code), `entry_point` (the function the asserts call), `solution` (the
  reference code) and `task_id`/`problem_id`: the columns of the sandboxed `code` task.

This module is not called `datasets.py` on purpose: the script's folder comes first on `sys.path`, and a
`training/datasets.py` would hide the `datasets` library from TRL.

The loading goes through `datasets.load_dataset` (it downloads on first use, then reads the local cache; set
`HF_DATASETS_OFFLINE=1` on machines without a network). The tests stand in for it with in-memory rows of the same
shape, so the mapping is checked without a download.
"""

from __future__ import annotations

import ast
import re
from typing import Any

MATH_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
# No triple backticks in the instruction: the code task reads a fenced block in the prompt as the prompt's code.
CODE_INSTRUCTION = ("Write a Python function for the task below. Answer with the complete function, its imports "
                    "included, in one fenced python code block.")


def _load(path: str, name: str | None, split: str, limit: int | None):
    import datasets

    dataset = datasets.load_dataset(path, name=name, split=split)
    if limit is not None:
        dataset = dataset.select(range(min(limit, len(dataset))))
    return dataset


def _short(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def math_dataset(path: str = "agentica-org/DeepScaleR-Preview-Dataset", split: str = "train", name: str | None = None,
                 problem_column: str = "problem", answer_column: str = "answer",
                 solution_column: str | None = "solution", chat: bool = True,
                 instruction: str = MATH_INSTRUCTION, system_prompt: str | None = None, limit: int | None = None):
    r"""A math dataset for `math_reward` and the mentor's `math` task.

    Args:
        path, split, name: the hub dataset (or a local folder / data files), as `datasets.load_dataset` takes them.
        problem_column, answer_column, solution_column: the source's column names; `solution_column` may be None
            or absent from the source (then there is no `solution` column).
        chat: conversational prompts (a message list; the trainer applies the model's chat template) or plain text.
        instruction: appended to each problem (asks for a `\boxed{}` final answer, which the reward reads first).
        system_prompt: an optional system turn (chat prompts only).
        limit: keep the first `limit` rows (a quick run).

    Rows whose answer is empty are dropped: no completion could earn a reward on them, and the mentor would skip
    them. Returns a `datasets.Dataset` with columns prompt, answer, problem_id, and solution when available.
    """
    source = _load(path, name, split, limit)
    missing = [c for c in (problem_column, answer_column) if c not in source.column_names]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; it has {source.column_names}. Set problem_column/"
                         f"answer_column in dataset_factory_kwargs")
    keep_solution = bool(solution_column) and solution_column in source.column_names
    prefix = _short(path)

    def to_row(row: dict[str, Any], idx: int) -> dict[str, Any]:
        text = f"{str(row[problem_column]).strip()}\n\n{instruction}".strip() if instruction else str(row[problem_column]).strip()
        if chat:
            prompt: Any = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + \
                [{"role": "user", "content": text}]
        else:
            prompt = text
        out = {"prompt": prompt, "answer": "" if row[answer_column] is None else str(row[answer_column]).strip(),
               "problem_id": f"{prefix}-{idx}"}
        if keep_solution:
            out["solution"] = "" if row[solution_column] is None else str(row[solution_column])
        return out

    dataset = source.map(to_row, with_indices=True, remove_columns=source.column_names)
    return dataset.filter(lambda row: bool(row["answer"]))


_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def mbpp_entry_point(code: str, tests: list[str]) -> str:
    """The function the tests call: a top-level function of the reference code whose name the asserts call (the
    first such name in the first assert), else the code's last top-level function."""
    try:
        names = [n.name for n in ast.parse(code).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    except SyntaxError:
        names = re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", code, re.M)
    for test in tests:
        for called in _CALLED.findall(test):
            if called in names:
                return called
    if not names:
        raise ValueError(f"cannot find the entry point: the reference code defines no function:\n{code[:200]}")
    return names[-1]


def mbpp_dataset(path: str = "google-research-datasets/mbpp", name: str | None = "full", split: str = "train",
                 chat: bool = True, shown_tests: int = 1, instruction: str = CODE_INSTRUCTION,
                 limit: int | None = None):
    """MBPP (or any dataset with MBPP's columns) for `code_reward` and the mentor's `code` task.

    Args:
        path, name, split: the hub dataset; `name` is MBPP's config, `full` (columns text, code, test_list,
            test_setup_code) or `sanitized` (prompt, code, test_list, test_imports).
        chat: conversational prompts (a message list) or plain text.
        shown_tests: asserts quoted in the prompt so the policy learns the function's name and signature (MBPP's
            own prompts quote all three; one keeps the others hidden, so they cannot be hard-coded). All asserts
            are in `test`, and the reward runs all of them.
        instruction: put before the task text.
        limit: keep the first `limit` rows.

    Returns a `datasets.Dataset` with columns prompt, test, entry_point, solution, task_id, problem_id.
    """
    source = _load(path, name, split, limit)
    text_column = "text" if "text" in source.column_names else "prompt"
    missing = [c for c in (text_column, "code", "test_list") if c not in source.column_names]
    if missing:
        raise ValueError(f"{path}: no MBPP column(s) {missing}; it has {source.column_names}")
    prefix = _short(path)

    def to_row(row: dict[str, Any]) -> dict[str, Any]:
        code = str(row["code"]).replace("\r\n", "\n")
        tests = [str(t).strip() for t in row["test_list"] if str(t).strip()]
        setup = [*(row.get("test_imports") or []), str(row.get("test_setup_code") or "").replace("\r\n", "\n")]
        test = "\n".join(s for s in [*setup, *tests] if s.strip()) + "\n"
        entry = mbpp_entry_point(code, tests)
        shown = "\n".join(tests[:shown_tests])
        text = f"{instruction}\n\n{str(row[text_column]).strip()}"
        if shown:
            text += f"\nThe function is called `{entry}`; it must pass tests such as:\n{shown}"
        return {"prompt": [{"role": "user", "content": text}] if chat else text, "test": test,
                "entry_point": entry, "solution": code, "task_id": f"{prefix}/{row['task_id']}",
                "problem_id": f"{prefix}/{row['task_id']}"}

    return source.map(to_row, remove_columns=source.column_names)
