"""The hint library node: reads the problem's pre-defined hint, the way peer systems use offline hints."""

from __future__ import annotations

from typing import Any

from mentor.leakage.fold import visible_text
from mentor.runtime.state import LIBRARY_FIELD, MentorStateBase
from mentor.tasks.base import HINT_TIERS

LIBRARY_TIER = max(HINT_TIERS)  # the library holds partial solutions


async def hint_library(state: MentorStateBase) -> dict[str, Any]:
    """The problem's `hint` reference field (`LIBRARY_FIELD`) as the draft; no hint if the library has none for it."""
    hint = str(state["group"]["reference"].get(LIBRARY_FIELD) or "").strip()
    return {"draft": hint, "tier": LIBRARY_TIER, "withheld": not hint, "backend": {"hint_library": "rules"}}


async def hint_unchecked(state: MentorStateBase) -> dict[str, Any]:
    """The draft as the hint, with no leakage check: for baselines that give what peers give whatever it reveals
    (execution feedback quotes the failing test and its expected value, which the checker calls a leak)."""
    return {"hint": visible_text(state["draft"]) or None}
