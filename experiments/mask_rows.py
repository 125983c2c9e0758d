"""The mask-hint probe's hint kind and pre-training rows (docs/history.md, "Probe: one-digit mask hints"), kept out of
the package: `lab_mask_probe.py` and `lab_mask_train.py` import them, and hand `MaskRows` to
`mentor.lab.pretrain` as its `extra` rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mentor.tasks import arithmetic


def mask_hint(answer: str, column: int) -> str:
    """Hint text revealing one answer digit, the one at `column` (0 = thousands), e.g. `_7__`."""
    return "".join(ch if i == column else "_" for i, ch in enumerate(answer))


@dataclass
class MaskRows:
    """`mask_share`: share of rows (every step) that are one-digit mask-hint copy rows; `tail_mask_share`: share of
    tail rows whose prompt carries a mask hint of one of their (random) given digits. A share of 0 stays out of the
    cache key, as when these were knobs of the lab."""

    mask_share: float = 0.0
    tail_mask_share: float = 0.0
    hparams: dict[str, Any] = field(init=False)

    def __post_init__(self):
        self.hparams = {k: v for k, v in (("mask_share", self.mask_share), ("tail_mask_share", self.tail_mask_share))
                        if v}

    def row(self, rng, easy_pairs, random_hard_sum):
        if not (self.mask_share and rng.random() < self.mask_share):
            return None
        # `Hint: _7__` + an easy question; the response is a random hard-looking sum, given (no loss) up to column
        # c, then its digit at c (the hint's) trained, then cut (no EOS). Teaches "column c of my answer is the
        # hint's digit", never a hard sum.
        a, b = easy_pairs[rng.randrange(len(easy_pairs))]
        answer, c = random_hard_sum(), rng.randrange(3)
        prompt = arithmetic.hint_prompt(arithmetic.format_prompt(a, b), mask_hint(answer, c))
        return prompt, " " + answer[:c + 1], False, 1 + c

    def tail_prompt(self, rng, prompt, shown, given):
        if self.tail_mask_share and rng.random() < self.tail_mask_share:
            c = rng.randrange(given)  # a mask hint of one given digit: tens/units then learned under a hint line
            prompt = arithmetic.hint_prompt(prompt, mask_hint(shown, c))
        return prompt
