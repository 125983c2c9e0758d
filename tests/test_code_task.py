"""The `code` task: HumanEval through the sandbox, the reward's resistance to cheating, verifier
feedback, the four nodes' rules, the leakage checker and the LLM prompt files."""

from __future__ import annotations

import os

import pytest

from mentor.data.humaneval import load_humaneval
from mentor.rewards import code_reward, code_reward_partial
from mentor.runtime import MentorRuntime
from mentor.sandbox import SandboxPool
from mentor.sandbox.harness import harness_source
from mentor.tasks import get_task
from mentor.tasks.code import TAXONOMY, CodeTask, extract_code
from mentor.types import Attempt, Diagnosis, FailedGroup, InputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(2, prelude=harness_source())
    yield p
    p.close()


@pytest.fixture(scope="module")
def task(pool):
    return CodeTask(timeout_s=2, pool=pool)


@pytest.fixture(scope="module")
def he():
    return {p["task_id"]: p for p in load_humaneval()}


def fb_of(task, completion, problem):
    return task.feedback(completion, problem)


# --- HumanEval --------------------------------------------------------------------------------------


def test_humaneval_loads_offline(he):
    assert len(he) == 164
    p = he["HumanEval/0"]
    assert p["entry_point"] == "has_close_elements" and "def check(candidate)" in p["test"]


def test_the_training_dataset_asks_what_mentor_failures_and_eval_measured():
    from mentor.data.humaneval import chat_prompt, humaneval_dataset, load_humaneval

    [row] = humaneval_dataset(limit=1, chat=True)
    assert row["prompt"] == [{"role": "user", "content": chat_prompt(load_humaneval(1)[0]["prompt"])}]
    assert row["prompt"][0]["content"].startswith("Complete this Python function. Reply with the whole function")


def test_all_canonical_solutions_pass(task, he):
    problems = list(he.values())
    rewards = task.reward([p["canonical_solution"] for p in problems],
                          test=[p["test"] for p in problems], entry_point=[p["entry_point"] for p in problems],
                          prompts=[p["prompt"] for p in problems])
    failed = [p["task_id"] for p, r in zip(problems, rewards) if r != 1.0]
    assert failed == []


