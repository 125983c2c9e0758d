"""The math task's hint drafts by tier: the concept (tier 1), the solution's first step (tier 2), its leading steps
(tier 3). Tiers 2 and 3 need a worked `solution` in the reference; without one every draft is the concept hint, and
without a concept (no `concepts`, no solution to infer one from) the format-only hint: advice written for another
kind of problem misleads more than it helps."""

from __future__ import annotations

import re
from typing import Any

from mentor.mathtext.steps import split_steps, word_list
from mentor.types import Diagnosis, listed

CONCEPTS = [  # (pattern in the reference solution, concept hint)
    (r"x_\(n\+1\)|a_\(n\+1\)|recurren|recursi", "Set up a recurrence: express the count (or term) for size n+1 in terms of smaller sizes."),
    (r"\bmod\b|modulo|≡|divisib|remainder", "Work modulo a well-chosen number: look at remainders and divisibility."),
    (r"induction", "Try induction: prove the statement for a small case, then show each case implies the next."),
    (r"AM-GM|≥2\*sqrt|>=2\*sqrt|arithmetic mean", "Use the AM-GM inequality, and check when equality holds."),
    (r"Cauchy", "Use the Cauchy-Schwarz inequality, and check when equality holds."),
    (r"pigeonhole", "Use the pigeonhole principle."),
    (r"Vieta|roots? of|factor", "Factor the expression, or use the relation between a polynomial's roots and coefficients."),
    (r"telescop|difference of", "Rewrite each term as a difference so that the sum telescopes."),
    (r"even|odd|parity", "Consider parity: what happens with even and odd values?"),
    (r"C\(|choose|binom", "Count with combinations: decide what is being chosen, and from how many."),
    (r"limit|converge|monoton|bounded", "Study monotonicity and bounds of the sequence to find its limit."),
    (r"prime", "Use prime factorisation and properties of primes."),
    (r"substitut|\bLet [a-z]=", "Introduce a substitution that simplifies the expression."),
]
_FORMAT_CLASSES = {"no_answer", "format_error", "truncated"}
FORMAT_HINT = "Finish with one final answer written as \\boxed{...}."
FORMAT_HINT_TRUNCATED = "Finish with one final answer written as \\boxed{...}, and keep the working short so it fits."


def hint_drafts(reference: dict[str, Any], diagnosis: Diagnosis, tier: int, tier3_fraction: float) -> list[str]:
    """Candidate hints, most helpful first; `MathTask.compose` keeps the first that does not leak."""
    return [draft for _, draft in tiered_drafts(reference, diagnosis, tier, tier3_fraction)]


def tiered_drafts(reference: dict[str, Any], diagnosis: Diagnosis, tier: int,
                  tier3_fraction: float) -> list[tuple[int, str]]:
    """`hint_drafts` with the tier each draft is: at most `tier`, lower ones after (the last is tier 1)."""
    steps = split_steps(reference.get("solution") or "")
    lead = ""
    if diagnosis.error_class in _FORMAT_CLASSES:
        lead = format_hint(diagnosis) + " "
    concept = concept_hint(reference)
    intro = lead + (f"{concept} " if concept else "")
    out = []
    if tier >= 3 and steps:
        for k in range(tier3_steps(steps, diagnosis, tier3_fraction), 0, -1):
            shown = " ".join(f"({i + 1}) {s}" for i, s in enumerate(steps[:k]))
            out.append((3, f"{lead}A correct solution starts like this: {shown} Continue from there."))
    if tier >= 2 and steps:
        first = re.split(r"(?<=[.;])\s", steps[0])[0]
        out.append((2, f"{intro}Start like this: {first}"))
        masked = re.sub(r"\d+(?:\.\d+)?", "…", first)
        out.append((2, f"{intro}Start like this: {masked}"))
    out.append((1, f"{lead}{concept}" if concept else format_hint(diagnosis)))  # nothing specific: the format alone
    return out


def format_hint(diagnosis: Diagnosis) -> str:
    """The format-only hint, which fits every problem: one boxed final answer (and short working after a cut)."""
    return FORMAT_HINT_TRUNCATED if diagnosis.error_class == "truncated" else FORMAT_HINT


def tier3_steps(steps: list[str], diagnosis: Diagnosis, tier3_fraction: float) -> int:
    """Most leading steps a tier-3 hint shows: at most `tier3_fraction` of the words, never the last step,
    and up to the step where the attempts go wrong when that is known."""
    total = sum(len(word_list(s)) for s in steps) or 1
    k, used = 0, 0
    for s in steps[:-1]:
        used += len(word_list(s))
        if used / total > tier3_fraction:
            break
        k += 1
    if diagnosis.first_error_step:
        k = min(k, max(1, diagnosis.first_error_step))
    return max(k, 1 if len(steps) > 1 else 0)


def concept_hint(reference: dict[str, Any]) -> str | None:
    """The tier-1 hint: the problem's concept when the reference lists one (`concepts`: a list of statements, or
    one), else one inferred from keywords of the solution; None when neither says anything of this problem."""
    concepts = [c for c in listed(reference.get("concepts")) if isinstance(c, str) and c.strip()]
    if concepts:
        return f"Key idea: {concepts[0].strip()}"
    solution = reference.get("solution") or ""
    for pattern, text in CONCEPTS:
        if re.search(pattern, solution, re.I):
            return text
    return None
