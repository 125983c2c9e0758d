"""CHAMP (competition math with step solutions and human hints), read offline from the `champ-dataset`
package's shipped `dataset_files/v0.json` (270 problems, 456 hints, 89 concepts; MIT licence)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from mentor.types import InputError

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
