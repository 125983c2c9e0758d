"""The math task on real CHAMP problems: scoring, verifier feedback, error classes, and non-leaking hints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import pytest

from mentor.data.champ import canonical_answer, load_champ
from mentor.leakage import check_leak
from mentor.mathtext.answer import analyse_answer
from mentor.mathtext.cost import expression_cost, safe_expression
from mentor.mathtext.verify import mv_equal, mv_parse
from mentor.rewards import math_reward
from mentor.tasks import get_task
from mentor.tasks.math import MathTask, answer_and_extraction, arithmetic_slips, score_answer
from mentor.tasks.math.score import _fast_equal, _trl_accuracy
from mentor.tasks.math.worked_steps import reference_results
from mentor.types import Attempt, Diagnosis, FailedGroup, listed


@pytest.fixture(scope="module")
def champ():
    return load_champ()


@pytest.fixture(scope="module")
def task():
    return MathTask()


def reference(row):
    return {k: row[k] for k in ("answer", "answer_aliases", "solution")}


def wrong_answer(answer: str) -> str:
    return {"No": "Yes", "Yes": "No"}.get(answer) or (f"{answer}+1" if not answer[0].isalpha() else "17")


def group(row, completions=("so \\boxed{17}",), previous_hints=()):
    t = MathTask()
    ref = reference(row)
    attempts = [Attempt(c, 0.0, t.feedback(c, ref)) for c in completions]
    return FailedGroup(row["problem_id"], "math", row["prompt"], ref, attempts, list(previous_hints))


def test_champ_loads_offline(champ):
    assert len(champ) == 270
    row = champ[0]
    assert row["problem_id"] == "P_Combinatorics_1" and row["answer"] == "239"
    assert row["solution"].count("\n") == len(row["solution_steps"]) - 1 == 5
    assert row["hints"] and row["concepts"] and row["prompt"].startswith(row["problem"])
    assert all(r["answer"] and r["solution"] and r["problem"] for r in champ)
    assert len({r["problem_id"] for r in champ}) == 270


@pytest.mark.parametrize("raw,answer,alias", [
    ("C(10, 5), or equivalently 252", "252", "C(10, 5)"),
    ("5/14, or approximately 35.7%", "5/14", "35.7%"),
    ("0 is the only possible value", "0", None),
    ("The limit exists and is equal to (a+3b)/2", "(a+3b)/2", None),
    ("100 (i.e., all values)", "100", None),
    ("376 and 625", "376, 625", None),
    ("2 inequalities", "2", None),
    ("No", "No", None),
])
def test_canonical_answer(raw, answer, alias):
    got, aliases = canonical_answer(raw)
    assert got == answer
    assert (alias in aliases) if alias else (aliases == ([raw] if raw != answer else []))


def test_gold_answers_score_one_and_wrong_answers_zero(champ, task):
    for row in champ:
        ref = reference(row)
        assert task.score(f"Working...\nSo the final answer is \\boxed{{{row['answer']}}}.", ref) == 1.0, row["answer"]
        bad = wrong_answer(row["answer"])
        assert task.score(f"So the final answer is \\boxed{{{bad}}}.", ref) == 0.0, (row["answer"], bad)


@pytest.mark.parametrize("completion,answer,expected", [
    ("The answer is \\boxed{\\frac{1}{2}}", "1/2", 1.0),
    ("The answer is \\boxed{0.5}", "1/2", 1.0),
    ("The answer is \\boxed{\\dfrac{2}{4}}", "1/2", 1.0),
    ("The answer is \\boxed{\\frac{1}{3}}", "1/2", 0.0),
    ("#### 1,234", "1234", 1.0),
    ("so the answer is 42.", "42", 1.0),
    ("so the answer is 41.", "42", 0.0),
    ("We add them: 20 + 22 = 42", "42", 1.0),
    ("no numbers at all", "42", 0.0),
    ("The answer is \\boxed{2^{n-1}}", "2^(n-1)", 1.0),
    ("The answer is \\boxed{\\frac{2^n}{2}}", "2^(n-1)", 1.0),
    ("The answer is \\boxed{2^{n}}", "2^(n-1)", 0.0),
    ("The answer is \\boxed{\\frac{\\sqrt{3}}{3}}", "1/sqrt(3)", 1.0),
    ("The answer is \\boxed{\\sqrt{3}}", "1/sqrt(3)", 0.0),
    ("The answer is \\boxed{x=6, y=5}", "x=6, y=5", 1.0),
    ("The answer is \\boxed{y=5, x=6}", "x=6, y=5", 1.0),
    ("The answer is \\boxed{x=5, y=6}", "x=6, y=5", 0.0),
    ("\\boxed{\\text{No}}", "No", 1.0),
    ("\\boxed{\\text{Yes}}", "No", 0.0),
    ("\\boxed{\\text{There are no integer solutions}}", "No integer solutions", 1.0),
    ("\\boxed{9^{9^{9}}}", "239", 0.0),
])
def test_score_forms(task, completion, answer, expected):
    assert task.score(completion, {"answer": answer}) == expected


def test_trl_reward_function(champ):
    rows = champ[:4]
    completions = [[{"role": "assistant", "content": f"\\boxed{{{r['answer']}}}"}] for r in rows]
    completions += [f"\\boxed{{{wrong_answer(r['answer'])}}}" for r in rows]
    answers = [r["answer"] for r in rows] * 2
    rewards = math_reward(completions, answer=answers, solution=[r["solution"] for r in rows] * 2, trainer_state=None)
    assert rewards == [1.0] * 4 + [0.0] * 4
    assert get_task("math").reward(completions[:1], answer=answers[:1]) == [1.0]
    with ThreadPoolExecutor(2) as pool:  # math-verify's timeouts only work in the main thread
        assert list(pool.map(lambda c: score_answer(c, {"answer": "2^(n-1)"}), ["\\boxed{2^{n-1}}", "\\boxed{3}"])) == [1.0, 0.0]


def test_extraction_and_slips():
    assert answer_and_extraction("a \\boxed{1} then \\boxed{\\frac{3}{4}}") == ("\\frac{3}{4}", "boxed")
    assert answer_and_extraction("#### 42\n") == ("42", "hash")
    assert answer_and_extraction("The final answer is $\\frac{1}{2}$.") == ("\\frac{1}{2}", "phrase")
    assert answer_and_extraction("we get 3, 4 and 5") == ("5", "last_number")
    assert answer_and_extraction("nothing") == (None, None)
    assert arithmetic_slips("so 7*8=54 and 2+2=4, also 1/3=0.333") == ["7*8=54"]
    assert arithmetic_slips("x_6+y_6+z_6=70+99+70=249") == ["70+99+70=249"]
    assert arithmetic_slips("x_6+y_6+z_6=70+99+70=239") == []


def test_feedback_and_classes(champ, task):
    row = champ[0]  # 239 strings; step 5 lists (70, 99, 70)
    ref = reference(row)
    cases = {
        "format_error": "Counting gives 239 strings in total.",
        "arithmetic_slip": "x_1=y_1=z_1=1.\n(12, 17, 12), (29, 41, 29), (70, 99, 70)\nSo the total is 70+99+70=249.\n\\boxed{249}",
        "wrong_method": "Each position has 3 choices, so 3^6 = 729.\nThe answer is \\boxed{729}.",
        "wrong_final_answer": "The sequence is (1,1,1), (2,3,2), (5,7,5), (12,17,12), (29,41,29).\nSo \\boxed{99}.",
        "truncated": "Let x_n be the number of such strings. Then x_2 = 7 and x_3 = 17, and then we need to add",
        "no_answer": "I do not know how to solve this problem.",
    }
    for expected, completion in cases.items():
        fb = task.feedback(completion, ref)
        assert task.classify(Attempt(completion, 0.0, fb), ref) == expected, (expected, fb)
        assert expected in task.taxonomy
    fb = task.feedback(cases["arithmetic_slip"], ref)
    assert fb["extracted_answer"] == "249" and not fb["correct"] and fb["format_problems"] == []
    assert fb["first_wrong_step"] == 3 and "249" in fb["wrong_step_text"]
    assert fb["reached_reference_steps"] == [5] and fb["diverges_at_reference_step"] == 6
    assert "no_boxed" in task.feedback(cases["format_error"], ref)["format_problems"]
    assert task.feedback(cases["format_error"], ref)["correct"]
    assert "truncated" in task.feedback(cases["truncated"], ref)["format_problems"]
    assert "multiple_answers" in task.feedback("\\boxed{3} or \\boxed{5}", ref)["format_problems"]
    parts = {"answer": "376, 625"}
    assert task.classify(Attempt("\\boxed{376, 624}"), parts) == "partial_answer"


def testreference_results_are_worked_out_once_per_solution(champ, task):
    """Each reference step's new numbers (above 10 or not whole) depend on the solution only: a group's
    attempts share one computation."""
    row = champ[0]
    key, known = reference_results(row["solution"])
    assert key[:4] == (frozenset(),) * 4 and key[4] == {12, 17, 29, 41, 70, 99} and key[5] == {239}
    assert known == {12, 17, 29, 41, 70, 99, 239}
    reference_results.cache_clear()
    ref = reference(row)
    fbs = [task.feedback(f"So \\boxed{{{n}}}.", ref) for n in (5, 6, 7)]
    assert [fb["diverges_at_reference_step"] for fb in fbs] == [5, 5, 5]
    info = reference_results.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_analyse_is_grounded(champ, task):
    g = group(champ[0], ["Each position has 3 choices, so 3^6 = 729.\n\\boxed{729}",
                         "Each position has 3 choices: 3^6 = 729, minus 1.\n\\boxed{728}",
                         "Counting gives 239 strings in total."])
    classes = [task.classify(a, g.reference) for a in g.attempts]
    assert classes == ["wrong_method", "wrong_method", "format_error"]
    cause, step = task.analyse(g, classes)
    assert cause.startswith("2 of 3 attempts") and "'729'" in cause and "'728'" in cause
    assert "239" not in cause  # the right answer of the format_error attempt is not listed as wrong
    assert step == 5


_LATER_STEPS = ("\nThe store gives a discount only to those who buy ten or more pens at once, and she buys fewer than ten."
                "\nSo no discount applies to her purchase and she pays the full price that we found in the step before.")


@pytest.mark.parametrize("answer,first_step,stated", [
    ("\\$42", "Six pens cost $6 \\cdot \\$7 = \\$42$ before any discount.", "42"),
    ("9\\pi", "The area is $\\pi r^2 = \\pi \\cdot 3^2 = 9\\pi$ square units.", "9\\pi"),
    ("42", "Six pens cost $6 \\cdot 7 = 42$ before any discount.", "42"),
])
def test_the_rules_hint_does_not_state_a_dollar_or_constant_answer(task, answer, first_step, stated):
    """The tier-3 draft that shows the first step states the answer; as for the plain 42, the composer steps down to
    the masked first step."""
    ref = {"answer": answer, "solution": first_step + _LATER_STEPS}
    attempts = [Attempt("\\boxed{17}", 0.0, task.feedback("\\boxed{17}", ref))]
    hint = task.compose(FailedGroup("p", "math", "How much?", ref, attempts, []), Diagnosis("wrong_method"), 3, None)
    assert stated not in hint and "Start like this: " in hint and "…" in hint, hint


def test_compose_all_tiers_never_leak_on_champ(champ, task):
    real_tier3 = 0
    for row in champ:
        g = group(row)
        hints = {tier: task.compose(g, Diagnosis("wrong_method"), tier, None) for tier in (1, 2, 3)}
        for tier, hint in hints.items():
            verdict = check_leak(hint, g.reference, get_task("math"), problem=row["problem"])
            assert not verdict.leaked, (row["problem_id"], tier, hint, verdict.reason)
        steps = row["solution_steps"]
        if hints[3].startswith("A correct solution starts like this: (1) " + steps[0]):
            real_tier3 += 1
            assert steps[-1] not in hints[3]
    # measured: 241 of 270 (the rest have a first step with the answer, or longer than 40% of the solution)
    assert real_tier3 >= 225, real_tier3


def test_compose_checks_drafts_only_up_to_the_one_it_uses(champ, task, monkeypatch):
    """The first passing draft is the hint (the second after a leak): later drafts are never checked."""
    import mentor.tasks.math.task as math_module

    g, d = group(champ[0]), Diagnosis("wrong_method", first_error_step=5)
    checked = []

    def counting_check(hint, *args, **kwargs):
        checked.append(hint)
        return check_leak(hint, *args, **kwargs)

    monkeypatch.setattr(math_module, "check_leak", counting_check)
    drafts = task.drafts(g.reference, d, 3)
    assert len(drafts) > 2
    assert task.compose(g, d, 3, None) == drafts[0] and checked == drafts[:1]
    checked.clear()
    assert task.compose(g, d, 3, "answer_digits: the hint contains the answer") == drafts[1]
    assert checked == drafts[:2]


def test_compose_escalates_and_backs_off(champ, task):
    row = champ[0]
    g = group(row)
    d = Diagnosis("wrong_method", first_error_step=5)
    t1, t2, t3 = (task.compose(g, d, t, None) for t in (1, 2, 3))
    assert t1 != t2 != t3 and row["solution_steps"][0] in t3 and row["solution_steps"][1] in t3
    assert row["solution_steps"][0].split(".")[0] in t2
    safer = task.compose(g, d, 3, "answer_digits: the hint contains the answer")
    assert safer != t3 and len(safer) < len(t3)
    assert task.compose(group(row, ["Counting gives 239."]), Diagnosis("format_error"), 1, None).startswith(
        "Finish with one final answer written as \\boxed{...}")
    with_concepts = FailedGroup("p", "math", row["prompt"], {**reference(row), "concepts": row["concepts"]}, [])
    assert task.compose(with_concepts, d, 1, None) == f"Key idea: {row['concepts'][0]}"
    assert task.choose_tier(g, d) == 1
    later = group(row, previous_hints=[{"tier": 2, "hint": "..."}])
    assert task.choose_tier(later, d) == 3


def failed_group(problem_id, prompt, ref, completions, previous_hints=()):
    """A failed math group as the trainer hands it over: completions and rewards, no feedback yet."""
    return FailedGroup.from_dict({"problem_id": problem_id, "task": "math", "prompt": prompt, "reference": ref,
                                  "attempts": [{"completion": c, "reward": 0.0} for c in completions],
                                  "previous_hints": list(previous_hints)})


def test_rules_backend_runs_math_failures_through_the_graph(champ):
    """The four nodes' rules on math failures, through MentorRuntime and the real graph."""
    from mentor.runtime import MentorRuntime

    task = get_task("math")
    row = champ[0]  # 239 strings; the reference reaches (70, 99, 70) at step 5 of 6
    wrong = ["Each position has 3 choices, so 3^6 = 729.\n\\boxed{729}",
             "Each position has 3 choices: 3^6 = 729, minus 1.\n\\boxed{728}",
             "x_1=y_1=z_1=1.\n(12, 17, 12), (29, 41, 29), (70, 99, 70)\nSo the total is 70+99+70=249.\n\\boxed{249}"]
    nt31 = next(r for r in champ if r["problem_id"] == "P_Number-Theory_31")  # step 1 states x=2, y=1
    apples = ("gsm-apples", "Tom has 3 boxes of 12 apples and eats 5 of them. How many apples are left?",
              {"answer": "31"})  # no worked solution
    groups = [failed_group(row["problem_id"], row["prompt"], reference(row), wrong),
              failed_group("retry", row["prompt"], reference(row), wrong, [{"tier": 2, "hint": "..."}]),
              failed_group(nt31["problem_id"], nt31["prompt"], reference(nt31),
                           ["Try y=0: 2^x=2, so x=1.\n\\boxed{x=1, y=0}", "So \\boxed{x=1, y=0}"],
                           [{"tier": 2, "hint": "..."}]),
              # A 1-1 tie, the later taxonomy class first: the root cause speaks of the same class as error_class.
              failed_group(*apples, ["I think it is \\boxed{41}", "3*12=36, 36-5=30. \\boxed{30}"])]
    results = MentorRuntime().run(groups)

    for g, r in zip(groups, results):
        assert r.error is None, r.error
        assert r.diagnosis.error_class in task.taxonomy and set(r.diagnosis.error_classes) <= set(task.taxonomy)
        assert r.diagnosis.root_cause.strip() and r.tier in (1, 2, 3)
        assert r.hint is not None and not r.withheld
        assert not check_leak(r.hint, g.reference, get_task("math"), problem=g.prompt).leaked, r.hint
        assert g.reference["answer"] not in r.hint
        assert [n["node"] for n in r.nodes] == ["error_classifier", "root_cause_analyst", "hint_composer",
                                                "leakage_checker"]
        assert r.backend == {n: "rules" for n in ("error_classifier", "root_cause_analyst", "hint_composer",
                                                  "leakage_checker")}
        # The composer keeps only a draft that passes check_leak, so the gate has nothing to send back.
        assert r.leak == {"leaked_drafts": []}

    first, retry, leaky_step, tie = results
    assert first.diagnosis.error_classes == {"wrong_method": 2, "arithmetic_slip": 1}
    assert first.diagnosis.error_class == "wrong_method"
    assert first.diagnosis.root_cause.startswith(f"2 of 3 attempts: {task.taxonomy['wrong_method']}")
    assert "'729'" in first.diagnosis.root_cause and first.diagnosis.first_error_step == 5
    assert first.tier == 1 and first.hint == task.concept(groups[0].reference)
    # After a tier-2 hint: tier 3, the reference's opening steps, never its last.
    assert retry.diagnosis == first.diagnosis and retry.tier == 3
    assert retry.hint.startswith("A correct solution starts like this: (1) " + row["solution_steps"][0])
    assert row["solution_steps"][-1] not in retry.hint
    # Every tier-3 draft of P_Number-Theory_31 shows step 1, which states the answer: the composer passes them
    # over for the masked opening step, a tier-2 text, and the record says tier 2 (issue 56).
    assert leaky_step.diagnosis.error_class == "partial_answer" and leaky_step.tier == 2
    drafts = task.drafts(groups[2].reference, leaky_step.diagnosis, 3)
    assert all(check_leak(d, groups[2].reference, get_task("math"), problem=nt31["prompt"]).leaked
               for d in drafts if d.startswith("A correct solution"))
    assert "Start like this: Obviously, x=…, y=… is an solution." in leaky_step.hint
    assert tie.diagnosis.error_classes == {"wrong_final_answer": 1, "arithmetic_slip": 1}
    assert tie.diagnosis.error_class == "arithmetic_slip"
    assert tie.diagnosis.root_cause.startswith(f"1 of 2 attempts: {task.taxonomy['arithmetic_slip']}")
    assert "36-5=30" in tie.diagnosis.root_cause and tie.diagnosis.first_error_step is None


