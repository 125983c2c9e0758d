"""`mentor failures`: each source writes a file the one failures reader reads back, and bad options are refused with
the option named."""

from __future__ import annotations

import pytest

from mentor.cli import main
from mentor.command_files import read_failures
from mentor.data.humaneval import chat_prompt
from mentor.evaluation.annotations import read_annotations


@pytest.mark.parametrize("source, options, task", [
    ("lab", ["--n", "3", "--all"], "arithmetic"),
    ("policy", ["--policy", "lab", "--family", "sum", "--n", "2", "--samples", "2", "--max-new-tokens", "6"], "math"),
    ("policy", ["--policy", "lab", "--family", "humaneval", "--n", "2", "--samples", "2", "--max-new-tokens", "6",
                "--all"], "code"),
    ("champ", ["--limit", "2"], "math"),
])
def test_each_source_writes_a_file_the_failures_reader_reads_back(source, options, task, tmp_path, capsys):
    out = tmp_path / "sub" / f"{source}.jsonl"  # the folder is made
    assert main(["failures", "--source", source, "-o", str(out), *options]) == 0
    groups, skipped = read_failures(out)
    assert skipped == [] and groups and all(g.task == task and g.attempts for g in groups)
    printed = capsys.readouterr().out
    assert f"groups to {out}" in printed or f"problems to {out}" in printed
    if source == "lab":  # --all keeps every problem
        assert len(groups) == 3 and all(set(g.reference) >= {"hint1", "hint2", "hint3"} for g in groups)
    if task == "code":  # the chat instruction before HumanEval's prompt; the code task's reference
        assert [g.problem_id for g in groups] == ["HumanEval/0", "HumanEval/1"]
        assert all(g.prompt == chat_prompt(g.reference["prompt"]) and {"test", "entry_point"} <= set(g.reference)
                   for g in groups)
        assert "(2 samples, T=1.0, 6 new tokens)" in printed
    if source == "champ":
        assert len(groups) == 2 and all(step >= 1 for steps in read_annotations(out) for step in steps)
    assert list(tmp_path.glob("sub/.*.tmp")) == []  # written atomically: no temporary file left


@pytest.mark.parametrize("argv, message", [
    (["--source", "champ", "--family", "sum"], "--family is not an option of --source champ; it is one of "
                                               "--source policy"),
    (["--source", "lab", "--samples", "2"], "--samples is not an option of --source lab"),
    (["--source", "champ", "--seed", "1"], "--seed is not an option of --source champ; it is one of --source lab or "
                                           "--source policy"),
    (["--source", "lab", "--n", "0"], "--n 0: must be at least 1"),
    (["--source", "policy", "--samples", "0"], "--samples 0: must be at least 1"),
    (["--source", "policy", "--temperature", "-1"], "--temperature -1.0: must be >= 0"),
    (["--source", "champ", "--limit", "0"], "--limit 0: must be at least 1"),
    (["--source", "lab", "--threads", "0"], "--threads 0: must be at least 1"),
    (["--source", "lab", "--policy", "no-such-dir"], "--policy no-such-dir: not a lab policy directory"),
    (["--source", "lab", "--engine", "vllm"], "--engine is not an option of --source lab"),
    (["--source", "policy", "--policy", "lab", "--engine", "vllm"], "--engine vllm needs vLLM"),  # not in .venv
    (["--source", "champ", "--champ", "no-such.json"], "no-such.json: not CHAMP's v0.json"),
])
def test_bad_options_are_refused_naming_the_option_and_nothing_is_written(argv, message, tmp_path, capsys):
    out = tmp_path / "f.jsonl"
    out.write_text("kept\n")
    assert main(["failures", *argv, "-o", str(out)]) == 2
    assert f"mentor: error: {message}" in capsys.readouterr().err
    assert out.read_text() == "kept\n"


