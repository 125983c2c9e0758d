"""The offline model cache (mentor.models.offline) under faults: modes, same-size corruption, a planted link, a full disk,
MENTOR_CACHE naming a file.

Each test has its own MENTOR_CACHE. The GGUF file is a small stand-in and the conversion's model a tiny lab policy
(3 MB), so the cache's own code (the key, the checks, the write, the manifest, the rename) runs for real in
seconds; the real SmolLM2 conversion is covered by tests/test_trl_hook_on_smollm2.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mentor.models import offline
from mentor.types import InputError

NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """MENTOR_CACHE in tmp_path, a stand-in GGUF file, and a conversion that builds the tiny lab policy; yields
    the list of directories built."""
    from mentor.lab.model import build_policy

    gguf = tmp_path / "wheel" / "model.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF stand-in")
    builds: list[Path] = []

    def build(path):
        builds.append(path)
        return build_policy(0)

    monkeypatch.setenv("MENTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(offline, "wheel_file", lambda name: gguf)
    monkeypatch.setattr(offline, "_build", build)
    monkeypatch.setattr(offline, "_digests", {})  # a fresh process's memory of verified files
    return builds


def target() -> Path:
    return offline.cache_root() / "models" / f"{NAME.replace('/', '--')}-{offline._key(offline.wheel_file(NAME))}"


def test_the_cache_is_readable_by_others_and_lists_each_files_checksum(cache):
    out = Path(offline.offline_copy(NAME))
    assert out == target() and len(cache) == 1
    assert (out.stat().st_mode & 0o777) == 0o755
    manifest = json.loads((out / offline.MANIFEST).read_text())
    for path in out.iterdir():  # safetensors wrote model.safetensors 0600 (issue 25)
        assert (path.stat().st_mode & 0o777) == 0o644, path.name
    assert set(manifest["sha256"]) == set(manifest["files"]) >= {"model.safetensors", "config.json"}
    for name, digest in manifest["sha256"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert offline.offline_copy(NAME) == str(out) and len(cache) == 1  # complete: used, not rebuilt
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_same_size_corruption_is_found_by_the_checksum_and_rebuilt(cache, keep_mtime):
    out = Path(offline.offline_copy(NAME))
    weights = out / "model.safetensors"
    good = weights.read_bytes()
    stat = weights.stat()
    (length,) = __import__("struct").unpack("<Q", good[:8])
    with open(weights, "r+b") as f:  # zeroed weights, a readable header: sizes and header checks all pass
        f.seek(8 + length)
        f.write(bytes(len(good) - 8 - length))
    if keep_mtime:  # as a copy tool that keeps times would leave it; a new process has verified nothing yet
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        offline._digests.clear()
    assert weights.stat().st_size == len(good)
    assert offline.offline_copy(NAME) == str(out) and len(cache) == 2
    assert weights.read_bytes() == good


@pytest.mark.parametrize("planted", ["link_to_a_complete_copy", "dangling_link", "file"])
def test_something_planted_at_the_model_directory_is_removed_not_followed(cache, tmp_path, planted):
    """Issue 25: a symlink there made every call convert (23 s) and then fail in rmtree."""
    out = target()
    elsewhere = tmp_path / "elsewhere"
    if planted == "link_to_a_complete_copy":  # a directory the manifest vouches for, but not the cache's own
        os.rename(offline.offline_copy(NAME), elsewhere)
        out.symlink_to(elsewhere, target_is_directory=True)
    elif planted == "dangling_link":
        out.parent.mkdir(parents=True)
        out.symlink_to(elsewhere)
    else:
        out.parent.mkdir(parents=True)
        out.write_text("not a model")
    builds = len(cache)
    assert offline.offline_copy(NAME) == str(out) and len(cache) == builds + 1
    assert out.is_dir() and not out.is_symlink() and offline._complete(out)
    if planted == "link_to_a_complete_copy":
        assert (elsewhere / "model.safetensors").is_file()  # the link went, not what it pointed at


def test_mentor_cache_naming_a_file_is_an_input_error_naming_it(cache, tmp_path, monkeypatch):
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("MENTOR_CACHE", str(not_a_folder))
    with pytest.raises(InputError, match=rf"MENTOR_CACHE={not_a_folder}: cannot make .*; set MENTOR_CACHE to a "
                                         rf"writable folder with 600 MB free"):
        offline.offline_copy(NAME)
    assert cache == []  # refused before converting


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MB tmpfs (needs root, as the test machines run)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]).returncode != 0:
        pytest.fail("mounting a 1 MB tmpfs failed: this test needs root")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_an_input_error_naming_mentor_cache(cache, tiny_disk, monkeypatch):
    monkeypatch.setenv("MENTOR_CACHE", str(tiny_disk))
    with pytest.raises(InputError, match=rf"MENTOR_CACHE={tiny_disk}: {tiny_disk}/models has \d+ MB free, the "
                                         rf"model needs \d+ MB; set MENTOR_CACHE"):
        offline.offline_copy(NAME)
    assert [p.name for p in (tiny_disk / "models").iterdir()] == [target().name + ".lock"]


WRITE_FAILS = """
import resource, signal, sys
from pathlib import Path
from mentor.models import offline
from mentor.lab.model import build_policy
from mentor.types import InputError

offline.wheel_file = lambda name: Path(sys.argv[1])
offline._build = lambda path: build_policy(0)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk does
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # the 3 MB weights cannot be written
try:
    offline.offline_copy("HuggingFaceTB/SmolLM2-135M-Instruct")
except InputError as e:
    print("InputError:", e)
"""


def test_a_write_that_fails_midway_is_an_input_error_and_leaves_nothing(cache, tmp_path):
    """The free-space check passes, then the write fails (safetensors raises its own SafetensorError)."""
    env = {**os.environ, "MENTOR_CACHE": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(WRITE_FAILS), str(offline.wheel_file(NAME))],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"InputError: MENTOR_CACHE={tmp_path / 'cache'}: writing the converted model in")
    assert "SafetensorError" in done.stdout and "set MENTOR_CACHE to a writable folder" in done.stdout
    models_dir = tmp_path / "cache" / "models"
    assert [p.name for p in models_dir.iterdir()] == [target().name + ".lock"]  # no partial folder
