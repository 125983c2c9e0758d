"""The hint library node: reads the problem's pre-defined hint, the way peer systems use offline hints."""

from __future__ import annotations

from typing import Any

from mentor.graphs.mentor.state import MentorState

LIBRARY_TIER = 3  # the library holds partial solutions


async def hint_library(state: MentorState) -> dict[str, Any]:
    """The problem's `hint` reference field as the draft; no hint if the library has none for it."""
    hint = str(state["group"]["reference"].get("hint") or "").strip()
    return {"draft": hint, "tier": LIBRARY_TIER, "withheld": not hint, "backend": {"hint_library": "rules"}}
