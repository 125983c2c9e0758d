"""Every function that applies patterns to model text (completions, hints, node answers) is linear in its length.

Each is fed long runs of spaces, tabs, newlines and punctuation inside the text around it (after "The answer is",
inside a box, a fence...). A hang guard (SIGALRM, which Python's regex engine checks while it matches) stops a call
after GUARD_S: a cubic pattern took 70 s on 3,000 spaces and a quadratic one 18 s on 40,000 newlines, while each
function here takes well under a second on RUN characters. The functions run in the main thread: the alarm works
only there.
"""

from __future__ import annotations

import signal
import time

import pytest

from mentor.leakage import check_leak
from mentor.leakage.number_words import word_numbers
from mentor.llm.client import LLMOutputError, parse_json
from mentor.mathtext.ascii import to_ascii_math
from mentor.mathtext.cost import expression_cost
from mentor.mathtext.forms import answer_body, lists_options
from mentor.mathtext.steps import split_steps
from mentor.tasks import get_task
from mentor.tasks.code.extract import extract_code
from mentor.tasks.math import answer_and_extraction, arithmetic_slips, boxed_contents, numbers_in
from mentor.text import invalid_text
from mentor.types import Attempt

pytestmark = pytest.mark.slow  # hang guards: 30k- and 120k-character inputs, each call watched by a signal

RUN = 30_000  # characters in each run
SHORT_RUN = 3_000
SCALE = 4  # the slowest case is run again this many times longer
HINT_RUN = 3_900  # in a hint: the leakage checker flags a longer one `hint_too_long` without reading it
GUARD_S = 4.0  # a hang guard, far above what a linear pattern needs on RUN characters (SCALE x it on SCALE x RUN)

RUNS = [" ", "\t", "\n", " \n", "\r\n", ".", ",", ";", "$", "{", "}", "(", "()", "`", "```\n", "-", "=", "1,", "1 ",
        "2^", "1+", "\\boxed{", "<think>", "answer is ", "#", "x=", "*", "n-1", "\\frac{", "(n", "three ",
        "\\text{ cm}", "5 hundreds, ", " or "]  # the last three: answer forms (mentor.mathtext.forms, number words)
AROUND = [("The answer is 5", "x"), ("x\n", "y"), ("\\boxed{", "}"), ("```python\n", "")]

MATH_REF = {"answer": "4", "solution": "Let x = 2.\nThen 2*2 = 4, so the answer is 4."}
SYMBOLIC_REF = {"answer": "2^(n-1)", "solution": "Let a_n count them.\nThen a_(n+1) = 2 a_n, so a_n = 2^(n-1)."}
ARITH_REF = {"answer": "0579", "operands": [123, 456]}
CODE_REF = {"test": "def check(candidate):\n    assert candidate(1) == 2\n", "entry_point": "f",
            "prompt": "def f(x):\n", "canonical_solution": "    return x + 1\n"}


def _json_or_error(text: str):
    try:
        return parse_json(text)
    except LLMOutputError:
        return None


MATH, ARITH, CODE = get_task("math"), get_task("arithmetic"), get_task("code")
FUNCTIONS = {  # name -> a call on model text
    "math.score": lambda t: MATH.score(t, MATH_REF),
    "math.feedback": lambda t: MATH.feedback(t, MATH_REF),
    "math.classify": lambda t: MATH.classify(Attempt(t), MATH_REF),
    "math.leak_check": lambda t: check_leak(t, MATH_REF, MATH, problem="What is 2+2?"),
    "math.feedback(symbolic)": lambda t: MATH.feedback(t, SYMBOLIC_REF),
    "math.leak_check(symbolic)": lambda t: check_leak(t, SYMBOLIC_REF, MATH, problem="Count the strings."),
    "answer_and_extraction": answer_and_extraction,
    "boxed_contents": boxed_contents,
    "numbers_in": numbers_in,
    "arithmetic_slips": arithmetic_slips,
    "expression_cost": expression_cost,
    "to_ascii_math": to_ascii_math,
    "answer_body": answer_body,
    "lists_options": lambda t: lists_options(t, "\\$1,200"),
    "word_numbers": word_numbers,
    "split_steps": split_steps,
    "arithmetic.score": lambda t: ARITH.score(t, ARITH_REF),
    "arithmetic.feedback": lambda t: ARITH.feedback(t, ARITH_REF),
    "arithmetic.leak_check": lambda t: check_leak(t, ARITH_REF, ARITH, problem="123 + 456 ="),
    "arithmetic.task_leak_check": lambda t: ARITH.leak_check(t, ARITH_REF),
    "extract_code": extract_code,
    "extract_code(entry_point)": lambda t: extract_code(t, "f"),
    "code.leak_check": lambda t: check_leak(t, CODE_REF, CODE, problem="def f(x):"),
    "code.task_leak_check": lambda t: CODE.leak_check(t, CODE_REF),
    "llm.parse_json": _json_or_error,
    "invalid_text": invalid_text,
}


class _Slow(Exception):
    pass


def _raise_slow(signum, frame):
    raise _Slow


def _timed(name: str, call, text: str, guard_s: float, what: str) -> float:
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, guard_s)
    try:
        call(text)
    except _Slow:
        pytest.fail(f"{name} took over {guard_s} s on {what}: a pattern super-linear in the text's length")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - t0


HINTS = {"math.leak_check", "math.leak_check(symbolic)", "arithmetic.leak_check", "code.leak_check"}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_linear_on_long_runs(name):
    """Each run at a short and a long length (a cubic pattern stalls on the short one, and math scoring reads only
    the last 6,000 characters), then the slowest case at SCALE times the long length: a linear function takes about
    SCALE times as long there, a quadratic one SCALE squared times, past the guard."""
    call = FUNCTIONS[name]
    lengths = (HINT_RUN,) if name in HINTS else (SHORT_RUN, RUN)
    previous = signal.signal(signal.SIGALRM, _raise_slow)
    try:
        slowest = (-1.0, "", "", "")
        for run in RUNS:
            for before, after in AROUND:
                for length in lengths:
                    what = f"{before!r} + {run!r} x {length // len(run)} + {after!r}"
                    took = _timed(name, call, before + run * (length // len(run)) + after, GUARD_S, what)
                    if length == lengths[-1]:
                        slowest = max(slowest, (took, before, run, after))
        took, before, run, after = slowest
        n = SCALE * lengths[-1] // len(run)
        longer = _timed(name, call, before + run * n + after, SCALE * GUARD_S, f"{before!r} + {run!r} x {n} + {after!r}")
    finally:
        signal.signal(signal.SIGALRM, previous)
    print(f"{name}: slowest {took:.3f} s on {before!r} + {run!r} ..., {SCALE}x longer {longer:.3f} s")
