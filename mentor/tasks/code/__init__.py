"""The `code` task: Python problems with a prompt, tests and an entry point (HumanEval, MBPP-style).

The reward runs each completion against the problem's tests in the sandbox (`mentor.sandbox`): 1.0
when every test passes, else 0.0, or the share of passed asserts with `partial_credit=True`. The
trainer never execs model code; the test harness (`mentor.sandbox.harness`) runs inside the sandbox
and reports through a nonce-tagged record, so an early exit cannot earn a pass.

    from mentor.rewards import code_reward            # TRL reward function (columns test, entry_point)
    from mentor.rewards import code_reward_partial    # the same with partial credit

The parts, one job each: `extract` (code from a completion), `program` (the sandboxed program), `feedback` (what
a run says), `reference` (the tests' calls and the solution's features), `hints` (the composer's rules), `leaks`
(the task's leak detectors), `task` (the adapter), `taxonomy` (error classes).
"""

from mentor.tasks.code.extract import extract_code
from mentor.tasks.code.feedback import feedback_from_run
from mentor.tasks.code.program import build_program
from mentor.tasks.code.task import CodeTask
from mentor.tasks.code.taxonomy import TAXONOMY

__all__ = ["TAXONOMY", "CodeTask", "build_program", "extract_code", "feedback_from_run"]
