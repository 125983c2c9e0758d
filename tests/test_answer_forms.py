"""The conformance table of MATH and GSM8K answer forms (tests/data/math_answer_forms.tsv), both sides.

Each row: a reference `answer`, the right completion, two wrong ones and a hedge (the boxed contents), and a `hint`
that paraphrases the answer (or blank). `math_reward` must pay the right completion only; TRL's
`trl.rewards.accuracy_reward` (math-verify) is the reference beside it, its scores committed in the `trl` column (one
digit per completion) and re-checked live on a sample; every place where they differ is listed in docs/leakage.md
with its reason. Every form the reward pays, stated in a hint, is caught by the leakage checker.

Regenerate the `trl` column after editing the table: `PYTHONPATH=. .venv/bin/python tests/test_answer_forms.py`
(`MEASURE_ROWS`, rows kept in this file, commit theirs by hand).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from mentor.leakage import check_leak
from mentor.rewards import math_reward
from mentor.tasks import get_task

TABLE = Path(__file__).parent / "data" / "math_answer_forms.tsv"
DOCS = Path(__file__).parent.parent / "docs" / "leakage.md"
COMPLETIONS = ("right", "wrong1", "wrong2", "hedge")
EXPECTED = [1.0, 0.0, 0.0, 0.0]
KINDS = {"money", "percent", "units", "degrees", "separators", "text", "intervals", "sets", "matrices", "constants",
         "roots", "mixed", "negatives"}  # the kinds the table must cover (it has more)


def read_table() -> list[dict[str, str]]:
    with TABLE.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def completion(boxed: str) -> str:
    return f"Working it out step by step. The final answer is $\\boxed{{{boxed}}}$."


def trl_scores(row: dict[str, str]) -> list[float | None]:
    """TRL's accuracy_reward on the row's four completions, the reference passed as a MATH `solution` would hold it."""
    from trl.rewards import accuracy_reward

    return accuracy_reward([[{"role": "assistant", "content": completion(row[k])}] for k in COMPLETIONS],
                           [f"$\\boxed{{{row['answer']}}}$"] * len(COMPLETIONS))


def committed_trl(row: dict[str, str]) -> list[float | None]:
    return [None if c == "-" else float(c) for c in row["trl"]]  # `-`: TRL cannot parse the reference


# Answers of measures (issue 57, class 4: each right form here scored 0, read one way as the reference and another
# as the completion), as rows of the table; their `trl` is committed here, checked live with the table's sample.
MEASURE_ROWS = [dict(zip(("kind", "answer", "right", "wrong1", "wrong2", "hedge", "hint", "trl"), row)) for row in [
    ("units", r"(x+1)\text{ cm}", r"(x+1)\text{ cm}", r"(x+2)\text{ cm}", r"(x-1)\text{ cm}",
     r"(x+1)\text{ cm or }(x+2)\text{ cm}", "The side is x+1 centimetres long.", "1001"),
    ("units", r"5\text{ cm and }7\text{ cm}", r"5\text{ cm and }7\text{ cm}", "5 cm and 8 cm", r"5\text{ cm}",
     r"5\text{ cm and }7\text{ cm or }8\text{ cm}", "", "1011"),
    ("units", r"5\text{ cm and }7\text{ cm}", "7 cm and 5 cm", r"7\text{ cm and }8\text{ cm}", r"12\text{ cm}",
     r"7\text{ cm or }5\text{ cm}", "The answer is 5 cm and 7 cm.", "0000"),
    ("units", r"5 \text{ ft }3 \text{ in}", r"5 \text{ ft }3 \text{ in}", r"5 \text{ ft }4 \text{ in}",
     r"3 \text{ ft }5 \text{ in}", r"5 \text{ ft }3 \text{ in or }5 \text{ ft }4 \text{ in}",
     "You should end up with 5 feet 3 inches.", "1101"),
    ("units", r"5 \text{ ft }3 \text{ in}", r"5 \text{ feet }3 \text{ inches}", r"3 \text{ feet }5 \text{ inches}",
     r"4 \text{ feet }3 \text{ inches}", r"4 \text{ feet or }5 \text{ feet }3 \text{ inches}", "", "1000"),
    ("units", r"4\text{ cm by }6\text{ cm}", r"4\text{ cm by }6\text{ cm}", r"4\text{ cm by }7\text{ cm}",
     r"24\text{ cm}", r"4\text{ cm by }6\text{ cm or }6\text{ cm by }8\text{ cm}", "", "1101"),
    ("units", r"4\text{ cm by }6\text{ cm}", "4 by 6", "5 by 6", "4 by 7", "4 by 6 or 6 by 8",
     "The rectangle is 4 cm by 6 cm.", "0000"),
    ("units", r"2\text{ hours and }30\text{ minutes}", r"30\text{ minutes and }2\text{ hours}",
     r"3\text{ hours and }30\text{ minutes}", r"30\text{ hours and }2\text{ minutes}",
     r"3\text{ hours or }2\text{ hours and }30\text{ minutes}", "", "0000"),
]]
ROWS = read_table() + MEASURE_ROWS


def test_the_table_covers_the_forms():
    assert len(ROWS) >= 150
    assert KINDS <= {r["kind"] for r in ROWS}
    assert all(r[k] for r in ROWS for k in ("answer", *COMPLETIONS)) and all(re.fullmatch("[01-]{4}", r["trl"]) for r in ROWS)
    assert len({(r["answer"], r["right"]) for r in ROWS}) == len(ROWS)  # each row a different form


def test_math_reward_pays_the_right_completion_only():
    completions = [completion(r[k]) for r in ROWS for k in COMPLETIONS]
    scores = math_reward(completions, [r["answer"] for r in ROWS for _ in COMPLETIONS])
    wrong = [(r["answer"], [r[k] for k in COMPLETIONS], scores[4 * i:4 * i + 4]) for i, r in enumerate(ROWS)
             if scores[4 * i:4 * i + 4] != EXPECTED]
    assert not wrong, wrong


def _documented_disagreements() -> set[tuple[str, str]]:
    section = DOCS.read_text().split("## The reward beside TRL's accuracy_reward", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", section, re.M))


def test_every_disagreement_with_accuracy_reward_is_listed_in_the_docs():
    differ = {(r["answer"], r[k]) for r in ROWS for k, trl in zip(COMPLETIONS, committed_trl(r))
              if trl != EXPECTED[COMPLETIONS.index(k)]}  # math_reward scores EXPECTED (the test above)
    assert differ == _documented_disagreements()


# Every row where the two differ, and every 8th other row: about 40 rows, 160 calls into math-verify.
SAMPLE = [r for i, r in enumerate(ROWS) if committed_trl(r) != EXPECTED or i % 8 == 0]


def test_the_committed_trl_column_is_what_accuracy_reward_gives():
    live = {r["answer"] + " | " + r["right"]: trl_scores(r) for r in SAMPLE}
    assert live == {r["answer"] + " | " + r["right"]: committed_trl(r) for r in SAMPLE}


def test_measures_are_paid_boxed_as_written_and_wrong_ones_are_not():
    """Issue 57, class 4: an answer with units, boxed exactly as the reference writes it, is paid (TRL's
    accuracy_reward pays each); a wrong value with the same units is not."""
    right = [r"(x+1)\text{ cm}", r"5\text{ cm and }7\text{ cm}", r"5 \text{ ft }3 \text{ in}",
             r"4\text{ cm by }6\text{ cm}"]
    wrong = [(r"(x+1)\text{ cm}", r"(x+2)\text{ cm}"), (r"5\text{ cm and }7\text{ cm}", "5 cm and 8 cm"),
             (r"5 \text{ ft }3 \text{ in}", r"3 \text{ ft }5 \text{ in}"),
             (r"4\text{ cm by }6\text{ cm}", r"4\text{ cm}")]  # math-verify pays `4 cm`: it reads the first
    pairs = [(a, a) for a in right] + wrong
    scores = math_reward([completion(got) for _, got in pairs], [answer for answer, _ in pairs])
    assert scores == [1.0] * len(right) + [0.0] * len(wrong), list(zip(pairs, scores))


@pytest.mark.parametrize("with_task", [True, False], ids=["math_task", "generic"])
def test_every_form_the_reward_pays_is_caught_when_a_hint_states_it(with_task):
    """The right completion's answer, stated in a hint, leaks: caught by the math task's checks (its `answer_paid`
    included), and the table's paraphrases (`42 degrees`, `5 hundreds, 7 tens and 9 ones`) by the generic detectors
    alone."""
    task = get_task("math")
    hints = [(r["answer"], r["hint"]) for r in ROWS if r["hint"]]
    if with_task:
        hints += [(r["answer"], f"The answer is ${r['right']}$.") for r in ROWS]
    missed = [(a, h) for a, h in hints if not check_leak(h, {"answer": a}, task if with_task else None).leaked]
    assert not missed, missed


def _write_trl_column() -> None:
    rows = read_table()
    for r in rows:
        r["trl"] = "".join("-" if s is None else str(int(s)) for s in trl_scores(r))
    with TABLE.open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        out.writeheader()
        out.writerows(rows)


if __name__ == "__main__":
    _write_trl_column()