# --------------------------------------------------------------------------------------------------
# Costly expressions (issue 15.1): each is refused by the cost screen before sympy, in any thread.
# --------------------------------------------------------------------------------------------------
COSTLY = {
    "tower": r"9^{9^{9}}",
    "tower_of_four": r"2^{2^{2^{2^{2^{2}}}}}",
    "tower_10": r"10^{10^{10}}",
    "nested_factorials": r"((((9!)!)!)!)!",
    "factorial_of_factorial": r"(9!)!",
    "double_bang": r"9!!!",
    "big_factorial": r"99999!",
    "factorial_of_power": r"(10^6)!",
    "parenthesised_exponent": r"9^{(99999999)}",
    "bare_parenthesised_exponent": r"9^(99999999)",
    "doubly_parenthesised_exponent": r"9^{((99999999))}",
    "braced_exponent": r"9^{99999999}",
    "doubly_braced_exponent": r"9^{{99999999}}",
    "product_exponent": r"9^{9999 \cdot 9999}",
    "power_of_power": r"(9^9999)^(9999)",
    "braced_power_of_power": r"(9^{9999})^{9999}",
    "power_of_power_of_power": r"((9^{99})^{99})^{99}",
    "binomial": r"\binom{10^9}{5*10^8}",
    "dbinom": r"\dbinom{10^{9}}{5 \cdot 10^{8}}",
    "choose": r"{10^9 \choose 5\cdot 10^8}",
    "ascii_binomial": r"C(10^9, 5*10^8)",
    "binomial_of_factorial": r"\binom{(9!)!}{3}",
    "expansion": r"(x+1)^{1000}",
    "trig_degree": r"\sin^{40}(x)\cos^{40}(x)",
    "symbolic_tower": r"x^{x^{x}}",
    "abs_power": r"|9|^{99999999}",
    "subscript": r"x_{9^{99999999}}",
    "sum_to_huge": r"\prod_{k=1}^{10^9} k",
}
# `\sqrt[3]{2}` is beyond the fast evaluator, so every comparison with it goes to TRL's accuracy_reward and
# math-verify; `|x-1|` likewise sends the leakage checker's candidates to math-verify.
MV_ANSWER, MV_LEAK_ANSWER = r"\sqrt[3]{2}", "|x-1|"
SCORE_AND_DIAGNOSE = r"""
import json, sys, threading
import math_verify
parsed = []  # every expression handed to math-verify (TRL's accuracy_reward and mentor.mathtext.verify)
_parse = math_verify.parse
def parse(expr, *args, **kwargs):
    parsed.append(expr)
    return _parse(expr, *args, **kwargs)
math_verify.parse = parse  # before TRL binds the name
from mentor.leakage import check_leak
from mentor.rewards import math_reward
from mentor.tasks.math import MathTask
expr, answer, leak_answer = sys.argv[1:4]
task, ref = MathTask(), {"answer": answer, "solution": "Take the cube root of both sides: x = \\sqrt[3]{2}."}
assert math_reward(["\\boxed{2^{1/3}}"], answer=[answer]) == [1.0], "warm-up: a correct answer must score 1"
out = {}
del parsed[:]
out["reward_main"] = math_reward([f"So \\boxed{{{expr}}}"], answer=[answer])[0]
def worker():  # the mentor's graph runs feedback and the leakage checker in worker threads
    out["reward_thread"] = math_reward([f"So \\boxed{{{expr}}}"], answer=[answer])[0]
    fb = task.feedback(f"So \\boxed{{{expr}}}", ref)
    out["correct"], out["too_costly"] = fb["correct"], fb["answer_too_costly"]
    out["leaked"] = check_leak(f"Consider ${expr}+x$ here.", {"answer": leak_answer}, task).leaked
th = threading.Thread(target=worker, daemon=True)
th.start()
th.join()
out["parsed_costly"] = [p for p in parsed if expr in p]
out["parsed"] = len(parsed)
print(json.dumps(out))
"""


