"""The offline CPU lab: a tiny policy that collapses to zero reward on hard addition, and hints that help.

- `mentor.lab.labs`: one record per lab (its task, response length, problems, pre-training recipe, committed
  policy and defaults), read by the machinery below; `mentor.lab.addition` and `mentor.lab.composed` are each
  lab's own module.
- `mentor.lab.data`: problems and datasets of any lab (no torch import); their prompt, answer and hint formats
  and the reward are the task's, in `mentor.tasks.arithmetic` (or `mentor.tasks.composed`).
- `mentor.lab.tokenizer`: the char-level tokenizer.
- `mentor.lab.model`: the small Llama policy.
- `mentor.lab.pretrain`: cached pre-training of either lab's policy (loading a checkpoint: `mentor.models.checkpoint`).
- `mentor.lab.sampling`: fast batched sampling and evaluation of either lab (greedy accuracy, a group's rewards).
- `mentor.lab.demo`: the `mentor demo` experiment (its settings in `mentor.lab.demo_settings`, its runs in parallel
  processes in `mentor.lab.demo_pool`, the command in `mentor.lab.demo_cli`); `mentor.lab.report`: its HTML report.
- The composed-skills lab (`mentor demo --lab composed`, `lab="composed"` above): `mentor.lab.composed` (its chains,
  per-seed gaps and pre-training rows), `mentor.lab.composed_eval` (step-0 failures and the headroom table), `mentor.lab.composed_demo`
  (the demo's arms); its task is `mentor.tasks.composed`.

`python -m mentor.lab` pre-trains (or loads from the cache) and prints the lab's measured figures.
"""

from mentor.lab.data import generate_problems, make_dataset
from mentor.models.checkpoint import (
    COMMITTED_POLICY,  # the lab's default policy, committed (that module says why there)
)

__all__ = ["COMMITTED_POLICY", "generate_problems", "make_dataset", "build_tokenizer", "build_policy", "pretrained_policy", "load_policy",
           "evaluate", "sample_rewards", "completions", "first_digits"]


def __getattr__(name):
    if name == "build_tokenizer":
        from mentor.lab.tokenizer import build_tokenizer
        return build_tokenizer
    if name == "build_policy":
        from mentor.lab.model import build_policy
        return build_policy
    if name == "pretrained_policy":
        from mentor.lab.pretrain import pretrained_policy
        return pretrained_policy
    if name == "load_policy":  # the lab's name for it (docs/lab.md): a checkpoint's (model, tokenizer)
        from mentor.models.checkpoint import load_checkpoint
        return load_checkpoint
    if name in ("evaluate", "sample_rewards", "completions", "first_digits"):
        from mentor.lab import sampling
        return getattr(sampling, name)
    raise AttributeError(name)
