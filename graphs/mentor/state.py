"""The mentor graph's state: the library's keys (mentor.runtime.state) and the classifier's labels."""

from __future__ import annotations

from mentor.runtime.state import MentorStateBase


class MentorState(MentorStateBase, total=False):
    classes: list[str]               # error class per attempt (error_classifier)