def run_bounded(code: str, *args: str, timeout: float = 180) -> dict:
    """Run `code` in a fresh interpreter, killed after `timeout` s (a hang guard: most of a run is importing TRL,
    and sympy on a costly expression takes hours), so that a regression fails the test instead of hanging the
    suite; returns the JSON of its last output line."""
    try:
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"scoring {args[0]!r} did not finish within {timeout} s: a costly expression reached sympy")
    assert p.returncode == 0, f"the scoring process failed for {args[0]!r}:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("expr", COSTLY.values(), ids=COSTLY.keys())
def test_a_costly_expression_is_refused_by_the_screen(expr):
    assert expression_cost(expr) is None, f"the cost screen lets {expr!r} through to sympy"
    assert not safe_expression(expr) and mv_parse(expr) == []


@pytest.mark.slow  # a fresh interpreter (and TRL's import) per expression; the screen's own test above is fast
@pytest.mark.parametrize("expr", COSTLY.values(), ids=COSTLY.keys())
def test_a_costly_answer_is_scored_and_diagnosed_without_reaching_math_verify(expr):
    # The comparison must reach the screen, not be settled by the fast evaluator first.
    assert _fast_equal(expr, MV_ANSWER) is None and analyse_answer(MV_LEAK_ANSWER).samples is None
    got = run_bounded(SCORE_AND_DIAGNOSE, expr, MV_ANSWER, MV_LEAK_ANSWER)
    assert got["reward_main"] == got["reward_thread"] == 0.0, got
    assert got["correct"] is False and got["too_costly"] is True, got
    assert got["leaked"] is False, got
    assert got["parsed_costly"] == [], f"{expr!r} reached math-verify (and sympy) while scored, diagnosed or checked"


