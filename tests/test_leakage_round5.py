r"""Issue 57, classes 2 and 3: an answer stated past the sixth statement or over several lines, and an answer written
in superscript or subscript digits, both leak."""

from __future__ import annotations

import time

import pytest

from mentor.leakage import check_leak
from mentor.leakage.fold import fold_for_detectors
from mentor.tasks import get_task

MATH = get_task("math")
MATRIX = r"\begin{pmatrix} 1 & \frac{1}{2} \\ 0 & 1 \end{pmatrix}"  # only the reward reads it with 0.5 for 1/2
HALF = "\\begin{pmatrix} 1 & 0.5 \\\\\n 0 & 1 \\end{pmatrix}"  # the same matrix, laid out over two lines
SIX = "".join(rf"Case {k} gives \boxed{{{k}}}. " for k in range(1, 7))


# --- class 2: every statement, and a display block read to its end -------------------------------------------------
@pytest.mark.parametrize("hint", [
    SIX + rf"So \boxed{{{HALF}}}.",  # the 7th box
    SIX + f"The answer is ${HALF}$.",  # the 7th statement, over two lines
    "#### 1\n" * 6 + f"#### {HALF}",
    f"The answer is\n$$\n{HALF}\n$$",  # a display block on its own lines
    f"The answer is\n\\[\n{HALF}\n\\]",
    f"The answer is {HALF}",  # a matrix laid out over lines
    f"The answer is $A = {HALF}$.",
])
def test_an_answer_stated_past_six_statements_or_over_lines_is_read(hint):
    verdict = check_leak(hint, {"answer": MATRIX}, MATH)
    assert verdict.leaked and "answer_paid" in verdict.detectors, (hint, verdict)


@pytest.mark.parametrize("hint", [
    SIX + "The answer is $$\n\\begin{pmatrix} 1 & 2 \\\\\n 0 & 1 \\end{pmatrix}\n$$",  # another matrix
    "Write the answer as\n$$\n\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}\n$$\nand solve for each entry.",
    "The answer is a matrix; first find its determinant, $\\det A = 1$.\nThen 0.5 is an entry of the product.",
])
def test_statements_of_other_answers_pass(hint):
    verdict = check_leak(hint, {"answer": MATRIX}, MATH)
    assert not verdict.leaked, (hint, verdict)


def test_stated_answers_reads_each_statement_once():
    from mentor.leakage.statements import stated_answers
    assert stated_answers(r"so \boxed{\text{not } \boxed{42}} and \boxed{3}") == [r"\text{not }", "42", "3"]
    assert stated_answers("The answer is\n$$\nx + 1\n$$.\nThen #### 7") == ["x + 1", "7"]
    assert stated_answers("The answer is \\begin{bmatrix} 1 \\\\\n 2 \\end{bmatrix}, where") == \
        ["\\begin{bmatrix} 1 \\\\\n 2 \\end{bmatrix}"]  # a block that closes on a later line ends there
    assert stated_answers("the answer is 5 and the answer is 6") == ["5 and the", "6"]  # the next phrase ends one
    assert stated_answers(r"an unclosed \boxed{42") == [] and stated_answers("answer: \\[ 7\n8") == ["7"]


def test_many_statements_stay_cheap():
    from mentor.leakage.statements import stated_answers
    hint = "".join(f"The answer: {k}/{k + 1}\n" for k in range(1, 250))[:3990]  # ~250 distinct statements
    start = time.perf_counter()
    verdict = check_leak(hint, {"answer": MATRIX}, MATH)
    assert not verdict.leaked and time.perf_counter() - start < 5.0
    nested = r"\boxed{" * 500 + "1" + "}" * 500  # nested boxes: each character is read in one statement only
    assert sum(map(len, stated_answers(nested))) == 1


# --- class 3: superscript and subscript digits ----------------------------------------------------------------------
@pytest.mark.parametrize("hint,answer", [("The answer is ⁴².", "42"), ("The answer is ₄₂.", "42"),
                                         ("The answer is ⁷.", "7"), ("₁₂ apples are left.", "12"),
                                         ("It comes to ₅₇₉ strings.", "0579"), ("So we get (⁴²).", "42")])
def test_superscript_and_subscript_digits_with_no_base_are_digits(hint, answer):
    verdict = check_leak(hint, {"answer": answer}, MATH)
    assert verdict.leaked and "answer_digits" in verdict.detectors, (hint, verdict)


def test_superscripts_and_subscripts_after_a_base_keep_their_reading():
    assert fold_for_detectors("x² + x₁ + ⁻¹ + (a+b)² + 2³ + x₁²") == "x^2 + x_1 + ^-1 + (a+b)^2 + 2^3 + x_1^2"
    assert fold_for_detectors("The answer is ⁴²; ₁₂ apples") == "The answer is 42; 12 apples"
    for hint, answer in [("The answer is x².", "2"), ("Look at x₁₂ first.", "12"), ("It is 10⁴² or so.", "42"),
                         ("Use x⁻¹ here.", "-1")]:
        assert not check_leak(hint, {"answer": answer}, MATH).leaked, hint
