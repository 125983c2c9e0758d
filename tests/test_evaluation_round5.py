"""Issue 57: `mentor eval` refuses a retry-control row and reads no other column for one a failure lacks; the pooled
analysis refuses an output that is an input, a report given twice, and a malformed report, naming the file."""

import json
import math
import os
from pathlib import Path

import pytest

from mentor.cli import main as mentor_main
from mentor.evaluation.pooled import main as pooled_main
from mentor.lab.hard_failures import lab_failure_rows


def eval_run(*argv) -> int:
    return mentor_main(["eval", *map(str, argv), "--threads", "1"])


def report(ids, seed=0, **rows):
    return {"policy": "lab", "seed": seed, "problem_ids": ids,
            "configs": {n: {"group_rescued": f, "rescue_rate": sum(f) / len(f)} for n, f in rows.items()}}


def write(path: Path, content) -> str:
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


# --- mentor eval ----------------------------------------------------------------------------------------------------

def test_a_retry_control_config_is_refused_naming_the_key_and_evals_own_redraw_row(tmp_path, capsys):
    control = tmp_path / "control.yaml"
    control.write_text("task: arithmetic\nhint_source: none\n")
    failures = write(tmp_path / "f.jsonl", "".join(json.dumps(r) + "\n" for r in lab_failure_rows(n=2, seed=0)))
    # The policy does not exist: the refusal comes before it would load.
    assert eval_run(failures, "--policy", "no/such/policy", "--config", f"resample={control}",
                    "-o", tmp_path / "r.json") == 2
    err = capsys.readouterr().err
    assert f"mentor: error: --config resample={control}: hint_source: none" in err, err
    assert "row `none`" in err and not (tmp_path / "r.json").exists()


