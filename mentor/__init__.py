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

# The public API: what README and docs import from `mentor`. The rest is reached by its module path.
__all__ = ["Attempt", "Diagnosis", "FailedGroup", "InputError", "Intervention", "LeakVerdict", "Mentor",
           "MentorCallback", "MentorConfig"]

# Loaded when first asked for: Mentor brings LangGraph, MentorCallback transformers (the TRL side).
_LAZY = {"Mentor": "mentor.mentor", "MentorCallback": "mentor.trl.callback", "MentorConfig": "mentor.config"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mentor' has no attribute {name!r}")
