"""Verbatim overlap of a hint with the worked solution."""

from __future__ import annotations

from functools import lru_cache

from mentor.mathtext.steps import split_steps, word_list

DEFAULT_MIN_RUN = 12
MIN_FINAL_WORDS = 5  # a final step shorter than min_run but at least this long counts when copied whole


@lru_cache(maxsize=512)
def _solution_index(solution: str, n: int) -> tuple[int, int, dict, list[str]]:
    """(number of words, first word of the final step, n-gram -> start positions, words of the final step)."""
    steps = split_steps(solution)
    toks = word_list(solution)
    last_start = len(toks) - len(word_list(steps[-1])) if len(steps) > 1 else len(toks)
    index: dict[tuple, list[int]] = {}
    for i in range(len(toks) - n + 1):
        index.setdefault(tuple(toks[i:i + n]), []).append(i)
    return len(toks), last_start, index, toks[last_start:]


def solution_overlap(hint: str, solution: str, min_run: int = DEFAULT_MIN_RUN) -> tuple[float, bool]:
    """(fraction of the solution's words copied in runs of >= `min_run` words, whether a copied run lies in
    the solution's final step)."""
    total, last_start, index, tail = _solution_index(solution, min_run)
    if not total:
        return 0.0, False
    h, covered = word_list(hint), bytearray(total)
    for gram in {tuple(h[i:i + min_run]) for i in range(len(h) - min_run + 1)}:
        for p in index.get(gram, ()):
            covered[p:p + min_run] = b"\x01" * min_run
    final = any(covered[last_start:])
    if not final and MIN_FINAL_WORDS <= len(tail) < min_run:  # a short final step, copied whole
        final = f" {' '.join(tail)} " in f" {' '.join(h)} "
    return sum(covered) / total, final
