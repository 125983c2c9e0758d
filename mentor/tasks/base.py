"""What a task adapter supplies: a reward, verifier feedback, an error taxonomy and the rules of each node."""

from __future__ import annotations

from collections import Counter
from typing import Any

from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, LeakVerdict

HINT_TIERS = {1: "concept", 2: "strategy", 3: "partial step"}  # weakest first; the prompts name the same tiers


def clamp_tier(tier: int) -> int:
    """`tier` moved into the range of `HINT_TIERS`."""
    return max(min(HINT_TIERS), min(max(HINT_TIERS), int(tier)))


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a plain string, or the content of a conversational message list."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content", "") if isinstance(m.get("content"), str) else "" for m in completion)
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    return str(completion)


def usable(value: Any) -> bool:
    """Whether a reference value can be scored against: not None, NaN (a blank pandas cell), or an empty or
    blank string or list. The strings "None" and "nan" are kept: they may be real answers."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, tuple)):
        return bool(value)
    try:
        return bool(value == value)  # NaN is the one value not equal to itself
    except Exception:  # an array's comparison is no bool: it is a value, not a blank
        return True


class Task:
    """Base class of a task adapter. Subclasses set the class attributes and implement the methods.

    Attributes:
        name: the task's name in configs and failed groups.
        taxonomy: error class -> one-line meaning. The classifier never returns a class outside it.
        reference_fields: dataset columns a problem needs for the mentor to work on it.
        optional_reference_fields: columns that are used when present.
        score_fields: the reference fields `score` reads, which a reward needs; None: `reference_fields`.
        stand_ins: a required field -> the optional one it can be read from (`completed_reference`), so a dataset
            with the second column and not the first is served.
        field_meanings: a reference field -> how the mentor reads it, said at attach where a reward reads the same
            column.
    """

    name: str = ""
    taxonomy: dict[str, str] = {}
    reference_fields: tuple[str, ...] = ("answer",)
    optional_reference_fields: tuple[str, ...] = ("solution",)
    score_fields: tuple[str, ...] | None = None
    stand_ins: dict[str, str] = {}
    field_meanings: dict[str, str] = {}  # field -> how the mentor reads it, for the attach line's summary

    def completed_reference(self, reference: dict[str, Any]) -> dict[str, Any]:
        """The reference as this task reads it, from the fields a row has (see `stand_ins`); unchanged here."""
        return reference

    def absent_columns(self, columns: list[str], needed: tuple[str, ...] | None = None) -> list[str]:
        """The `needed` fields (default `reference_fields`) that `columns` lacks, with no stand-in column either."""
        needed = self.reference_fields if needed is None else needed
        return [f for f in needed if f not in columns and self.stand_ins.get(f) not in columns]

    # --- training -------------------------------------------------------------------------------
    def reward(self, completions: list[Any], **columns: Any) -> list[float | None]:
        """TRL reward-function signature; reads the reference from the dataset columns.

        A row whose reference lacks a required field (None, NaN, empty: see `usable`) gets None, never a reward:
        TRL treats None as unscorable (no advantage, left out of its group's baseline). Such rows are counted in
        the `mentor/reward_no_reference` metric by the reward functions of mentor/rewards.py."""
        needed = self.reference_fields if self.score_fields is None else self.score_fields
        refs = self.references_from_columns(len(completions), columns, needed)
        out = [None if not all(usable(ref.get(f)) for f in needed) else self.score(completion_text(c), ref)
               for c, ref in zip(completions, refs)]
        return out

    def score(self, completion: str, reference: dict[str, Any]) -> float:
        raise NotImplementedError

    def references_from_columns(self, n: int, columns: dict[str, Any], needed: tuple[str, ...] | None = None
                                ) -> list[dict[str, Any]]:
        """Each row's reference from the dataset `columns`: the `needed` fields (default `reference_fields`), and
        the optional ones present."""
        needed = self.reference_fields if needed is None else needed
        missing = self.absent_columns(list(columns), needed)
        if missing:
            raise InputError(f"task '{self.name}' needs dataset column(s) {missing}; add them or map them "
                             f"with the mentor config key 'columns'")
        fields = [f for f in needed + self.optional_reference_fields if f in columns]
        return [self.completed_reference({f: columns[f][i] for f in fields}) for i in range(n)]

    def dominant_class(self, counts: Counter[str], default: str | None = None) -> str | None:
        """The most frequent error class in `counts`; ties go to the earlier taxonomy class (an unknown class is
        last). `default` when `counts` is empty. The analyst node and the tasks' `analyse` share this rule, so the
        error class and the root cause speak of the same class.

        >>> from mentor.tasks import get_task
        >>> arithmetic = get_task("arithmetic")  # taxonomy: no_answer, missed_carry, ..., wrong_units
        >>> arithmetic.dominant_class(Counter(wrong_units=2, missed_carry=2, no_answer=1))
        'missed_carry'
        >>> arithmetic.dominant_class(Counter(made_up=3, wrong_units=3)), arithmetic.dominant_class(Counter(), "unknown")
        ('wrong_units', 'unknown')
        """
        order = list(self.taxonomy)
        return max(counts, key=lambda c: (counts[c], -order.index(c) if c in order else -len(order)), default=default)

    def missing_reference(self, reference: dict[str, Any]) -> list[str]:
        """Required reference fields that are absent, empty or NaN for one problem (see `usable`), once completed
        (`completed_reference`)."""
        reference = self.completed_reference(reference)
        return [f for f in self.reference_fields if not usable(reference.get(f))]

    def hinted_prompt(self, prompt: str, hint: str) -> str:
        """The prompt with the hint appended to the user's turn (`hint_placement: prompt`)."""
        return f"{prompt}\nHint: {hint}\n"

    def response_prefix(self, hint: str) -> str:
        """The start of the response for `hint_placement: prefix`: the hint, a partial solution."""
        return hint

    # --- the four nodes' rules backend ----------------------------------------------------------
    def feedback(self, completion: str, reference: dict[str, Any]) -> dict[str, Any]:
        """Verifier feedback for one completion (extracted answer, format problems...)."""
        raise NotImplementedError

    def classify(self, attempt: Attempt, reference: dict[str, Any]) -> str:
        """Error class (a key of `taxonomy`) of one failed attempt; `attempt.feedback` is filled."""
        raise NotImplementedError

    def analyse(self, group: FailedGroup, classes: list[str]) -> tuple[str, int | None]:
        """Root cause (text) and first wrong step (or None) of a group, from its classified attempts."""
        raise NotImplementedError

    def choose_tier(self, group: FailedGroup, diagnosis: Diagnosis) -> int:
        """Tier for the next draft (`HINT_TIERS`: 1 concept, 2 strategy, 3 partial step). Escalates past earlier
        hints."""
        earlier = max((h.get("tier", 0) for h in group.previous_hints), default=0)
        return clamp_tier(earlier + 1)

    def compose(self, group: FailedGroup, diagnosis: Diagnosis, tier: int, feedback: str | None) -> str:
        """A hint at `tier`; `feedback` is the leakage checker's reason when an earlier draft leaked."""
        raise NotImplementedError

    def format_only(self, hint: str) -> bool:
        """Whether `hint`, as `compose` wrote it, says nothing of its problem but the answer's format: what a task
        gives when its reference holds nothing problem-specific (counted: `mentor/format_only_hints`)."""
        return False

    def leak_check(self, hint: str, reference: dict[str, Any]) -> LeakVerdict:
        """Task-specific detectors, run on top of the generic ones in `mentor.leakage`."""
        return LeakVerdict(False)