BOUNDED = {  # (answer in a completion, reference): the screen lets them through and they compare right
    r"2^{10}": "1024", r"5!": "120", r"\binom{10}{5}": "252", r"2^{2^{4}}": "65536", r"9^{999}": "9^{999}",
    r"(x+1)^{2}": "x^2+2x+1", r"\frac{2^n}{2}": "2^(n-1)", r"(n+1)!": "(n+1)n!", r"2^{1/3}": MV_ANSWER,
}


@pytest.mark.parametrize("got, answer", BOUNDED.items(), ids=BOUNDED.keys())
def test_bounded_expressions_pass_the_screen_and_score(task, got, answer):
    assert safe_expression(got) and safe_expression(answer), f"the cost screen refuses {got!r} or {answer!r}"
    assert math_reward([f"So \\boxed{{{got}}}"], answer=[answer]) == [1.0]
    fb = task.feedback(f"So \\boxed{{{got}}}", {"answer": answer})
    assert fb["correct"] and not fb["answer_too_costly"]
    assert math_reward([f"So \\boxed{{{got}+1}}"], answer=[answer]) == [0.0]


def test_math_verify_and_trl_compare_screened_expressions():
    # These go through the screen to math-verify and TRL's accuracy_reward, not the fast evaluator.
    assert mv_equal(mv_parse("1024"), mv_parse("2^{10}")) and mv_equal(mv_parse("120"), mv_parse("5!"))
    assert _trl_accuracy("2^{1/3}", MV_ANSWER) == 1.0 and _trl_accuracy("2^{1/2}", MV_ANSWER) == 0.0
    assert _trl_accuracy(COSTLY["tower"], MV_ANSWER) is None


