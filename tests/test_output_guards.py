"""`mentor traces view -o` and `mentor diagnose -o` never write over what they read: the trace store, a diagnose
JSONL file (by name, through a link, or as the page's default name), or the input behind `-o`'s partial file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failed_groups import ARITHMETIC
from mentor.cli import main
from mentor.traces import TraceStore, trace_path

REFUSED = "is the input file"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A run directory whose trace store holds one step with one intervention."""
    store = TraceStore(tmp_path / "run")
    store.append(1, [{**ARITHMETIC, "problem_id": "add-1", "hint": "carry the one"}], {"loss": 1.0})
    store.close()
    return tmp_path / "run"


@pytest.fixture
def diagnosed(tmp_path) -> Path:
    """A `mentor diagnose` JSONL file (one intervention), which `traces view` and `diagnose` both read."""
    failures, out = tmp_path / "failures.jsonl", tmp_path / "diagnosed.jsonl"
    failures.write_text(json.dumps({**ARITHMETIC, "problem_id": "add-1"}) + "\n")
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0
    return out


def refused(argv: list[str], capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    return err


def still_readable(run_dir: Path) -> None:
    store = TraceStore(run_dir, readonly=True)
    try:
        assert [r["problem_id"] for r in store.interventions()] == ["add-1"]
    finally:
        store.close()


@pytest.mark.parametrize("source, output", [
    ("{store}", "{store}"),  # the store itself
    ("{run}", "{store}"),  # the store of the run directory given
    ("{run}", "{run}/mentor/../mentor/traces.sqlite"),  # another spelling of it
    ("{store}", "{link}"),  # a link to it
])
def test_traces_view_refuses_to_write_its_page_over_the_trace_store(run_dir, tmp_path, capsys, source, output):
    store = trace_path(run_dir)
    (tmp_path / "link.sqlite").symlink_to(store)
    names = {"store": store, "run": run_dir, "link": tmp_path / "link.sqlite"}
    argv = ["traces", "view", source.format(**names), "-o", output.format(**names)]
    err = refused(argv, capsys)
    assert f"-o {output.format(**names)} {REFUSED} {store}" in err and "Give another output path" in err, err
    still_readable(run_dir)


def test_traces_view_refuses_to_write_its_page_over_a_diagnose_file(diagnosed, tmp_path, capsys):
    before = diagnosed.read_text()
    err = refused(["traces", "view", str(diagnosed), "-o", str(diagnosed)], capsys)
    assert f"-o {diagnosed} {REFUSED} {diagnosed}" in err, err
    named_html = tmp_path / "diagnosed.html"  # its default page would be the file itself
    named_html.write_text(before)
    err = refused(["traces", "view", str(named_html)], capsys)
    assert f"the default page (no -o) {named_html} {REFUSED} {named_html}" in err, err
    assert diagnosed.read_text() == before and named_html.read_text() == before


def test_traces_view_refuses_a_folder_as_its_page(run_dir, capsys):
    err = refused(["traces", "view", str(run_dir), "-o", str(run_dir)], capsys)
    assert f"-o {run_dir} is a folder; give a file path" in err, err


def test_diagnose_refuses_to_write_over_the_trace_store_it_reads(run_dir, capsys):
    store = trace_path(run_dir)
    err = refused(["diagnose", str(run_dir), "-o", str(store)], capsys)
    assert f"-o {store} {REFUSED} {store}" in err, err
    still_readable(run_dir)


def test_diagnose_refuses_an_output_whose_partial_file_is_its_input(diagnosed, tmp_path, capsys):
    # Rerunning the groups an interrupted run kept (`out.jsonl.partial`) into `out.jsonl` would truncate them first.
    partial = tmp_path / "out.jsonl.partial"
    partial.write_text(diagnosed.read_text())
    err = refused(["diagnose", str(partial), "-o", str(tmp_path / "out.jsonl")], capsys)
    assert f"{REFUSED} {partial}" in err and "partial file" in err, err
    assert partial.read_text() == diagnosed.read_text()
