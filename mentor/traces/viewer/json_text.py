"""Strict JSON text for the page and the server's answers, and making it safe inside a <script> element."""

from __future__ import annotations

import json
import math
from typing import Any


def _finite(value: Any) -> Any:
    """The value with NaN and infinities (which JSON cannot hold; a reward can be -inf) as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Strict JSON (no NaN or Infinity, which the browser's JSON.parse rejects)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def script_safe(text: str) -> str:
    r"""JSON text made safe inside a <script> element: `<`, `>` and `&` (which JSON has only inside strings)
    become `\u003c`, `\u003e`, `\u0026`, so no text in the data (a completion holding `</script>` or
    `<!--`) can end the element or start markup. JSON.parse reads the same strings back."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