# --------------------------------------------------------------------------------------------------
# A row without a usable answer (issue 15.7) never pays.
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer", [None, float("nan"), "", "  "], ids=["none", "nan", "empty", "blank"])
def test_a_row_without_an_answer_is_unscorable_and_counted(task, answer):
    completions = ["\\boxed{None}", "The answer is none", "\\boxed{nan}", "The answer is nan.", "\\boxed{}", ""]
    logged = []
    rewards = math_reward(completions + ["\\boxed{7}"], answer=[answer] * len(completions) + ["7"],
                          log_metric=lambda name, value: logged.append((name, value)))
    assert rewards == [None] * len(completions) + [1.0]
    assert logged == [("mentor/reward_no_reference", float(len(completions)))]
    for c in completions:
        assert score_answer(c, {"answer": answer}) == 0.0 and not task.feedback(c, {"answer": answer})["correct"]
    assert task.missing_reference({"answer": answer}) == ["answer"]
    # An unusable alias is dropped, not compared as the text "None".
    assert score_answer("\\boxed{None}", {"answer": "7", "answer_aliases": [None, float("nan")]}) == 0.0


def test_a_reference_past_pythons_4300_digit_limit_is_scored_not_raised(task):
    long = "4" * 5000
    assert math_reward(["\\boxed{42}"], [long]) == [0.0]
    assert math_reward([f"\\boxed{{{long}}}"], [long]) == [1.0]  # the exact right answer
    assert math_reward([f"\\boxed{{{long[:-1]}5}}"], [long]) == [0.0]
    assert not task.feedback("\\boxed{42}", {"answer": long})["correct"]
    assert task.feedback(f"\\boxed{{{long}}}", {"answer": long})["correct"]
    assert math_reward([f"\\boxed{{{'4' * 100_000}}}"], ["42"]) == [0.0]  # past MAX_NUMERAL_DIGITS: refused


