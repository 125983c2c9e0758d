"""MENTOR: a live LangGraph mentor for GRPO groups that collapse to zero reward: it diagnoses, hints, re-attempts."""

from mentor.shipped import map_checkout as _map_checkout
from mentor.types import Attempt, Diagnosis, FailedGroup, InputError, Intervention, LeakVerdict

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (dynamic version)

# graphs/ and prompts/ sit at the repository's top (the layout users edit, and `langgraph dev` reads); the wheel
# installs them inside this package, as mentor.graphs and mentor.prompts (pyproject's package-dir). Run from a
# checkout, those two names, and no other folder of it, resolve to the repository's folders (mentor.shipped).
_map_checkout()

# The public API: what README and docs import from `mentor`. The rest is reached by its module path.
__all__ = ["Attempt", "Diagnosis", "FailedGroup", "InputError", "Intervention", "LeakVerdict", "Mentor",
           "MentorCallback", "MentorConfig"]

# Loaded when first asked for: Mentor brings LangGraph, MentorCallback transformers (the TRL side).
_LAZY = {"Mentor": "mentor.api", "MentorCallback": "mentor.trl.callback", "MentorConfig": "mentor.config"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mentor' has no attribute {name!r}")
