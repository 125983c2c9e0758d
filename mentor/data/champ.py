"""CHAMP (competition math with step solutions and human hints), read offline from the `champ-dataset`
package's shipped `dataset_files/v0.json` (270 problems, 456 hints, 89 concepts; MIT licence).

`mentor failures --source champ -o FILE` (mentor/cli/failures.py) writes CHAMP's annotated wrong model
solutions as a `mentor diagnose` / `mentor eval` failures file: one group per solution, its attempt carrying
`annotated_first_wrong_step` (see `annotated_failure_rows`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from mentor.mathtext.steps import split_steps
from mentor.types import ANNOTATED_STEP, InputError

PROMPT_SUFFIX = "\nPlease reason step by step, and put your final answer within \\boxed{}."

# CHAMP writes answers as prose; these give a short canonical form a verifier can compare.
_ALTERNATIVES = [(r"^(.*?), or (?:equivalently|an equivalent form such as) (.*)$", 2),
                 (r"^(.*?), or approximately (.*)$", 1)]
_WRAPPERS = [r"^(.*?) is the only possible value$", r"^The limit exists and is equal to (.*)$",
             r"^The only possible value for the limit is (.*)$",
             r"^(-?\d+|n) (?:inequalities|values|roots|pairs|times|numbers?)$", r"^Exactly (one)(?: \w+)?$"]


def champ_path() -> Path:
    """Where the champ-dataset package keeps v0.json (raises InputError if it is not installed)."""
    try:
        import champ_dataset
    except ImportError as exc:
        raise InputError("CHAMP needs the champ-dataset package: pip install 'mentor-rl[data]'") from exc
    return Path(champ_dataset.__file__).parent / "dataset_files" / "v0.json"


def canonical_answer(raw: str) -> tuple[str, list[str]]:
    """(short answer, other forms) for a CHAMP answer: `C(10, 5), or equivalently 252` -> (`252`,
    [`C(10, 5)`, raw]); `0 is the only possible value` -> (`0`, [raw]); `376 and 625` -> (`376, 625`, [raw])."""
    answer, aliases = raw.strip(), []
    for pattern, keep in _ALTERNATIVES:
        m = re.match(pattern, answer)
        if m:
            answer, other = m.group(keep), m.group(3 - keep)
            aliases.append(other)
            break
    answer = re.sub(r"\s*\((?:i\.e\.,|none|no such).*\)$", "", answer)
    for pattern in _WRAPPERS:
        m = re.match(pattern, answer)
        if m:
            answer = m.group(1)
            break
    answer = {"one": "1"}.get(answer, answer)
    if re.fullmatch(r"-?\d+(?:(?:, | and |, and )-?\d+)+", answer):
        answer = re.sub(r",? and ", ", ", answer)
    if answer != raw:
        aliases.append(raw)
    return answer, aliases


@lru_cache(maxsize=2)
def _load(path: str) -> tuple[dict[str, Any], ...]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    hints, concepts = data["hints"], data["concepts"]
    rows = []
    for pid, p in data["problems"].items():
        steps = [s["_text"].strip() for s in p["solution"]["steps"]]
        answer, aliases = canonical_answer(p["_answer"])
        rows.append({
            "problem_id": pid,
            "category": p["category"],
            "problem": p["_text"],
            "prompt": p["_text"] + PROMPT_SUFFIX,
            "answer": answer,
            "answer_text": p["_answer"],
            "answer_aliases": aliases,
            "solution": "\n".join(steps),
            "solution_steps": steps,
            "hints": [hints[c]["_text"] for c in p["ch_list"] if c in hints],
            "concepts": [concepts[c]["_text"] for c in p["ch_list"] if c in concepts],
        })
    return tuple(rows)


def load_champ(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The 270 CHAMP problems, one dict each, without network access (about 1 s the first time, cached).

    Args:
        path: v0.json to read (default: the copy inside the installed champ-dataset package).

    Returns:
        Rows with `problem_id`, `category`, `problem` (the text), `prompt` (the text plus a request to box
        the answer), `answer` (short canonical form), `answer_text` (CHAMP's own wording),
        `answer_aliases` (other accepted forms), `solution` (steps joined by newlines), `solution_steps`,
        `hints` (human-written hints) and `concepts` (the concepts the problem uses).
    """
    return [dict(r) for r in _load(str(path or champ_path()))]


