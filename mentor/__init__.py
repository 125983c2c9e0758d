"""MENTOR: rescues GRPO training from zero-reward collapse with a live LangGraph mentor."""

from pathlib import Path as _Path

from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, Intervention, LeakVerdict

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (dynamic version)

# graphs/ and prompts/ sit at the repository's top (the layout users edit, and `langgraph dev` reads); the wheel
# installs them inside this package, as mentor.graphs and mentor.prompts (pyproject's package-dir). Run from a
# checkout (None: installed), the same two names resolve to the repository's folders, ahead of any install's copy.
_HERE = _Path(__file__).resolve().parent
_CHECKOUT = _HERE.parent if not (_HERE / "graphs").is_dir() and (_HERE.parent / "pyproject.toml").is_file() \
    and (_HERE.parent / "graphs" / "__init__.py").is_file() else None
if _CHECKOUT is not None:
    __path__.append(str(_CHECKOUT))

__all__ = ["Attempt", "Diagnosis", "FailedGroup", "InputError", "Intervention", "LeakVerdict", "Mentor",
           "MentorCallback", "MentorConfig"]


def __getattr__(name):
    # The TRL side imports torch and trl: load it only when asked for.
    if name == "Mentor":
        from mentor.mentor import Mentor
        return Mentor
    if name == "MentorCallback":
        from mentor.trl.callback import MentorCallback
        return MentorCallback
    if name == "MentorConfig":
        from mentor.config import MentorConfig
        return MentorConfig
    raise AttributeError(name)
