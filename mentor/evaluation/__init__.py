"""`mentor eval`: do a mentor config's hints rescue this policy's stored failures, what do they give away, what do
they cost. Each config's graph hints every failed group once; the policy then samples G seeded re-attempts per group
with the hint placed as the config says, and the task's verifier scores them. The row `none` samples with no hint.

One job a module: `annotations` (the failures file's annotated first wrong steps), `arguments` (the command's
arguments), `policy` (loading the policy), `inputs` (a group's token ids, hinted and not), `sampling`, `reliance`,
`intervals` (the rows' 95% intervals), `report` (the rows and the oracle), `page` (the HTML page) and `command`
(`mentor eval` itself). The library's names are importable from here; the command is not, so that importing them
never loads the command.
"""

from mentor.evaluation.inputs import Inputs, group_inputs
from mentor.evaluation.policy import Policy, load_policy
from mentor.evaluation.report import diagnosis_accuracy, error_class, evaluate, load_configs, with_columns
from mentor.evaluation.sampling import sample

__all__ = ["Inputs", "Policy", "diagnosis_accuracy", "error_class", "evaluate", "group_inputs", "load_configs",
           "load_policy", "sample", "with_columns"]
