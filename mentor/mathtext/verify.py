"""math-verify, bounded: its timeouts on only in the main thread, every expression screened, every error caught."""

from __future__ import annotations

import logging
import threading
from typing import Any

from mentor.mathtext.cost import safe_expression
from mentor.mathtext.value import POINTS


def _timeout() -> int | None:
    if threading.current_thread() is threading.main_thread():
        return 2
    for name in ("math_verify.parser", "math_verify.grader"):  # as TRL does: silence "timeout disabled"
        logging.getLogger(name).setLevel(logging.ERROR)
    return None


def mv_parse(expr: str) -> list:
    """math-verify's parse of one short expression, wrapped as LaTeX math; [] when unsafe or on any error."""
    if not safe_expression(expr):
        return []
    try:
        from math_verify import parse

        return parse(expr if "$" in expr or "\\boxed" in expr else f"${expr}$", parsing_timeout=_timeout())
    except Exception:
        return []


def mv_equal(gold: list, target: list) -> bool:
    """math-verify's verify, with its timeout on only in the main thread; False on any error."""
    if not gold or not target:
        return False
    try:
        from math_verify import verify

        return bool(verify(gold, target, timeout_seconds=_timeout()))
    except Exception:
        return False


def numeric_screen(a: Any, b: Any) -> bool:
    """Cheap necessary condition for sympy expressions a == b: equal at a few substituted points."""
    try:
        import sympy

        symbols = sorted(a.free_symbols, key=str)
        for pts in POINTS:
            point = {s: sympy.Integer(p) for s, p in zip(symbols, pts)}
            x, y = complex(sympy.N(a.subs(point), 20)), complex(sympy.N(b.subs(point), 20))
            if not abs(x - y) <= 1e-9 * max(1.0, abs(x)):
                return False
        return True
    except Exception:
        return False
