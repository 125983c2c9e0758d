"""vLLM's CPU engine against the policy after an in-place weight reload (mentor.trl.vllm_cpu), SmolLM2-135M-Instruct.

    VLLM_ENABLE_V1_MULTIPROCESSING=0 .venv-vllm/bin/python benchmarks/vllm_cpu_reload.py

One fp32 engine. For each change of the policy (its embedding scaled by 0.8, tied to the output layer; every other
weight scaled by 0.8) the weights go in through vLLM's `reload_weights`, then the output layer is packed again or
not, and the figure is the largest gap between the engine's and transformers' log-probability of a fixed text's
tokens. The cases run in order on one engine, so an output layer not packed again still holds the embedding it was
last packed from. Prints one line per case; docs/benchmarks.md records one run.
"""

from __future__ import annotations

import os

import torch


def main() -> None:
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from vllm import LLM, SamplingParams

    from mentor.models import offline_copy
    from mentor.trl.vllm_cpu import repack_kept_weights

    path = offline_copy("HuggingFaceTB/SmolLM2-135M-Instruct")
    llm = LLM(model=path, dtype="float32", max_model_len=512, enforce_eager=True)
    runner = llm.llm_engine.model_executor.driver_worker.model_runner
    ids = AutoTokenizer.from_pretrained(path)("What is 12 times 13? The answer is 156, because 12 times 13 is").input_ids

    def engine_logprobs() -> list[float]:
        out = llm.generate([{"prompt_token_ids": ids}], SamplingParams(max_tokens=1, prompt_logprobs=0),
                           use_tqdm=False)[0]
        return [step[token].logprob for step, token in zip(out.prompt_logprobs[1:], ids[1:])]

    def policy_logprobs(model) -> list[float]:
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, :-1].float()
        return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()

    for scaled in ("embedding", "the rest"):
        for repack in (False, True):
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
            with torch.no_grad():
                for name, param in model.named_parameters():
                    if ("embed_tokens" in name) == (scaled == "embedding"):
                        param.mul_(0.8)
            runner.reload_weights(weights_iterator=iter(list(model.named_parameters())), is_checkpoint_format=True)
            if repack:
                repack_kept_weights(runner.get_model())
            llm.reset_prefix_cache()
            gap = max(abs(a - b) for a, b in zip(engine_logprobs(), policy_logprobs(model)))
            print(f"{scaled} scaled by 0.8, reloaded, output layer {'packed again' if repack else 'as it was'}: "
                  f"largest log p gap engine - policy {gap:.2e}", flush=True)


if __name__ == "__main__":
    main()
