"""Fast batched sampling and evaluation of a lab policy: completions (optionally hinted, in the prompt or as the
start of the response), their rewards as a GRPO group would get them, and greedy accuracy. `lab`: `addition` (the
default) or `composed`, or any lab registered in mentor.lab.labs: its task formats the hints and scores the
responses."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from mentor.lab.labs import get_lab
from mentor.lab.tokenizer import encode
from mentor.policy import generate_ids
from mentor.tasks import arithmetic

HintFn = Callable[[dict[str, Any]], str]


def _inputs(problems: Sequence[dict[str, Any]], hint_fn: HintFn | None, placement: str, lab: str
            ) -> tuple[list[str], list[str]]:
    """The text the policy continues, and the part of the response already given (prefix placement)."""
    if placement not in ("prompt", "prefix"):
        raise ValueError(f"placement must be 'prompt' or 'prefix', not {placement!r}")
    if placement not in get_lab(lab).placements:
        raise ValueError(f"the {lab} lab places hints in: {', '.join(get_lab(lab).placements)}")
    task = get_lab(lab).task
    texts, given = [], []
    for row in problems:
        hint = hint_fn(row) if hint_fn else ""
        if placement == "prompt":
            texts.append(task.hint_prompt(row["prompt"], hint) if hint else row["prompt"])
            given.append("")
        else:
            texts.append(task.prefix_prompt(row["prompt"], hint))
            given.append(f" {hint}" if hint else "")
    return texts, given


def _generate(model, tokenizer, texts: list[str], num_samples: int, temperature: float | None, max_new_tokens: int) -> list[str]:
    out = generate_ids(model, tokenizer, encode(tokenizer, texts), num_samples, temperature, max_new_tokens)
    return tokenizer.batch_decode(out, skip_special_tokens=True)


def completions(model, tokenizer, problems: Sequence[dict[str, Any]], hint_fn: HintFn | None = None,
                placement: str = "prompt", num_samples: int = 1, temperature: float | None = None,
                batch_size: int = 512, seed: int = 0, progress: bool = False, lab: str = "addition"
                ) -> list[list[str]]:
    """For each problem, `num_samples` completions (greedy when temperature is None/0). In prefix placement
    the returned completion includes the given digits, so it can be scored like any other."""
    import torch
    from tqdm.auto import tqdm

    texts, given = _inputs(problems, hint_fn, placement, lab)
    length = get_lab(lab).max_new_tokens
    per = max(1, batch_size // num_samples)
    out: list[list[str]] = []
    was_training = model.training
    model.eval()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for s in tqdm(range(0, len(texts), per), desc="evaluating", disable=not progress, leave=False):
            chunk = texts[s:s + per]
            max_new = length - max(len(g) for g in given[s:s + per])
            dec = _generate(model, tokenizer, chunk, num_samples, temperature, max_new)
            for j in range(len(chunk)):
                out.append([given[s + j] + d for d in dec[j * num_samples:(j + 1) * num_samples]])
    model.train(was_training)
    return out


def sample_rewards(model, tokenizer, problems: Sequence[dict[str, Any]], num_samples: int = 8,
                   temperature: float = 1.0, hint_fn: HintFn | None = None, placement: str = "prompt",
                   batch_size: int = 512, seed: int = 0, lab: str = "addition") -> list[list[float]]:
    """Rewards of `num_samples` sampled completions per problem, as a GRPO group would get them."""
    outs = completions(model, tokenizer, problems, hint_fn, placement, num_samples, temperature, batch_size, seed,
                       lab=lab)
    reward = get_lab(lab).task.reward
    return [[reward(c, row["answer"]) for c in group] for group, row in zip(outs, problems)]


def evaluate(model, tokenizer, problems: Sequence[dict[str, Any]], hint_fn: HintFn | None = None,
             batch_size: int = 512, placement: str = "prompt", progress: bool = False, lab: str = "addition") -> float:
    """Greedy accuracy (share of problems whose answer is right: the addition lab's 4 digits, every step of a
    composed chain), optionally with a hint per problem: `hint_fn(row) -> hint text`, placed in the prompt
    (`hint_prompt`) or, with `placement="prefix"`, as the start of the response (then the text must be answer
    digits; the addition lab only)."""
    outs = completions(model, tokenizer, problems, hint_fn, placement, batch_size=batch_size, progress=progress,
                       lab=lab)
    if not problems:
        return 0.0
    reward = get_lab(lab).task.reward
    return sum(reward(g[0], row["answer"]) for g, row in zip(outs, problems)) / len(problems)


def first_digits(k: int) -> HintFn:
    """`hint_fn` giving the first `k` answer digits."""
    return lambda row: arithmetic.partial_answer_hint(row["answer"], k)
