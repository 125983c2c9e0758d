"""What one `mentor demo` run does: its arms, labs and settings (`DemoSettings`), and the hinted arms' strategy."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mentor.lab.labs import LAB_STRATEGY, LABS
from mentor.types import InputError

ARMS = ("grpo", "static_hints", "mentor")
# The composed lab also has the retry control (`resample`: collapsed groups re-drawn unhinted), the mentor that
# chooses by predicted learning (`learning`: `hint_choice: learning`) and its control (`two_draws`: the same choice
# between two draws of the mentor's own hint), all in mentor.lab.composed_demo: what `--blocks` runs by default.
COMPOSED_ARMS = ("grpo", "resample", "static_hints", "mentor", "learning", "two_draws")
# Three more, trained by TRL's SDPOTrainer instead of GRPO, run when named: SDPO alone, with the seed's library hint
# as a collapsed group's feedback, and with the mentor's hint as that feedback.
SDPO_ARMS = ("sdpo", "sdpo_library", "sdpo_mentor")
# Two more, run when named (issue 55): `learning` with `hint_memory` (the hints that rescued, given again and offered
# as candidates), and the mentor with `correct_off_policy` (its stripped rows importance-weighted).
MORE_ARMS = ("memory", "mentor_iw")
# The arms that train with the seed's fixed library rule (measured before training, as a user would pick it).
LIBRARY_ARMS = ("static_hints", "sdpo_library")
SDPO_TEMPLATES = ("trl", "lab")  # the teacher reprompt's templates: TRL's defaults, or the lab's own hint line


@dataclass
class DemoSettings:
    """What one demo run does. Defaults are the full demo; `quick()` is the smoke run.

    Args:
        steps: GRPO steps per arm.
        prompts_per_step: problems per step (each gets `num_generations` completions).
        num_generations: GRPO group size G.
        learning_rate: peak learning rate.
        lr_scheduler: TRL/transformers `lr_scheduler_type`; cosine decay steadies the end of a short run.
        train_problems: hard training problems (operands 100-999).
        heldout_problems: held-out hard problems, never trained on, decoded greedily.
        eval_every: steps between held-out evaluations (the curve).
        seeds: one run per seed and arm.
        arms: which arms to run.
        pretrain: overrides of the lab's pre-training hyper-parameters.
        strategy: mentor config keys saying how both hinted arms splice hints (default: `LAB_STRATEGY`).
        static_hint_digits: leading answer digits of the `static_hints` library's hint (1 to 3; default 3, the
            best library measured, docs/lab.md); hint dependence is measured with a hint of this many digits.
        jobs: runs (arm and seed) trained at once, each in its own process on one CPU thread; 0 (the
            default) starts every run at once, up to two per core, so that no core idles while the
            slowest arm finishes.
        lab: `addition` (the default lab) or `composed` (the composed-skills lab: a seed selects its own pre-trained
            policy too, and `static_hints` is that seed's best fixed "reveal step k" rule; see docs/lab.md).
        sdpo_templates: the SDPO arms' teacher reprompt: `trl` (TRL's default templates) or `lab` (the lab's own
            hint line, `mentor.lab.composed_demo.LAB_SDPO_TEMPLATES`).
    """

    steps: int = 600
    prompts_per_step: int = 8
    num_generations: int = 8
    learning_rate: float = 1e-3
    lr_scheduler: str = "cosine"
    train_problems: int = 4000
    heldout_problems: int = 500
    eval_every: int = 50
    seeds: list[int] = field(default_factory=lambda: [0])
    arms: list[str] = field(default_factory=lambda: list(ARMS))
    pretrain: dict[str, Any] = field(default_factory=dict)
    strategy: dict[str, Any] = field(default_factory=lambda: dict(LAB_STRATEGY))
    static_hint_digits: int = 3
    jobs: int = 0
    lab: str = "addition"
    sdpo_templates: str = "trl"

    def __post_init__(self):
        at_least = {"steps": 1, "prompts_per_step": 1, "num_generations": 2, "train_problems": 1,
                    "heldout_problems": 1, "eval_every": 1, "jobs": 0}
        for name, low in at_least.items():
            if getattr(self, name) < low:
                raise InputError(f"{name} must be at least {low}, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise InputError(f"learning_rate must be above 0, got {self.learning_rate}")
        if not 1 <= self.static_hint_digits <= 3:
            raise InputError(f"static_hint_digits must be 1, 2 or 3 (4 would be the whole answer), "
                             f"got {self.static_hint_digits}")
        if self.lab not in LABS:
            raise InputError(f"lab: unknown lab {self.lab!r}; the labs are {list(LABS)}")
        if self.sdpo_templates not in SDPO_TEMPLATES:
            raise InputError(f"sdpo_templates: use one of {list(SDPO_TEMPLATES)}, got {self.sdpo_templates!r}")
        if self.sdpo_templates != "trl" and not set(SDPO_ARMS) & set(self.arms):
            raise InputError(f"sdpo_templates: {self.sdpo_templates!r} changes only the SDPO arms "
                             f"({', '.join(SDPO_ARMS)}); name one in arms, or leave the templates at 'trl'")
        if not self.seeds:
            raise InputError("seeds: give at least one seed")
        known = COMPOSED_ARMS + SDPO_ARMS + MORE_ARMS if self.lab == "composed" else ARMS
        unknown = set(self.arms) - set(known)
        if unknown or not self.arms:
            raise InputError(f"arms: unknown arm(s) {sorted(unknown)}; the {self.lab} lab's arms are {list(known)}")

    @classmethod
    def quick(cls) -> DemoSettings:
        return cls(steps=20, heldout_problems=100, eval_every=10, train_problems=500)

    @classmethod
    def for_lab(cls, lab: str, quick: bool = False) -> DemoSettings:
        """The full (or quick) settings of a lab: its record's `demo` fields (mentor.lab.labs: the composed lab trains
        at its own learning rate and strategy), less the budget `quick` sets."""
        if lab not in LABS:
            raise InputError(f"lab: unknown lab {lab!r}; the labs are {list(LABS)}")
        own = {k: dict(v) if isinstance(v, dict) else v for k, v in LABS[lab].demo.items()
               if not quick or k not in QUICK_KEYS}
        return replace(cls.quick() if quick else cls(), lab=lab, **own)


QUICK_KEYS = ("steps", "heldout_problems", "eval_every", "train_problems")
