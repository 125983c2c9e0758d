"""Failed groups that several test files diagnose: the rows `mentor diagnose` reads, and `group` to build one."""

import json

from mentor.types import FailedGroup

# 158 + 267 = 425: a carry into the tens and into the hundreds.
ARITHMETIC = {"problem_id": "add-0042", "task": "arithmetic", "prompt": "Q: 158+267=? A:",
              "reference": {"answer": "0425", "operands": [158, 267]},
              "attempts": [{"completion": " 0415", "reward": 0.0}, {"completion": " 0325", "reward": 0.0},
                           {"completion": " 0435", "reward": 0.0}]}
MATH = {"problem_id": "m-1", "task": "math", "prompt": "What is 2+2?", "reference": {"answer": "4"},
        "attempts": [{"completion": "The answer is \\boxed{5}", "reward": 0.0}]}


def group(data: dict = ARITHMETIC) -> FailedGroup:
    return FailedGroup.from_dict(json.loads(json.dumps(data)))
