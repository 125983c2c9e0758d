"""The leakage checker: does a hint give away the final answer or the worked solution?

    from mentor.leakage import check_leak
    from mentor.tasks import get_task
    verdict = check_leak(hint, reference, get_task("math"), problem=None)   # a LeakVerdict; task None: generic only

docs/leakage.md is the one description of the detectors (their names are `DETECTORS` in `checker.py`, and
tests/test_leakage.py checks that the two lists agree), the short-answer rule, what is not a leak and the bounds.
The modules: `checker` (check_leak), `literals` and `number_words` (numbers in a hint), `symbolic`
(equivalent expressions), `context` (answer contexts), `overlap` (copied solution steps), `statements` (the
answers a hint states, each shown to the task's detector), `fold` (the text every detector reads). The math they share
with the math task is in `mentor.mathtext`.
"""

from mentor.leakage.checker import check_leak

__all__ = ["check_leak"]
