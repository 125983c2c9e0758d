"""The leakage checker in both directions: leaks caught in every form, clean hints passed."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import pytest

import mentor.tasks
from mentor.leakage import check_leak
from mentor.leakage.checker import DETECTORS
from mentor.leakage.number_words import word_numbers
from mentor.leakage.overlap import solution_overlap
from mentor.mathtext.answer import analyse_answer
from mentor.mathtext.value import expression_value
from mentor.tasks.base import Task
from mentor.types import LeakVerdict

SOLUTION = "\n".join([
    "Let x_n, y_n, z_n be the number of length-n strings that end with digit 1, 2, 3 respectively.",
    "Thus, we have x_1=y_1=z_1=1.",
    "For a string ending with 1, we can append 1 and 2; for a string ending with 2, we can append 1, 2 and 3; "
    "for a string ending with 3, we can append 2 and 3.",
    "Thus, we have x_(n+1)=x_n+y_n, y_(n+1)=x_n+y_n+z_n, and z_(n+1)=y_n+z_n.",
    "Starting from (1, 1, 1), we have the sequence of (x_n, y_n, z_n) to be (1, 1, 1), (2, 3, 2), (5, 7, 5), "
    "(12, 17, 12), (29, 41, 29), (70, 99, 70).",
    "Thus, in total, there are x_6+y_6+z_6=70+99+70=239 such strings.",
])

LEAKS = [  # (hint, answer, detector expected among those that fire)
    ("The answer is 579.", "0579", "answer_digits"),
    ("Write it as 0579.", "0579", "answer_digits"),
    ("Its digits are 5 7 9.", "0579", "answer_digits"),
    ("There are 1,234 of them.", "1234", "answer_digits"),
    ("There are 1 234 of them.", "1234", "answer_digits"),
    ("Half of it: 0.5", "1/2", "answer_digits"),
    ("It is .50 in the end.", "1/2", "answer_digits"),
    ("A 50% chance.", "1/2", "answer_digits"),
    ("Roughly 5.79e2 strings.", "579", "answer_digits"),
    (r"Roughly $5.79 \times 10^{2}$ strings.", "579", "answer_digits"),
    ("About 0.577 at best.", "sqrt(3)/3", "answer_digits"),
    ("About 35.7% of the cases.", "5/14", "answer_digits"),
    ("The count is -12.", "-12", "answer_digits"),
    ("One of them is 625.", "376 and 625", "answer_digits"),
    ("Use 1176470588235294 as a start.", "(20*10^15-2)/17", "answer_digits"),
    ("There are five hundred seventy-nine.", "579", "answer_words"),
    ("There are five hundred and seventy-nine.", "579", "answer_words"),
    ("Twelve of them remain.", "12", "answer_words"),
    ("Its digits are five seven nine.", "579", "answer_words"),
    ("About two thirds of them.", "2/3", "answer_words"),
    ("So the minimum is two.", "2", "answer_words"),
    ("You should end up with minus three.", "-3", "answer_words"),
    (r"So it is $\frac{1}{2}$.", "1/2", "answer_math_equiv"),
    (r"So it is $\dfrac12$.", "0.5", "answer_math_equiv"),
    (r"So it is $\frac{2}{4}$.", "1/2", "answer_math_equiv"),
    ("Compute 70+99+70.", "239", "answer_math_equiv"),
    ("Compute 70 + 99 + 70.", "239", "answer_math_equiv"),
    ("It is just 2^{10}.", "1024", "answer_math_equiv"),
    ("There are C(10, 5) of them.", "252", "answer_math_equiv"),
    (r"There are $\binom{10}{5}$ of them.", "252", "answer_math_equiv"),
    ("The answer is 2^{n-1}.", "2^(n-1)", "answer_math_equiv"),
    (r"Show that it equals $\frac{2^n}{2}$.", "2^(n-1)", "answer_math_equiv"),
    ("We get (n^2-3n)/2 diagonals.", "n(n-3)/2", "answer_math_equiv"),
    (r"It is $1/\sqrt{3}$.", "sqrt(3)/3", "answer_math_equiv"),
    (r"The answer is $\frac{a^{2}}{3} + \frac{2 b}{3 a}$.", "(a^3+2b)/(3a)", "answer_math_equiv"),
    # LaTeX functions: \sin^2 x, \log_2 8
    (r"1-2\sin^2(x)", r"\cos(2x)", "answer_math_equiv"),
    (r"Use $\cos^2 x - \sin^{2} x$.", r"\cos(2x)", "answer_math_equiv"),
    (r"It is $2\sin x\cos x$.", r"\sin 2x", "answer_math_equiv"),
    (r"The answer is $\log_2 8$.", "3", "answer_math_equiv"),
    (r"Compute $\log_{2} 1024$.", "10", "answer_math_equiv"),
    (r"So it is $\ln 3/\ln 2$.", r"\log_2 3", "answer_math_equiv"),
    ("Check that you get x=6, y=5 at the end.", "x=6, y=5", "answer_verbatim"),
    ("The only one is f(x)=0.", "f(x)=0", "answer_verbatim"),
    ("The answer is no.", "No", "answer_text"),
    (r"Finally \boxed{\text{Yes}}.", "Yes", "answer_text"),
    ("No is the final answer.", "No", "answer_text"),
    ("Show there are no integer solutions.", "No integer solutions", "answer_text"),
    ("So there is no integer solution at all.", "No integer solutions", "answer_text"),
    # short answers, stated as the answer
    (r"\boxed{2}", "2", "answer_digits"),
    ("The answer is 2.", "2", "answer_digits"),
    ("Check that you get 0 at the end.", "0", "answer_digits"),
    ("0 is the only possible value.", "0", "answer_digits"),
    ("The answer is -9.", "-9", "answer_digits"),
    ("The limit exists and is equal to 4.", "4", "answer_digits"),
    ("Thus the answer is n.", "n", "answer_math_equiv"),
]

CLEAN = [  # (hint, answer): other numbers of the problem, or the answer's digits in other roles
    ("Count strings of length 6 over the digits 1, 2, 3.", "239"),
    ("Let x_n be the number of strings ending in 1; find x_1 first.", "239"),
    ("Add the hundreds digits 1 and 4, plus any carry from the tens.", "0579"),
    ("The answer starts with 05.", "0579"),
    ("The last two digits are 79.", "0579"),
    ("Step 2: use 2 digits for each part.", "2"),
    ("Let x_1 = 2 be the base case.", "2"),
    ("Consider x^2+2 as (x^2+1)+1.", "2"),
    ("For all n, compare 2n with n^2.", "2"),
    ("Note that 2(a+b) <= 4 when a+b <= 2.", "2"),
    ("So b=0 and a=0 here.", "0"),
    ("Thus P(x)>0 for x<=0.", "0"),
    ("Consider the three expressions modulo 3.", "3"),
    ("One of the numbers is even, and exactly one is odd.", "1"),
    ("Study p(x) mod 7 at x=-2, -1, 0, 1, 2.", "0"),
    ("Write x^2+2 as (x^2+1)+1 and use x+1/x >= 2.", "sqrt(3)"),
    ("Consider 2^n and 3^n separately.", "2^(n-1)"),
    ("Use induction on n with n(n+1)/2.", "n(n-3)/2"),
    ("Let x_n, y_n be counts; find x_(n+1) in terms of x_n.", "n(n-3)/2"),
    ("Think about parity; no two are equal.", "No"),
    ("Decide whether the sum is even or odd.", "\\text{even}"),  # an option listed, not the answer stated
    ("Monday is the first day of the week we count.", "\\text{Monday}"),
    ("There is no need to compute every case.", "Yes"),
    ("There are 57 cases and 90 subcases.", "579"),
    ("The number 1579 is not relevant, nor 5790.", "579"),
    ("Try 0.58 as a first guess.", "579"),
    ("Consider the interval from 1 to 2.", "12"),
    ("The set {5,79} and the index x_579 are unrelated.", "0579"),
    (r"Start from $\sin(x)$, then $\sin(2x)$ and $\cos^2 x$.", r"\cos(2x)"),
    (r"Try $\sin^{-1}(x)$ and $1-\sin^2(x)$.", r"\cos(2x)"),
    (r"Let $t = \log_2 x$; the answer is $\log_2 x$ at $x = 8$.", "3"),
    (r"Note that $\log_2 1000$ is not an integer.", "10"),
]


@pytest.mark.parametrize("hint,answer,detector", LEAKS)
def test_leaks_are_caught(hint, answer, detector):
    verdict = check_leak(hint, {"answer": answer}, None)
    assert verdict.leaked, (hint, answer)
    assert detector in verdict.detectors, verdict
    assert detector in verdict.reason


@pytest.mark.parametrize("hint,answer", CLEAN)
def test_clean_hints_pass(hint, answer):
    verdict = check_leak(hint, {"answer": answer}, None)
    assert not verdict.leaked, verdict
    assert verdict.detectors == [] and verdict.reason == ""


def test_short_answer_rule_is_about_context_not_digits():
    ref = {"answer": "2"}
    assert not check_leak("Keep 2 cases in mind: step 2 covers 2 digits.", ref, None).leaked
    assert check_leak("Keep 2 cases in mind. The answer is 2.", ref, None).leaked
    assert not check_leak("so 2n+1 is odd", ref, None).leaked
    assert check_leak("so the smallest value is 2.", ref, None).leaked
    # an expression equal to a short answer is held to the same rule, functions included
    assert not check_leak("1+1", ref, None).leaked and not check_leak(r"$\log_3 9$", ref, None).leaked
    assert check_leak(r"The answer is $\log_3 9$.", ref, None).leaked


def test_operands_and_problem_text_are_not_leaks():
    ref = {"answer": "0579", "operands": [123, 456]}
    assert not check_leak("Line up 123+456 in columns.", ref, None).leaked
    assert check_leak("Line up 123+456 in columns.", {"answer": "0579"}, None).leaked  # without operands
    answer = "(x+1)(x-1)(x^2+1)(x^3-x^2+1)(x^2+x+1)"
    problem = "Factorize x^9+x^4-x-1 into terms of integer coefficients."
    hint = "Rewrite the expression as (x^9-x)+(x^4-1)."
    assert check_leak(hint, {"answer": answer}, None).leaked  # equivalent, with no problem to compare
    assert not check_leak(hint, {"answer": answer}, None, problem=problem).leaked
    assert not check_leak(hint, {"answer": answer, "problem": problem}, None).leaked
    assert check_leak(f"It factors as {answer}.", {"answer": answer}, None, problem=problem).leaked


def test_aliases_are_checked():
    ref = {"answer": "252", "answer_aliases": ["C(10, 5)"]}
    assert check_leak("It is C(10, 5).", ref, None).leaked
    assert check_leak("It is choose(10, 5), i.e. C(10,5).", {"answer": "17", "answer_aliases": ["C(10, 5)"]},
                      None).leaked


def test_solution_overlap_allows_first_steps_but_not_the_end():
    ref = {"answer": "239", "solution": SOLUTION}
    steps = SOLUTION.split("\n")
    assert not check_leak(f"Start like this: {steps[0]}", ref, None).leaked
    end = check_leak(f"Finish with: {steps[-1]}", {"answer": "4321", "solution": SOLUTION}, None)
    assert end.leaked and end.detectors == ["solution_overlap"] and "final step" in end.reason
    most = check_leak(" ".join(steps[:5]), {"answer": "4321", "solution": SOLUTION}, None)
    assert most.leaked and "solution_overlap" in most.detectors
    frac, final = solution_overlap(" ".join(steps[:2]), SOLUTION)
    assert 0 < frac < 0.5 and not final
    # min_run and max_fraction are configurable
    assert not check_leak(" ".join(steps[:5]), {"answer": "4321", "solution": SOLUTION}, None, max_fraction=0.95).leaked
    assert check_leak(steps[0], {"answer": "4321", "solution": SOLUTION}, None, max_fraction=0.1).leaked


class _Flagging(Task):
    name = "flagging"

    def leak_check(self, hint, reference):
        return LeakVerdict("secret" in hint, ["task_secret"], "task: the hint says secret")


class _Broken(Task):
    name = "broken"

    def leak_check(self, hint, reference):
        raise RuntimeError("boom")


def test_task_detectors_are_merged_and_fail_closed():
    mentor.tasks.register("flagging", _Flagging)
    mentor.tasks.register("broken", _Broken())
    v = check_leak("the secret is 239", {"answer": "239"}, mentor.tasks.get_task("flagging"))
    assert v.leaked and v.detectors == ["answer_digits", "task_secret"] and "task: the hint says" in v.reason
    assert not check_leak("nothing here", {"answer": "239"}, mentor.tasks.get_task("flagging")).leaked
    broken = check_leak("nothing here", {"answer": "239"}, mentor.tasks.get_task("broken"))
    assert broken.leaked and broken.detectors == ["task_error"] and "boom" in broken.reason
    # no task: the generic detectors alone
    assert check_leak("It is 239.", {"answer": "239"}).detectors == ["answer_digits"]
    with pytest.raises(TypeError, match=r"get_task\('code'\)"):  # a name would make every hint fail closed
        check_leak("Think.", {"answer": "239"}, "code")
    assert not check_leak("Think.", {"answer": "239"}, mentor.tasks.get_task("code")).leaked


def test_references_without_answer_or_with_odd_types():
    assert not check_leak("anything 42", {}, None).leaked
    assert check_leak("it is 42", {"answer": 42}, None).leaked
    assert not check_leak("", {"answer": "42", "solution": SOLUTION}, None).leaked


def test_pathological_expressions_are_bounded_in_worker_threads():
    hints = [r"Try $9^{9^{9}}$ or \boxed{10^{10^{10}}} or 99999! first.", "2^99999999 and (10^10)^(10^10)",
             "x" * 50_000 + " 12"]
    refs = [{"answer": "2^(n-1)"}, {"answer": "17"}, {"answer": "x(x-1)(x-2)...(x-2022)"},
            {"answer": "sum_(k=1)^n 1/k"}, {"answer": "x=y=0"}]
    math = mentor.tasks.get_task("math")
    pool = ThreadPoolExecutor(4)
    try:  # a hang guard that fails rather than waits: any of these that reached sympy would take hours
        verdicts = list(pool.map(lambda hr: check_leak(hr[0], hr[1], math), [(h, r) for h in hints for r in refs],
                                 timeout=120))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    assert all(isinstance(v, LeakVerdict) for v in verdicts)
    assert check_leak("The answer is x=y=0.", {"answer": "x=y=0"}, None).leaked
    assert check_leak("1 " * 3000 + "and 9" * 1000, {"answer": "17"}, None).detectors == ["hint_too_long"]
    assert not check_leak("9" * 3000, {"answer": "17"}, None).leaked  # no int() overflow on long digit runs


def test_symbolic_equivalence_via_math_verify_in_a_worker_thread():
    # `sum_(k=1)^n` is beyond the exact evaluator: this goes to math-verify, off the main thread
    with ThreadPoolExecutor(1) as pool:
        v = pool.submit(check_leak, "It is \\log(n) plus change.", {"answer": "sum_(k=1)^n 1/k"}, None).result()
    assert not v.leaked


def test_the_docs_describe_exactly_the_detectors_the_checker_names():
    docs = (Path(__file__).parent.parent / "docs" / "leakage.md").read_text()
    table = re.findall(r"^\| `(\w+)` \|", docs.split("## Detectors", 1)[1].split("\n## ", 1)[0], re.M)
    assert table == list(DETECTORS)


def test_helpers():
    assert expression_value("70+99+70") == 239 and expression_value("((1)/(2))") == 0.5
    assert expression_value("C(10,5)") == 252
    assert expression_value("2^(n-1)", {"n": 4}) == 8 and expression_value("n(n-3)/2", {"n": 5}) == 5
    assert expression_value("9^9^9") is None and expression_value("x+1") is None
    assert expression_value("sqrt(2)") is None
    assert abs(expression_value("sqrt(3)/3", allow_float=True) - 0.57735) < 1e-5
    assert expression_value(r"\log_2 8") == 3 and expression_value(r"\log_(4)(2)") == Fraction(1, 2)
    assert expression_value(r"\log_2 3") is None
    assert abs(expression_value(r"\sin^2(x)+\cos^2 x", {"x": 7}, allow_float=True) - 1) < 1e-12
    assert expression_value(r"\sin^(-1)(x)", {"x": 1}, allow_float=True) is None  # arcsin, not a power
    assert analyse_answer(r"\cos(2x)").symbols == {"x"} and analyse_answer(r"\log_b x").symbols == {"b", "x"}
    assert [v for v, _, _ in word_numbers("five hundred and seventy-nine, twelve, two thirds")] == [579, 12, Fraction(2, 3)]
    a = analyse_answer("x=6, y=5")
    assert set(a.values) == {6, 5} and a.short
    assert analyse_answer("No integer solutions").phrase == "no integer solution"
    assert analyse_answer("2^(n-1)").symbols == {"n"}


# --- unicode: invisible characters and fraction characters (issue 34, item 1) --------------------------------
@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\u2060", "\u00ad", "\ufeff"])
def test_an_invisible_character_inside_the_answer_does_not_hide_it(invisible):
    verdict = check_leak(f"The answer is 4{invisible}2.", {"answer": "42"}, mentor.tasks.get_task("math"))
    assert verdict.leaked and "answer_digits" in verdict.detectors, verdict


@pytest.mark.parametrize("hint,answer", [("The answer is ½.", "1/2"), ("The answer is 1\u20442.", "1/2"),
                                         ("The answer is 1\u22152.", "1/2"), ("The answer is ¾.", "3/4"),
                                         ("It comes to 3½.", "7/2"), ("The answer is ４２.", "42"),
                                         ("The answer is 𝟒𝟐.", "42")])
def test_fraction_characters_and_compatibility_digits_are_read_as_numbers(hint, answer):
    assert check_leak(hint, {"answer": answer}, mentor.tasks.get_task("math")).leaked, hint


def test_folding_keeps_superscripts_and_subscripts_apart_from_digits():
    from mentor.leakage.fold import fold_for_detectors, visible_text
    assert fold_for_detectors("x² + x₁ + ½") == "x^2 + x_1 + (1/2)"  # NFKC alone would write x2 + x1 + 1⁄2
    assert fold_for_detectors(fold_for_detectors("4\u200b2 ⁻¹")) == "42 ^-1"
    assert visible_text("4\u200b2\u00ad½") == "42½"
    assert not check_leak("Square x₁ and look at x²; the base case is x_1 = 2.", {"answer": "2"}, None).leaked
