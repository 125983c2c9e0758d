"""The re-generation through TRL's own vLLM server-mode code, with only the HTTP client stood in for.

vLLM's CPU build cannot run `trl vllm-serve` (docs/scale.md, "TRL's `use_vllm` on CPU"). TRL's `VLLMGeneration.generate` in server mode is real:
it de-duplicates prompts with `all_prompts[::num_generations]`, asks the client for `n=num_generations` each, and
slices the answer back per row. The stand-in client answers like the server would, and records each request.
"""

import torch
from trl.generation.vllm_generation import VLLMGeneration

from mentor import Mentor
from tiny_grpo import G, RecordingReward, make_trainer


class StandInServer:
    """Answers `VLLMClient.generate`: `n` completions per prompt, with a log-probability per token."""

    def __init__(self, tokenizer):
        self.requests: list[list[list[int]]] = []
        self.tokens = tokenizer(" 0000", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]

    def generate(self, prompts, features=None, n=1, logprobs=0, **sampling):
        self.requests.append([list(p) for p in prompts])
        rows = [(p, self.tokens) for p in prompts for _ in range(n)]
        return {"prompt_ids": [list(p) for p in prompts], "completion_ids": [c for _, c in rows],
                "logprobs": [[[-0.5] for _ in c] for _, c in rows], "logprob_token_ids": None}


def server_mode(trainer) -> StandInServer:
    """Switches the trainer to TRL's vLLM server mode, with the stand-in behind TRL's own generation code."""
    generation = object.__new__(VLLMGeneration)  # TRL's class; its __init__ would connect to a server
    server = StandInServer(trainer.processing_class)
    generation.__dict__.update(
        accelerator=trainer.accelerator, mode="server", vllm_client=server, enable_sleep_mode=False,
        temperature=1.0, top_p=1.0, top_k=0, min_p=None, repetition_penalty=1.0, max_completion_length=6,
        logprobs=0, structured_outputs_regex=None, generation_kwargs={})
    generation.sync_weights = lambda: None
    trainer.use_vllm, trainer.vllm_generation, trainer._last_loaded_step = True, generation, -1
    trainer.vllm_importance_sampling_correction = True
    return server


def test_regeneration_asks_the_server_for_whole_groups(tmp_path, loss_spy):
    trainer = make_trainer(tmp_path, RecordingReward())
    server = server_mode(trainer)
    Mentor.from_config({}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    first, regeneration = server.requests  # the batch, then one request for every hinted group
    assert len(first) == 2 and len(regeneration) == 2  # 8 rows = 2 groups of G identical prompts each time
    decoded = trainer.processing_class.batch_decode(regeneration)
    assert all(text.startswith("Hint: ") for text in decoded)
    assert trainer.state.log_history[0]["mentor/collapse_rate_after"] == 0.0
    # On-policy: vLLM's sampling log-probabilities were kept, so TRL's importance-sampling correction applies.
    assert torch.isfinite(seen["sampling_per_token_logps"][seen["completion_mask"].bool()]).all()


def test_stripped_rows_turn_the_importance_sampling_correction_off(tmp_path, loss_spy):
    trainer = make_trainer(tmp_path, RecordingReward())
    server_mode(trainer)
    Mentor.from_config({"strip_hint": True}).attach(trainer)
    seen = loss_spy(trainer)
    trainer.train()
    ratio = seen["importance_sampling_ratio"]
    # Stripped rows were sampled under the hint: their sampling log-probabilities are NaN, which TRL reads as
    # "no correction" (ratio 1), instead of a ratio of two different contexts that would mask the row.
    assert torch.allclose(ratio[ratio == ratio], torch.ones_like(ratio[ratio == ratio]))
    assert len(seen["prompt_ids"]) == 2 * G
