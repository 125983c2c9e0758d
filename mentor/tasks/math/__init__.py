r"""Free-form math answers (CHAMP, GSM8K, MATH...): scoring, verifier feedback, error classes, and hints.

Scoring. The final answer is taken from the last `\boxed{}`, else `#### x`, else "the answer is x", else
the last number. It is compared with the reference `answer` (and `answer_aliases` when given):
1. without sympy where that decides it: exact values for numbers (`0.5` = `\frac{1}{2}`), values at fixed
   points for expressions (`\frac{2^n}{2}` = `2^(n-1)`), words for non-numeric answers (`No`,
   `No integer solutions`); this is fast and also right on CHAMP's plain-text answers (`2^(n-1)`,
   `sqrt(3)/3`), which math-verify's LaTeX parser reads differently;
2. else, for boxed answers, TRL's own `trl.rewards.accuracy_reward` (math-verify), our `answer` passed as
   its gold `solution` column, whose verdict stands (aliases aside);
3. else math-verify's parse/verify on the extracted answer.
The answer's written forms are read the same way on both sides (`mentor.mathtext.forms`): currency, units, degree
marks, percent and thousands separators (`\$1,200` = `1200`, `25\%` = `25` = `0.25`), text by its words (one word
exactly), tuples and intervals by items in order. A hedge is never equal: a word of choice (`or`, `either`) or a `±`
the answer lacks, or more items than it has (`\text{Yes or No}`, the seven weekdays for `Monday`). Not read: other
languages, Roman numerals, other bases, unit conversions (docs/leakage.md, "Answer forms").
Expressions that could stall sympy (exponent towers, huge factorials, powers and binomials: see
`mentor.mathtext.cost.expression_cost`) score 0 without reaching it, in any thread; feedback marks them
`answer_too_costly`. A row whose `answer` is None, NaN or blank scores 0, and `mentor.rewards.math_reward` gives it None.

The parts, one job each: `extract` (the final answer of a completion), `score` (the verifier's score),
`worked_steps` (numbers and arithmetic slips in a worked attempt, a solution's intermediate results), `feedback`
(the verifier's feedback), `taxonomy` (error classes), `hints` (the composer's drafts by tier), `task` (the adapter
and the four nodes' rules).
"""

from mentor.tasks.math.extract import answer_and_extraction, boxed_contents
from mentor.tasks.math.score import score_answer
from mentor.tasks.math.task import MathTask
from mentor.tasks.math.worked_steps import arithmetic_slips, numbers_in

__all__ = ["MathTask", "answer_and_extraction", "arithmetic_slips", "boxed_contents", "numbers_in", "score_answer"]