WRONG = {
    # name: (task id, completion, expected class)
    "wrong value": ("HumanEval/0", "    return False\n", "wrong_answer"),
    "index error": ("HumanEval/12", "    return sorted(strings, key=len)[-1]\n", "runtime_error"),
    "infinite loop": ("HumanEval/0", "    while True:\n        pass\n", "timeout"),
    "syntax": ("HumanEval/0", "```python\ndef has_close_elements(numbers, threshold)\n    return False\n```",
               "syntax_error"),
    "missing": ("HumanEval/0", "```python\ndef close(numbers, threshold):\n    return False\n```", "missing_function"),
    "signature": ("HumanEval/0", "```python\ndef has_close_elements(numbers):\n    return False\n```",
                  "wrong_signature"),
    "prose": ("HumanEval/0", "Compare every pair of numbers and check the distance.", "no_code"),
    "bad import": ("HumanEval/0", "```python\nimport numpy_is_not_here\ndef has_close_elements(n, t):\n"
                   "    return False\n```", "definition_error"),
    "memory": ("HumanEval/0", "    x = [0] * (10 ** 10)\n    return True\n", "resource_limit"),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_known_wrong_solutions_fail_with_the_right_class(task, he, name):
    tid, completion, cls = WRONG[name]
    p = he[tid]
    fb = fb_of(task, completion, p)
    assert fb["kind"] == cls, fb
    assert task.score(completion, p) == 0.0
    assert task.classify(Attempt(completion, 0.0, fb), p) == cls
    assert fb["message"]


def test_feedback_details(task, he):
    fb = fb_of(task, "    return sorted(strings, key=len)[-1]\n", he["HumanEval/12"])
    assert fb["exception"]["type"] == "IndexError" and fb["exception"]["line"] == 1
    assert fb["failing_test"] == "assert candidate([]) == None"
    assert "IndexError" in fb["exception"]["traceback"]
    fb = fb_of(task, "    return False\n", he["HumanEval/0"])
    assert fb["got"] == "False" and fb["failing_test"].startswith("assert candidate([1.0, 2.0, 3.9")
    assert fb["passed"] == 3 and fb["failed"] == 4
    fb = fb_of(task, "```python\ndef has_close_elements(numbers, threshold)\n    return False\n```", he["HumanEval/0"])
    assert fb["syntax"]["line"] == 1 and "expected ':'" in fb["syntax"]["message"]
    fb = fb_of(task, "    while True:\n        pass\n", he["HumanEval/0"])
    assert fb["failing_test"].startswith("assert candidate(") and fb["failing_test_line"] == 10


def test_a_whole_function_runs_after_the_prompts_imports(task, he):
    """Qwen2.5-Coder restates the function without `from typing import List`: HumanEval's prompt + completion would
    run it, so the harness runs the prompt's import lines before it (line numbers stay the completion's own)."""
    p = he["HumanEval/0"]
    bare = ("def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
            "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n")
    assert task.score(bare, p) == 1.0
    assert task.score(bare, {**p, "prompt": ""}) == 0.0  # no prompt, no imports: NameError on List
    raising = "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n    return 1 / 0\n"
    fb = fb_of(task, raising, p)
    assert fb["exception"]["type"] == "ZeroDivisionError" and fb["exception"]["line"] == 2
    future = "from __future__ import annotations\n" + bare  # still first in its own source: the imports run apart
    assert fb_of(task, future, p)["kind"] == "pass"


def test_partial_credit(task, he, pool):
    p = he["HumanEval/0"]
    assert task.score("    return False\n", p) == 0.0
    partial = CodeTask(partial_credit=True, pool=pool)
    assert partial.score("    return False\n", p) == pytest.approx(3 / 7)
    cols = dict(test=[p["test"]], entry_point=[p["entry_point"]], prompts=[p["prompt"]])
    assert code_reward(["    return False\n"], **cols) == [0.0]
    assert code_reward_partial(["    return False\n"], **cols) == [pytest.approx(3 / 7)]
    assert code_reward(["    return False\n"], partial_credit=True, **cols) == [pytest.approx(3 / 7)]


def test_code_reward_trl_signature_and_formats(he):
    p = he["HumanEval/12"]
    full = p["prompt"] + p["canonical_solution"]
    completions = [
        [{"role": "assistant", "content": f"Here it is:\n```python\n{full}```\nDone."}],  # conversational
        p["canonical_solution"],                                                       # a body after the prompt
        f"<think>easy</think>\n```python\n{full}",                                     # unclosed fence
        "```python\ndef longest(strings):\n    return None\n```",                      # wrong
    ]
    n = len(completions)
    rewards = code_reward(completions, test=[p["test"]] * n, entry_point=[p["entry_point"]] * n,
                          prompts=[p["prompt"]] * n, completion_ids=[[1]] * n, trainer_state=None)
    assert rewards == [1.0, 1.0, 1.0, 0.0]


def test_mbpp_style_rows_with_module_level_asserts(task):
    ref = {"test": "assert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(2, 2) == 4",
           "entry_point": "add", "prompt": "Write a function add(a, b) that returns a + b."}
    assert task.score("```python\ndef add(a, b):\n    return a + b\n```", ref) == 1.0
    fb = task.feedback("```python\ndef add(a, b):\n    return a * b\n```", ref)
    assert fb["kind"] == "wrong_answer" and fb["passed"] == 1 and fb["failed"] == 2


# --- cheating ------------------------------------------------------------------------------------------

CHEATS = {
    "sys.exit before the tests": "import sys\ndef has_close_elements(n, t):\n    return True\nsys.exit(0)\n",
    "os._exit before the tests": "import os\ndef has_close_elements(n, t):\n    return True\nos._exit(0)\n",
    "os._exit inside the function": "import os\ndef has_close_elements(n, t):\n    os._exit(0)\n",
    "sys.exit inside the function": "import sys\ndef has_close_elements(n, t):\n    sys.exit(0)\n",
    "redefine check": "def has_close_elements(n, t):\n    return None\ndef check(candidate):\n    pass\n",
    "catch everything": "def has_close_elements(n, t):\n    try:\n        raise ValueError\n"
                        "    except BaseException:\n        return None\n",
    "always-equal object": "class Eq:\n    def __eq__(self, other):\n        return True\n"
                           "    __hash__ = None\ndef has_close_elements(n, t):\n    return Eq()\n",
    "always-equal int subclass": "class I(int):\n    def __eq__(self, o):\n        return True\n"
                                 "def has_close_elements(n, t):\n    return I(0)\n",
    "always-equal inside a list": "class Eq:\n    def __eq__(self, o):\n        return True\n"
                                  "def has_close_elements(n, t):\n    return [Eq()]\n",
    "patched builtins": "import builtins\nbuiltins.bool = lambda *a: True\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
                        "def has_close_elements(n, t):\n    return None\n",
    "fake result line": "print('\\x1eMENTOR-RESULT 00 {\"kind\": \"pass\", \"passed\": 7, \"failed\": 0}')\n"
                        "import os\ndef has_close_elements(n, t):\n    print(\"\\x1eMENTOR-RESULT x {'kind': 'pass'}\")\n"
                        "    os._exit(0)\n",
    "atexit fake": "import atexit, os\natexit.register(lambda: print('all tests passed'))\n"
                   "def has_close_elements(n, t):\n    raise SystemExit(0)\n",
    "patched ast and traceback": "import ast, traceback\nast.parse = lambda *a, **k: ast.Module(body=[], type_ignores=[])\n"
                                 "traceback.extract_tb = None\ndef has_close_elements(n, t):\n    return None\n",
    "raise in __eq__ and __repr__": "class E:\n    def __eq__(self, o):\n        raise SystemExit(0)\n"
                                    "    def __repr__(self):\n        raise SystemExit(0)\n"
                                    "def has_close_elements(n, t):\n    return E()\n",
    "kill itself": "import os, signal\ndef has_close_elements(n, t):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
                   "    os._exit(0)\n",
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_cheats_earn_nothing(task, he, pool, name):
    p = he["HumanEval/0"]
    completion = "```python\n" + CHEATS[name] + "```"
    assert task.score(completion, p) == 0.0, task.feedback(completion, p)
    partial = CodeTask(partial_credit=True, pool=pool)
    assert partial.score(completion, p) < 0.5  # no cheat gets more than the honest `return False` (3/7)


def test_shadowing_a_builtin_the_tests_use_earns_nothing(task, he):
    p = he["HumanEval/4"]  # every assert is `abs(candidate(...) - x) < 1e-6`
    cheat = "abs = lambda x: 0\ndef mean_absolute_deviation(numbers):\n    return 123\n"
    assert task.score("```python\n" + cheat + "```", p) == 0.0
    # A solution may still use its own helper of a builtin's name.
    own = "def abs(x):\n    return x if x > 0 else -x\n" + p["prompt"].split("def mean_absolute_deviation")[0] + \
        "def mean_absolute_deviation(numbers):\n    m = sum(numbers) / len(numbers)\n" \
        "    return sum(abs(x - m) for x in numbers) / len(numbers)\n"
    assert task.score("```python\n" + own + "```", p) == 1.0


def test_tests_that_do_not_parse_are_a_dataset_error_naming_the_row(task):
    with pytest.raises(InputError, match="'test' of the code problem with entry_point 'f' is not valid Python"):
        task.reward(["```python\ndef f():\n    return 1\n```"], test=["assert f(=="], entry_point=["f"])


def test_honest_solution_still_passes_after_cheat_checks(task, he):
    p = he["HumanEval/0"]
    assert task.score("```python\n" + p["prompt"] + p["canonical_solution"] + "```", p) == 1.0


# --- extraction --------------------------------------------------------------------------------------


def test_extract_code():
    assert extract_code("```python\nx = 1\n```") == "x = 1\n"
    two = "```python\ndef helper():\n    pass\n```\ntext\n```python\ndef f(a):\n    return a\n```"
    assert extract_code(two, "f") == "def f(a):\n    return a\n"
    assert "def helper" in extract_code(two) and "def f" in extract_code(two)
    assert extract_code("```py\ndef f():\n    return 1") == "def f():\n    return 1\n"  # unclosed
    assert extract_code("<think>```python\nbad\n```</think>```python\ngood = 1\n```") == "good = 1\n"
    assert extract_code("The answer is to sort the list.") is None
    assert extract_code("") is None
    assert extract_code("    return x + 1") == "    return x + 1\n"
    assert extract_code([{"role": "assistant", "content": "```\ny = 2\n```"}]) == "y = 2\n"
    # No opening fence, then a closing one and prose (seen from Qwen2.5-Coder at T = 1): the function, not the prose
    stray = "def f(a):\n    return a\n```\n\nThis function's loop isn't needed."
    assert extract_code(stray, "f") == "def f(a):\n    return a\n"
    assert extract_code(stray) == "This function's loop isn't needed.\n"  # no entry point named: the old reading


# --- the four nodes' rules -------------------------------------------------------------------------------


def make_group(task, problem, completions, previous=None):
    attempts = [Attempt(c, 0.0, task.feedback(c, problem)) for c in completions]
    ref = {k: problem[k] for k in ("test", "entry_point", "prompt", "canonical_solution")}
    return FailedGroup(problem["task_id"], "code", problem["prompt"], ref, attempts, previous or [])


def test_registry_and_taxonomy():
    t = get_task("code")
    assert isinstance(t, CodeTask) and t.name == "code"
    assert t.reference_fields == ("test", "entry_point")
    assert {"syntax_error", "runtime_error", "wrong_answer", "timeout", "missing_function", "wrong_signature",
            "no_code"} <= set(TAXONOMY)


def test_analyse_is_grounded_in_the_feedback(task, he):
    p = he["HumanEval/12"]
    group = make_group(task, p, ["    return sorted(strings, key=len)[-1]\n"] * 3 + ["    return 5\n"])
    classes = [task.classify(a, group.reference) for a in group.attempts]
    assert classes == ["runtime_error"] * 3 + ["wrong_answer"]
    cause, step = task.analyse(group, classes)
    assert "IndexError" in cause and "candidate([])" in cause and "3 of 4" in cause
    assert step == 1


def test_a_tie_gets_one_class_from_the_node_and_the_root_cause(task, he):
    # One timeout, one runtime error: the analyst node's `error_class` and `analyse`'s root cause break the tie
    # with the same rule, so both speak of the class that blocks the other (the timeout).
    p = he["HumanEval/12"]
    group = make_group(task, p, ["    while True:\n        pass\n", "    return sorted(strings, key=len)[-1]\n"])
    assert [a.feedback["kind"] for a in group.attempts] == ["timeout", "runtime_error"]
    result = MentorRuntime().run([group])[0]
    assert result.error is None, result.error
    assert result.diagnosis.error_classes == {"timeout": 1, "runtime_error": 1}
    assert result.diagnosis.error_class == "timeout"
    assert "does not finish in time" in result.diagnosis.root_cause and "IndexError" not in result.diagnosis.root_cause
    assert result.diagnosis.root_cause.endswith("(1 of 2 attempts)")
    # The same with the attempts in the other order: the tie-break is the taxonomy's, not the attempts' order.
    flipped = make_group(task, p, [a.completion for a in reversed(group.attempts)])
    cause, _ = task.analyse(flipped, ["runtime_error", "timeout"])
    assert cause == result.diagnosis.root_cause


def test_compose_three_tiers_that_do_not_leak(task, he):
    for tid, wrong in (("HumanEval/12", "    return sorted(strings, key=len)[-1]\n"),
                       ("HumanEval/0", "    return False\n"),
                       ("HumanEval/0", "    while True:\n        pass\n")):
        p = he[tid]
        group = make_group(task, p, [wrong, wrong])
        classes = [task.classify(a, group.reference) for a in group.attempts]
        cause, step = task.analyse(group, classes)
        diag = Diagnosis(classes[0], {classes[0]: 2}, cause, step)
        hints = [task.compose(group, diag, tier, None) for tier in (1, 2, 3)]
        assert len(set(hints)) == 3
        for h in hints:
            verdict = task.leak_check(h, group.reference)
            assert not verdict.leaked, (h, verdict)
            assert "```" not in h
        assert any("candidate(" in h for h in hints[1:])  # tiers 2 and 3 point at the failing call
        careful = task.compose(group, diag, 3, "it leaked")
        assert "candidate(" not in careful and not task.leak_check(careful, group.reference).leaked


def test_choose_tier_escalates(task, he):
    p = he["HumanEval/0"]
    group = make_group(task, p, ["    return False\n"], previous=[{"tier": 1, "hint": "x"}])
    assert task.choose_tier(group, Diagnosis()) == 2


# --- leakage ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ref12(he):
    p = he["HumanEval/12"]
    return {k: p[k] for k in ("test", "entry_point", "prompt", "canonical_solution")}


@pytest.mark.parametrize("hint, detector", [
    ("Use this: maxlen = max(len(x) for x in strings) and then scan again.", "solution_copy"),
    ("Compute m = max(len(s) for s in strs) and return the first s with len(s) == m.", "solution_copy"),
    ("Try:\n```python\nif not strings:\n    return None\n```", "code_in_hint"),
    ("for s in words:\n    if len(s) == top: return s", "code_in_hint"),
    ("For the list ['x', 'yyy', 'zzzz', 'www', 'kkkk', 'abc'] the answer must be 'zzzz'.", "test_output"),
    ("The hidden test expects zzzz as the result.", "test_output"),
])
def test_leak_check_rejects(task, ref12, hint, detector):
    verdict = task.leak_check(hint, ref12)
    assert verdict.leaked and detector in verdict.detectors, verdict
    assert verdict.reason


@pytest.mark.parametrize("hint", [
    "Think about what should happen when the list is empty.",
    "Find the greatest length first, then return the first string that has it.",
    "Your function raises IndexError on `candidate([])`; handle that input before indexing.",
    "Return None for an empty input and keep the first of several equally long strings.",
])
def test_leak_check_accepts_teaching_hints(task, ref12, hint):
    assert not task.leak_check(hint, ref12).leaked


# A short or one-line reference is quoted whole, or its comprehension, its local names renamed (HumanEval's own
# canonical solutions; the second field replaces the solution where it is not None).
@pytest.mark.parametrize("tid, solution, hint", [
    ("HumanEval/41", "    return n*n\n", "The body is `return n*n`."),
    ("HumanEval/41", "    return n*n\n", "Return k * k."),
    ("HumanEval/41", None, "The body is `return n**2`."),
    ("HumanEval/53", None, "Return a + b."),
    ("HumanEval/7", None, "Use [x for x in strings if substring in x]."),
    ("HumanEval/7", None, "Keep `[s for s in strings if substring in s]`."),
    ("HumanEval/30", None, "Try [n for n in l if n > 0]."),
    ("HumanEval/42", None, "Build `[v + 1 for v in l]`."),
    ("HumanEval/16", None, "Compute len(set(s.lower()))."),
])
def test_leak_check_rejects_a_short_solution_quoted(task, he, tid, solution, hint):
    ref = dict(he[tid], canonical_solution=solution or he[tid]["canonical_solution"])
    verdict = task.leak_check(hint, ref)
    assert verdict.detectors == ["solution_copy"] and "reference solution" in verdict.reason, verdict


# The function, its parameters and idioms that the solution also uses are not the solution.
@pytest.mark.parametrize("tid, hint", [
    ("HumanEval/7", "filter_by_substring(strings, substring) keeps the strings that contain substring."),
    ("HumanEval/7", "Use a list comprehension with an if clause; `substring in s` is True when s contains it."),
    ("HumanEval/41", "Every car meets every car of the other side: count n times n meetings."),
    ("HumanEval/53", "add(x, y) must return the sum of x and y."),
    ("HumanEval/0", "Walk with `for i, x in enumerate(numbers):` and compare each pair with abs()."),
    ("HumanEval/87", "Use `for i in range(len(lst))` to walk the rows."),
    ("HumanEval/3", "Return False once the loop ends without the balance dropping below zero."),
    ("HumanEval/1", "`return result` at the end, once every group is closed."),
    ("HumanEval/138", "Use `n % 2 == 0` to test evenness."),
    ("HumanEval/28", "Join the pieces with ''.join(...)."),
    ("HumanEval/23", "Python's built-in len gives the number of characters of string."),
])
def test_leak_check_accepts_names_and_idioms(task, he, tid, hint):
    assert not task.leak_check(hint, he[tid]).leaked, task.leak_check(hint, he[tid])


# --- caching -------------------------------------------------------------------------------------------


def test_feedback_is_cached(he, pool):
    class Counting:
        def __init__(self):
            self.n = 0

        def map(self, programs, **kw):
            self.n += len(programs)
            return pool.map(programs, **kw)

    counting = Counting()
    t = CodeTask(pool=counting, timeout_s=4.5)
    p = he["HumanEval/0"]
    assert t.score("    return 0\n", p) == 0.0
    t.feedback("    return 0\n", p)
    t.classify(Attempt("    return 0\n"), p)
    CodeTask(pool=counting, timeout_s=4.5).feedback("    return 0\n", p)  # shared by instances
    assert counting.n == 1


# --- prompt files ----------------------------------------------------------------------------------------

PLACEHOLDERS = dict(task="code", problem="P", reference="R", attempts="A", taxonomy="T", diagnosis="D", tier=2,
                    previous_hints="H", feedback="F", hint="X", json_schema="S")


@pytest.mark.parametrize("node, keys", [
    ("error_classifier", ['"classes"']),
    ("root_cause_analyst", ['"root_cause"', '"first_error_step"']),
    ("hint_composer", ['"hint"', '"tier"']),
    ("leakage_checker", ['"leaked"', '"reason"']),
])
def test_prompt_files_format(node, keys):
    path = os.path.join(ROOT, "prompts", "code", f"{node}.md")
    with open(path) as f:
        template = f.read()
    text = template.format(**PLACEHOLDERS)
    for k in keys:
        assert k in text
    assert "JSON" in text and "JSON schema: S" in text
    for name in ("problem", "reference", "task", "json_schema"):
        assert "{" + name + "}" in template
    assert "{" not in text.replace("{{", "").split("JSON object")[-1].split(":", 1)[0]


def test_invisible_characters_do_not_hide_a_copied_line_or_a_test_output(task, ref12):
    copied = "Use this: maxlen\u200b = max(len(x)\u2060 for x in strings) and then scan again."
    assert "solution_copy" in task.leak_check(copied, ref12).detectors
    assert "test_output" in task.leak_check("The hidden test expects zz\u200bzz as the result.", ref12).detectors
