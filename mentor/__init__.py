"""MENTOR: rescues GRPO training from zero-reward collapse with a live LangGraph mentor."""

from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, Intervention, LeakVerdict

__version__ = "0.1.0"

__all__ = ["Attempt", "Diagnosis", "FailedGroup", "InputError", "Intervention", "LeakVerdict", "Mentor",
           "MentorCallback", "MentorConfig"]


def __getattr__(name):
    # The TRL side imports torch and trl: load it only when asked for.
    if name in ("Mentor", "MentorCallback"):
        from mentor import integration
        return getattr(integration, name)
    if name == "MentorConfig":
        from mentor.config import MentorConfig
        return MentorConfig
    raise AttributeError(name)