def test_numerals_of_any_length_up_to_the_cap_are_exact():
    from mentor.mathtext.numerals import MAX_NUMERAL_DIGITS, numeral_value
    assert numeral_value("4" * 5000) == int("4" * 2500) * 10 ** 2500 + int("4" * 2500)
    assert numeral_value("1" + "0" * 4999 + ".5") == Fraction(10 ** 4999) + Fraction(1, 2)
    assert numeral_value(".50") == Fraction(1, 2)
    with pytest.raises(ValueError, match="more than"):
        numeral_value("9" * (MAX_NUMERAL_DIGITS + 1))


# --- hints of the right kind: nothing problem-specific to say, the format alone (issue 43) --------------------------
PRODUCT = "What is 356 * 645?"  # a bare product: no `solution`, no `concepts`


def test_a_problem_the_reference_says_nothing_of_gets_the_format_only_hint_counted():
    from mentor.cli import summary_text
    from mentor.runtime import MentorRuntime
    from mentor.summary import summarise
    from mentor.tasks.math.hints import FORMAT_HINT, FORMAT_HINT_TRUNCATED

    boxed = ["356 * 645 = 229000. \\boxed{229000}", "\\boxed{230620}"]
    bare = failed_group("product", PRODUCT, {"answer": "229620"}, boxed)
    unboxed = failed_group("product-2", PRODUCT, {"answer": "229620"}, ["I think it is 229000", "hmm"])
    later = failed_group("product-3", PRODUCT, {"answer": "229620"}, boxed, [{"tier": 2, "hint": FORMAT_HINT}])
    concept = "Split 645 by place value (600 + 40 + 5), multiply 356 by each part and add the products."
    with_concept = failed_group("product-4", PRODUCT, {"answer": "229620", "concepts": concept}, boxed)  # one string
    results = MentorRuntime().run([bare, unboxed, later, with_concept])
    assert all(r.error is None for r in results)
    assert results[0].hint == results[2].hint == FORMAT_HINT and results[1].hint in (FORMAT_HINT, FORMAT_HINT_TRUNCATED)
    assert not any("quantities" in r.hint for r in results)  # the word-problem advice this product used to get
    assert results[2].tier == 1  # an escalation with still nothing of the problem to show: the tier-1 text
    assert results[3].hint == f"Key idea: {concept}"  # a lone string is one concept, not its first character
    composer = [next(n for n in r.nodes if n["node"] == "hint_composer") for r in results]
    assert [c["output"]["format_only"] for c in composer] == [True, True, True, False]
    assert summarise(results).format_only == 3 and "hints: 4 (3 format-only)" in summary_text(results)