def step_at(text: str, offset: int) -> int:
    """The 1-based step of `text` (its steps as `mentor.mathtext.steps.split_steps` makes them, the math verifier's and the
    analyst's splitting) that holds character `offset`: the last step starting at or before it."""
    pos, number = 0, 1
    for i, step in enumerate(split_steps(text)):
        start = text.find(step, pos)
        if start > offset:
            break
        number, pos = i + 1, start + len(step)
    return number


def annotated_step(pid: str, setting: str, annotation: Any) -> int | None:
    """The first wrong step of one of CHAMP's `fws_annotations` (a span of the model's `text`, `start_idx` to
    `end_idx`, or both null for "no mistake"), as `step_at` numbers it from the span's first non-blank character;
    None for "no mistake". A malformed annotation is an InputError naming it."""
    where = f"problems.{pid}.fws_annotations[{setting!r}]"
    if not isinstance(annotation, dict) or not isinstance(annotation.get("text"), str):
        raise InputError(f"{where}: needs a string 'text' (the model's solution); is this CHAMP's v0.json?")
    text, start, end = annotation["text"], annotation.get("start_idx"), annotation.get("end_idx")
    if start is None and end is None:
        return None
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise InputError(f"{where}: start_idx {start!r} and end_idx {end!r} must both be null or offsets into its "
                         f"text with 0 <= start_idx < end_idx <= {len(text)}")
    span = text[start:end]
    return step_at(text, start + len(span) - len(span.lstrip()))


def annotated_failure_rows(path: str | Path | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """CHAMP's model solutions that people marked wrong and whose final answer the math verifier also scores 0, as
    failed groups (`mentor diagnose` rows), one solution each; and counts of the annotated solutions left out.

    CHAMP annotates two solutions per problem, one model per problem (GPT-3.5, GPT-4, GPT-4 Turbo or PaLM 2
    Medium), in two prompt settings: `No C w/o H` (the bare problem) and `Direct C w/ H` (with its concepts and
    hints). Each row's `problem_id` is `<CHAMP id>|<model>|<setting>`, its prompt the CHAMP prompt, its reference the
    answer, aliases, worked solution and concepts, and its one attempt `{"completion": <the model's text>,
    "reward": 0.0, "annotated_first_wrong_step": <step>}` (see `annotated_step`).

    Returns:
        the rows, and `{"annotated": all annotations, "no_mistake": marked correct, "right_answer": marked wrong
        but with a final answer the verifier accepts (the mentor never sees those as failures)}`.
    """
    from mentor.tasks import get_task

    source = str(path or champ_path())
    try:
        problems = json.loads(Path(source).read_text(encoding="utf-8"))["problems"]
        rows = {r["problem_id"]: r for r in _load(source)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{source}: not CHAMP's v0.json ({type(e).__name__}: {str(e)[:200]}); give the file "
                         f"champ-dataset ships (the default)") from None
    task, out, counts = get_task("math"), [], {"annotated": 0, "no_mistake": 0, "right_answer": 0}
    for pid, problem in problems.items():
        row = rows[pid]
        reference = {"answer": row["answer"], "answer_aliases": row["answer_aliases"], "solution": row["solution"],
                     "concepts": row["concepts"]}
        for setting, annotation in (problem.get("fws_annotations") or {}).items():
            counts["annotated"] += 1
            step = annotated_step(pid, setting, annotation)
            if step is None:
                counts["no_mistake"] += 1
            elif task.score(annotation["text"], reference) > 0:
                counts["right_answer"] += 1
            else:
                out.append({"problem_id": f"{pid}|{setting}", "task": "math", "prompt": row["prompt"],
                            "reference": reference,
                            "attempts": [{"completion": annotation["text"], "reward": 0.0, ANNOTATED_STEP: step}]})
    return out, counts