def test_problems_keeps_the_listed_humaneval_problems_in_their_order_and_refuses_what_it_cannot_use(tmp_path, capsys):
    listed = tmp_path / "problems.txt"
    listed.write_text("# round 6's problems\nHumanEval/2\n\nHumanEval/0  # a comment\n")
    out = tmp_path / "f.jsonl"
    common = ["failures", "--source", "policy", "--policy", "lab", "--samples", "2", "--max-new-tokens", "6", "-o",
              str(out)]
    assert main([*common, "--family", "humaneval", "--n", "3", "--all", "--problems", str(listed)]) == 0
    assert [g.problem_id for g in read_failures(out)[0]] == ["HumanEval/0", "HumanEval/2"]
    assert " of 2 groups collapsed" in capsys.readouterr().out  # the listed problems only were sampled
    assert main([*common[:-1], str(listed), "--family", "humaneval", "--problems", str(listed)]) == 2
    assert f"-o {listed} is the input file" in capsys.readouterr().err
    assert listed.read_text().startswith("# round 6's problems")  # -o naming the --problems file: refused, kept
    (tmp_path / "empty.txt").write_text("# nothing\n")
    (tmp_path / "far.txt").write_text("HumanEval/2\nHumanEval/9\n")
    for args, message in [
        (["--family", "sum", "--problems", str(listed)], f"--problems {listed}: chooses HumanEval problems; it needs "
                                                         "--family humaneval"),
        (["--family", "humaneval", "--n", "3", "--problems", str(tmp_path / "far.txt")],
         "--problems: ['HumanEval/9'] not among HumanEval's first 3 problems"),
        (["--family", "humaneval", "--problems", str(tmp_path / "empty.txt")], "lists no problem id"),
        (["--family", "humaneval", "--problems", str(tmp_path / "none.txt")], "cannot be read"),
    ]:
        out.write_text("kept\n")
        assert main([*common, *args]) == 2
        assert message in capsys.readouterr().err
        assert out.read_text() == "kept\n"


def test_an_output_folder_and_an_unknown_source_are_refused(tmp_path, capsys):
    assert main(["failures", "--source", "lab", "--n", "1", "-o", str(tmp_path)]) == 2
    assert f"-o {tmp_path} is a folder; give a file path" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse names the choices
        main(["failures", "--source", "humaneval", "-o", str(tmp_path / "f.jsonl")])
    assert "invalid choice: 'humaneval'" in capsys.readouterr().err


def test_humaneval_responses_are_scored_in_the_sandbox_and_only_collapsed_groups_kept(monkeypatch):
    from mentor.data import policy_failures

    def responses(policy, task, groups, samples, *args):  # the policy's stand-in: a right and a wrong function
        first = groups[0][2]
        right = f"```python\n{first['prompt']}{first['canonical_solution']}```"
        wrong = f"```python\ndef {first['entry_point']}(numbers, threshold):\n    return False\n```"
        return [[right, wrong], [wrong, wrong]]

    monkeypatch.setattr(policy_failures, "sampled_groups", responses)
    rows, counts = policy_failures.humaneval_failure_rows("unused", n=2, samples=2)
    assert (counts["problems"], counts["collapsed"], counts["kept"]) == (2, 1, 1)
    assert (counts["responses"], counts["passed"]) == (4, 1)  # pass@1 1/4: the one right function
    assert rows[0]["problem_id"] == "HumanEval/1" and [a["reward"] for a in rows[0]["attempts"]] == [0.0, 0.0]
    assert rows[0]["reference"]["feedback"] == ("Your previous attempt failed: `separate_paren_groups` is not defined "
                                                "(defined: has_close_elements).")  # the sandbox's own words
    rows, _ = policy_failures.humaneval_failure_rows("unused", n=2, samples=2, keep_all=True)
    assert [a["reward"] for a in rows[0]["attempts"]] == [1.0, 0.0]  # the canonical solution passes HumanEval/0


def test_the_feedback_row_gives_the_failing_test_that_the_gated_library_withholds(monkeypatch, tmp_path):
    """Issue 40's `feedback` row (benchmarks/eval_configs/qwen_feedback.yaml) gives execution feedback as peers do: a
    failing test with its expected value, which the leakage checker withholds in the gated library."""
    import json

    from mentor.data import policy_failures
    from mentor.evaluation.report import with_columns
    from mentor.runtime import MentorRuntime

    wrong = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    monkeypatch.setattr(policy_failures, "sampled_groups", lambda *a: [[wrong, wrong]])
    rows, _ = policy_failures.humaneval_failure_rows("unused", n=1, samples=2)
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    groups, _ = read_failures(path)
    feedback = rows[0]["reference"]["feedback"]
    assert "== True` (returned False)" in feedback  # the test's expected value: what the gate calls a leak
    ungated = MentorRuntime("benchmarks/eval_configs/qwen_feedback.yaml")
    [given] = ungated.run([with_columns(g, {"hint": "feedback"}) for g in groups])
    assert given.hint == feedback and not given.withheld
    gated = MentorRuntime({"task": "code", "graph": "graphs/static_hints/graph.py:graph"})
    [gate] = gated.run([with_columns(g, {"hint": "feedback"}) for g in groups])
    assert gate.hint is None and gate.leak["leaked_drafts"][0]["detectors"] == ["test_output"]
