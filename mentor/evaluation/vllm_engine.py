"""`--engine vllm`: `mentor eval` and `mentor failures --source policy` sample through vLLM's offline `LLM` instead of
transformers' `generate` (mentor.policy.generate_ids); everything else (the policy's chat rendering, the hint's
placement, the budget, the trimming at EOS, scoring, reliance on the transformers copy) is the same.

Where the engines differ: vLLM samples in bf16 from its own random streams, so the same seed gives other draws
than `generate` (same distribution, up to bf16 rounding); a run is reproducible per engine, not across them. On a
GPU each request gets its own seed (`seed` + the group's index in the call), so every row of `mentor eval` draws
from the same streams, as `generate` does. vLLM's CPU build (0.32) refuses per-request seeds (its engine dies:
"CPU Generator does not use offset"), so there only the engine's seed is set, once: the rows draw one after another
from one stream, and a row's draws depend on the rows sampled before it.

vLLM starts its engine in a child process, so a script that builds it must do so under `if __name__ ==
"__main__":` (the `mentor` command does).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from mentor.types import InputError

ENGINES = ("hf", "vllm")


class VllmEngine:
    """An offline vLLM `LLM` over a `save_pretrained` directory, built on the first sample (with that seed)."""

    def __init__(self, path: str):
        if importlib.util.find_spec("vllm") is None:  # before the policy loads and the mentor runs
            raise InputError("--engine vllm needs vLLM: pip install 'mentor-rl[vllm]' on a GPU, or vLLM's CPU build "
                             "(`make setup-vllm`, then .venv-vllm/bin/mentor); or leave --engine out (hf)")
        self.path = path
        self.llm: Any = None
        self.per_request_seeds = False

    def start(self, seed: int) -> None:
        from vllm import LLM
        from vllm.platforms import current_platform

        self.per_request_seeds = not current_platform.is_cpu()
        self.llm = LLM(model=self.path, seed=seed, dtype="bfloat16")

    def generate(self, inputs: list, samples: int, temperature: float, max_new_tokens: int,
                 seed: int) -> list[list[list[int]]]:
        """`samples` generated token-id lists per input, each at most `max_new_tokens` less its prefix hint."""
        from vllm import SamplingParams

        if self.llm is None:
            self.start(seed)
        params = [SamplingParams(n=samples, temperature=temperature, top_p=1.0, max_tokens=max(1, max_new_tokens
                                 - len(x.prefix)), seed=seed + i if self.per_request_seeds else None)
                  for i, x in enumerate(inputs)]
        outs = self.llm.generate([{"prompt_token_ids": x.hinted} for x in inputs], params, use_tqdm=False)
        return [[list(o.token_ids) for o in out.outputs] for out in outs]