def test_with_a_solution_and_no_concept_tier_1_is_format_only_and_tier_2_starts_the_solution(task):
    from mentor.tasks.math.hints import FORMAT_HINT

    ref = {"answer": "229620", "solution": "356 * 600 = 213600.\n356 * 45 = 16020.\n213600 + 16020 = 229620."}
    g = failed_group("p", PRODUCT, ref, ["\\boxed{1}"])
    d = Diagnosis("wrong_final_answer")
    assert task.compose(g, d, 1, None) == FORMAT_HINT and task.format_only(FORMAT_HINT)
    assert task.drafts(ref, d, 2)[:2] == ["Start like this: 356 * 600 = 213600.", "Start like this: … * … = …."]
    assert not task.format_only(task.compose(g, d, 2, None))


def test_the_reward_reads_the_answer_aliases_column_and_a_lone_string_alias_is_one_form():
    # \mathbb{R} is undecided by the fast comparison, so the aliases decide.
    assert get_task("math").reward(["\\boxed{1}"], answer=["\\mathbb{R}"], answer_aliases=[["1"]]) == [1.0]
    one = {"answer": "\\mathbb{R}", "answer_aliases": "17/3"}  # a string column: one form, not "1", "7", "/", "3"
    assert score_answer("\\boxed{1}", one) == 0.0 and score_answer("\\boxed{17/3}", one) == 1.0
    assert check_leak("It comes to 17/3.", one, get_task("math")).detectors == ["answer_math_equiv"]
    assert (listed(("a", "b")), listed("ab"), listed(None), listed(float("nan"))) == (["a", "b"], ["ab"], [], [])
    assert MathTask.optional_reference_fields == ("solution", "answer_aliases", "concepts")  # what the hook copies