def test_a_columns_entry_naming_a_column_no_failure_has_withholds_instead_of_reading_hint(tmp_path, capsys):
    """The failures hold `hint` (the 3-digit prefix) but not `hint_partial`: the row mapped to `hint_partial` gives no
    hint and warns, where it gave `hint`'s."""
    rows = lab_failure_rows(n=3, seed=0)
    for r in rows:
        r["reference"]["hint"] = r["reference"]["hint3"]
    failures = write(tmp_path / "f.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    library = tmp_path / "partial.yaml"
    library.write_text("task: arithmetic\ngraph: graphs/static_hints/graph.py:graph\ncolumns: {hint: hint_partial}\n")
    out = tmp_path / "r.json"
    assert eval_run(failures, "--policy", "lab", "--config", f"partial={library}", "--samples", 1, "-o", out) == 0
    report = json.loads(out.read_text())
    partial = report["configs"]["partial"]
    assert (partial["withheld"], partial["hint_tokens"]) == (len(rows), 0.0)
    assert partial["withheld_missing_column"] == {"hint_partial": len(rows)}
    [warning] = report["warnings"]
    assert warning.startswith(f"row partial: {len(rows)} of {len(rows)} groups were withheld") and "'hint_partial'" in warning
    assert f"mentor: warning: {warning}" in capsys.readouterr().err


def test_with_columns_reads_a_present_column_and_drops_the_field_where_it_is_absent():
    from mentor.evaluation import with_columns
    from mentor.types import Attempt, FailedGroup

    group = FailedGroup("p", "arithmetic", "Q", {"answer": "1", "hint": "old", "hint2": "new"}, [Attempt("x")])
    assert with_columns(group, {"hint": "hint2"}).reference["hint"] == "new"
    assert "hint" not in with_columns(group, {"hint": "hint_partial"}).reference
    assert with_columns(group, {"hint": "hint_partial"}).reference["answer"] == "1"
    assert group.reference["hint"] == "old"  # the failure itself is unchanged (the verifier reads it)


# --- python -m mentor.evaluation.pooled -----------------------------------------------------------------------------

@pytest.fixture
def two_seeds(tmp_path):
    return [write(tmp_path / f"eval_{s}.json", report(["p1", "p2", "p3", "p4"], seed=s, none=[False] * 4,
                                                     mentor=[True, s == 0, True, False])) for s in range(2)]


@pytest.mark.parametrize("how", ["same path", "relative path", "symlink"])
def test_an_output_that_is_an_input_report_is_refused_and_the_report_kept(how, two_seeds, tmp_path, capsys,
                                                                          monkeypatch):
    target = Path(two_seeds[1])
    before = target.read_text()
    monkeypatch.chdir(tmp_path)
    out = {"same path": str(target), "relative path": f"./sub/../{target.name}", "symlink": "link.json"}[how]
    (tmp_path / "sub").mkdir()
    if how == "symlink":
        os.symlink(target, tmp_path / "link.json")
    assert pooled_main([*two_seeds, "--compare", "mentor-none", "-o", out]) == 2
    err = capsys.readouterr().err
    assert f"error: -o {Path(out)} is the input file {target}" in err, err
    assert target.read_text() == before


def test_a_report_given_twice_is_refused_naming_both(two_seeds, tmp_path, capsys):
    assert pooled_main([two_seeds[0], two_seeds[1], two_seeds[0], "--compare", "mentor-none"]) == 2
    err = capsys.readouterr().err
    assert f"error: {two_seeds[0]} is given twice (the same file as {two_seeds[0]})" in err, err
    copy = write(tmp_path / "copy.json", Path(two_seeds[0]).read_text())
    assert pooled_main([two_seeds[0], two_seeds[1], copy, "--compare", "mentor-none"]) == 2
    err = capsys.readouterr().err
    assert f"error: {copy} is the same report as {two_seeds[0]}" in err and "seed 0" in err, err


def test_two_seeds_of_the_same_problems_still_pool(two_seeds, capsys):
    assert pooled_main([*two_seeds, "--compare", "mentor-none"]) == 0
    assert "mentor          5/8" in capsys.readouterr().out


def flags(ids, rescued):
    """A report whose one row `none` holds `rescued` as its rescue flags, whatever they are."""
    return {"problem_ids": ids, "configs": {"none": {"group_rescued": rescued, "rescue_rate": 0.0}}}


BAD_REPORTS = {
    "NaN flag": ('{"problem_ids": ["p1"], "configs": {"none": {"group_rescued": [NaN], "rescue_rate": 0}}}',
                 "row 'none': group_rescued[0]"),
    "string flag": (flags(["p1"], ["yes"]), "row 'none': group_rescued[0]"),
    "null flag": (flags(["p1", "p2"], [True, None]), "row 'none': group_rescued[1]"),
    "count flag": (flags(["p1"], [3]), "row 'none': group_rescued[0]"),
    "row not an object": ({"problem_ids": ["p1"], "configs": {"none": [True]}}, "row 'none' is not an object"),
    "no rescue_rate": ({"problem_ids": ["p1"], "configs": {"none": {"group_rescued": [True]}}},
                       "row 'none': rescue_rate"),
    "list ids": (report([["p1"]], none=[True]), "problem_ids[0]"),
}


@pytest.mark.parametrize("case", BAD_REPORTS)
def test_a_malformed_report_is_an_error_naming_the_file_and_field(case, tmp_path, capsys):
    content, field = BAD_REPORTS[case]
    good = write(tmp_path / "good.json", report(["p1"], none=[False]))
    bad = write(tmp_path / "bad.json", content)
    assert pooled_main([good, bad, "--compare", "none-none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: ") and field in err, err


def test_a_rescue_rate_that_is_not_a_share_is_refused(tmp_path, capsys):
    bad = report(["p1"], none=[True])
    bad["configs"]["none"]["rescue_rate"] = math.inf
    path = write(tmp_path / "bad.json", bad)
    assert pooled_main([path, "--compare", "none-none"]) == 2
    assert f"error: {path}: row 'none': rescue_rate" in capsys.readouterr().err


def test_an_output_whose_partial_file_is_the_failures_file_is_refused_and_the_failures_kept(tmp_path, capsys):
    failures = tmp_path / "r.json.partial"
    before = "".join(json.dumps(r) + "\n" for r in lab_failure_rows(n=2, seed=0))
    failures.write_text(before)
    assert eval_run(failures, "--policy", "lab", "--samples", 1, "-o", tmp_path / "r.json") == 2
    assert f"its finished rows go to {failures}, which is the failures file" in capsys.readouterr().err
    assert failures.read_text() == before and not (tmp_path / "r.json").exists()
