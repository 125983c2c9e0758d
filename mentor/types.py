"""The data that flows through the mentor: failed groups in, interventions out, both plain JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# An attempt's annotated first wrong step in a failures file (mentor.data.champ writes it; `mentor eval` scores the
# analyst's `first_error_step` against it).
ANNOTATED_STEP = "annotated_first_wrong_step"


class InputError(ValueError):
    """A malformed failed group, config or dataset row. The message names the field and the fix."""


class Terminated(KeyboardInterrupt):
    """SIGTERM where a command takes it as Ctrl-C: a KeyboardInterrupt, so Ctrl-C's handlers keep the finished work;
    `mentor` then exits 143 (128 + SIGTERM), as Ctrl-C exits 130 (128 + SIGINT)."""


def listed(value: Any) -> list:
    """A reference field that holds a list of values (`answer_aliases`, `concepts`) as a list: a lone string is one
    value, never its characters; None or NaN (a blank pandas cell) is none; an array or tuple is its items."""
    if isinstance(value, (str, bytes)):
        return [value]
    try:
        return list(value)
    except TypeError:  # None, NaN, a number
        return []


@dataclass
class Attempt:
    """One failed completion of a group.

    Args:
        completion: the policy's text.
        reward: what the trainer's reward functions gave it.
        feedback: the verifier's feedback (filled by the task adapter when absent).
    """

    completion: str
    reward: float = 0.0
    feedback: dict[str, Any] | None = None


@dataclass
class FailedGroup:
    """A GRPO group whose completions all failed: the unit the mentor works on.

    Args:
        problem_id: stable id of the problem, used for its hint history.
        task: task adapter name (`arithmetic`, `math`, `code`).
        prompt: the problem as the policy saw it.
        reference: what the task needs to judge and hint (`answer`, `solution`, `operands`, `test`...).
        attempts: the failed completions.
        previous_hints: hints given earlier for this problem, oldest first, each `{"tier", "hint"}`;
            the composer escalates past them.
    """

    problem_id: str
    task: str
    prompt: str
    reference: dict[str, Any]
    attempts: list[Attempt]
    previous_hints: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> FailedGroup:
        if not isinstance(row, dict):
            raise InputError(f"a failed group must be a JSON object, got {type(row).__name__}")
        for key, kind in (("problem_id", str), ("task", str), ("prompt", str), ("reference", dict), ("attempts", list)):
            if key not in row:
                raise InputError(f"missing field '{key}': every failed group needs problem_id, task, prompt, reference and attempts")
            if not isinstance(row[key], kind):
                raise InputError(f"field '{key}' must be a {kind.__name__}, got {type(row[key]).__name__}")
        if not row["attempts"]:
            raise InputError("field 'attempts' is empty: a failed group needs at least one failed completion")
        attempts = []
        for i, a in enumerate(row["attempts"]):
            if not isinstance(a, dict) or not isinstance(a.get("completion"), str):
                raise InputError(f"attempts[{i}] needs a string 'completion' (and optionally 'reward', 'feedback')")
            reward = a.get("reward")
            reward = 0.0 if reward is None else reward  # unscorable, as training traces write it: a failure
            if not isinstance(reward, (int, float)) or isinstance(reward, bool):
                raise InputError(f"attempts[{i}].reward must be a number (what the reward functions gave), "
                                 f"got {reward!r}")
            feedback = a.get("feedback")
            if feedback is not None and not isinstance(feedback, dict):  # the rules read its fields
                raise InputError(f"attempts[{i}].feedback must be a JSON object (the verifier's feedback) or null, "
                                 f"got {type(feedback).__name__}")
            attempts.append(Attempt(a["completion"], float(reward), feedback))
        hints = row.get("previous_hints") or []  # null counts as none, as before
        if not isinstance(hints, list):
            raise InputError(f"field 'previous_hints' must be a list of {{\"tier\", \"hint\"}} objects, "
                             f"got {type(hints).__name__}")
        for i, h in enumerate(hints):
            tier = h.get("tier", 0) if isinstance(h, dict) else None
            if not isinstance(tier, int) or isinstance(tier, bool):  # the composer compares tiers
                raise InputError(f"previous_hints[{i}] must be a JSON object {{\"tier\": <integer>, \"hint\": "
                                 f"<text>}}, got {h!r}")
            if not isinstance(h.get("hint", ""), str):  # the composer reads it as text
                raise InputError(f"previous_hints[{i}].hint must be a string (the hint's text), "
                                 f"got {type(h['hint']).__name__}")
        return cls(row["problem_id"], row["task"], row["prompt"], dict(row["reference"]), attempts, list(hints))

    def to_dict(self) -> dict[str, Any]:
        # Written out, not dataclasses.asdict, which deep-copies every reference and feedback value: 2 µs against
        # 125 µs, twice per graph run.
        return {"problem_id": self.problem_id, "task": self.task, "prompt": self.prompt,
                "reference": dict(self.reference),
                "attempts": [{"completion": a.completion, "reward": a.reward, "feedback": a.feedback}
                             for a in self.attempts],
                "previous_hints": list(self.previous_hints)}


@dataclass
class Diagnosis:
    """What the classifier and the analyst concluded about a failed group."""

    error_class: str = "unknown"
    error_classes: dict[str, int] = field(default_factory=dict)
    root_cause: str = ""
    first_error_step: int | None = None


@dataclass
class LeakVerdict:
    """The leakage checker's verdict on one hint draft."""

    leaked: bool
    detectors: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass
class Intervention:
    """What the mentor did for one failed group. `hint` is None when it gave none."""

    problem_id: str
    task: str = ""
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    hint: str | None = None
    tier: int = 0
    withheld: bool = False
    leak: dict[str, Any] = field(default_factory=lambda: {"leaked_drafts": []})
    latency_s: dict[str, float] = field(default_factory=dict)
    backend: dict[str, str] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)  # "node: reason" per llm -> rules fallback
    error: str | None = None
    nodes: list[dict[str, Any]] = field(default_factory=list)
    error_traceback: str | None = None  # when a node raised: its traceback (mentor/runtime/node_errors.py)

    @property
    def redraw(self) -> bool:
        """Whether this is the retry control's re-draw (`hint_source: none`): no graph ran, so it has no hint, tier,
        leakage verdict or error class, only the group re-drawn unhinted (mentor/trl/hook.py)."""
        return self.backend.get("hint_source") == "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Intervention:
        row = dict(row)
        row["diagnosis"] = Diagnosis(**row.get("diagnosis", {}))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in row.items() if k in known})
