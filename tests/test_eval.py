"""`mentor eval` on the lab's committed policy: the report, its seeding, the rows' meaning, and bad inputs."""

import json
from pathlib import Path

import pytest

from mentor.cli import main
from mentor.lab import data as labdata
from mentor.lab.failures import failure_rows
from mentor.lab.pretrain import torch_threads
from mentor.lab.sampling import completions
from mentor.tasks import arithmetic

CONFIGS = Path(__file__).resolve().parent.parent / "benchmarks" / "eval_configs"
ENTRY_KEYS = {"groups", "rescue_rate", "mean_reward", "hint_tokens", "withheld", "leaks_blocked", "reliance",
              "per_error_class", "mentor_s", "sample_s"}


@pytest.fixture(scope="module")
def failures(tmp_path_factory) -> Path:
    """The lab policy's own collapsed groups on 12 held-out hard problems (each with hint1..hint3)."""
    path = tmp_path_factory.mktemp("eval") / "failures.jsonl"
    rows = failure_rows(n=12, seed=0)
    assert rows and all(not any(a["reward"] for a in r["attempts"]) for r in rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(*argv) -> int:
    return main(["eval", *map(str, argv), "--threads", "1"])


def test_the_command_writes_every_field_and_a_3_digit_prefix_rescues_what_no_hint_does(failures, tmp_path):
    out, html = tmp_path / "report.json", tmp_path / "report.html"
    rc = run(failures, "--policy", "lab", "--config", f"lib3={CONFIGS / 'lib3_prefix.yaml'}", "--config",
             f"mentor={CONFIGS / 'mentor_prefix.yaml'}", "--samples", 4, "-o", out, "--html", html)
    assert rc == 0
    report = json.loads(out.read_text())
    assert {"policy", "samples", "temperature", "seed", "configs", "oracle"} <= set(report)
    assert (report["policy"], report["samples"], report["temperature"], report["seed"]) == ("lab", 4, 1.0, 0)
    assert list(report["configs"]) == ["none", "lib3", "mentor"]
    groups = sum(1 for line in failures.read_text().splitlines() if line.strip())
    for name, entry in report["configs"].items():
        assert set(entry) == ENTRY_KEYS, name
        assert entry["groups"] == groups
        assert 0 <= entry["rescue_rate"] <= 1 and 0 <= entry["mean_reward"] <= 1
        assert sum(c["groups"] for c in entry["per_error_class"].values()) == groups
        assert entry["mentor_s"] >= 0 and entry["sample_s"] > 0
    none, lib3, mentor = (report["configs"][n] for n in ("none", "lib3", "mentor"))
    assert none["hint_tokens"] == 0 and none["reliance"] is None
    assert lib3["hint_tokens"] == 3.0  # 3 digits, one char-level token each
    assert 1 <= mentor["hint_tokens"] <= 3
    assert lib3["rescue_rate"] >= 0.8 > none["rescue_rate"]  # docs/lab.md: 100% against 0.2%
    assert lib3["reliance"] < 0  # the correct answers are far likelier with their leading digits given
    oracle = report["oracle"]
    assert oracle["best_single"] == max(report["configs"], key=lambda n: report["configs"][n]["rescue_rate"])
    assert oracle["best_single_rate"] == report["configs"][oracle["best_single"]]["rescue_rate"]
    assert oracle["best_single_rate"] <= oracle["rescue_rate"] <= 1
    page = html.read_text()
    assert page.startswith("<!doctype html>") and "<script src" not in page and "<link" not in page
    for name in report["configs"]:
        assert f"<th>{name}</th>" in page
    for error_class in lib3["per_error_class"]:
        assert f"<h3>{error_class} (" in page


def test_none_is_a_direct_sampling_with_the_same_seed(tmp_path):
    """On a mix of easy and hard problems at T=1.5 (so rewards vary), the `none` row's figures are those of the lab's
    own batched sampling (mentor.lab.sampling.completions) with the same seed."""
    from mentor.evaluation import evaluate, group_inputs, load_policy, sample
    from mentor.types import Attempt, FailedGroup

    problems = labdata.generate_problems("easy", 10, seed=5, split="all") + labdata.generate_problems("hard", 10, 5)
    groups = [FailedGroup(p["problem_id"], "arithmetic", p["prompt"],
                          {"answer": p["answer"], "operands": p["operands"]}, [Attempt("x")]) for p in problems]
    policy = load_policy("lab")
    with torch_threads(1):
        direct = completions(policy.model, policy.tokenizer, problems, num_samples=6, temperature=1.5, seed=7)
        ours = sample(policy, [group_inputs(policy, g, None, "prompt") for g in groups], 6, 1.5, 6, seed=7)
        report = evaluate(groups, policy, {}, samples=6, temperature=1.5, seed=7)
    assert [[text for text, _ in group] for group in ours] == direct
    rewards = [[arithmetic.reward(c, p["answer"]) for c in group] for group, p in zip(direct, problems)]
    assert 0 < sum(map(sum, rewards)) < 6 * len(problems)  # the comparison is not between two constant rows
    none = report["configs"]["none"]
    assert none["mean_reward"] == pytest.approx(sum(map(sum, rewards)) / (6 * len(problems)))
    assert none["rescue_rate"] == pytest.approx(sum(max(r) > 0 for r in rewards) / len(problems))


def test_the_same_seed_gives_the_same_report(failures, tmp_path):
    reports = []
    for i, seed in enumerate((3, 3, 4)):
        out = tmp_path / f"r{i}.json"
        assert run(failures, "--policy", "lab", "--config", f"lib1={CONFIGS / 'lib1_prefix.yaml'}", "--samples", 8,
                   "--temperature", 1.5, "--seed", seed, "-o", out) == 0
        report = json.loads(out.read_text())
        for entry in report["configs"].values():
            del entry["mentor_s"], entry["sample_s"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["seed"] == 3 and reports[2]["seed"] == 4


def test_a_failure_without_its_reference_is_skipped_and_counted(failures, tmp_path, capsys):
    good = json.loads(failures.read_text().splitlines()[0])
    bad = {**good, "problem_id": "no-operands", "reference": {"answer": good["reference"]["answer"]}}
    path, out = tmp_path / "f.jsonl", tmp_path / "r.json"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert run(path, "--policy", "lab", "--samples", 2, "-o", out) == 0
    report = json.loads(out.read_text())
    assert report["configs"]["none"]["groups"] == report["configs"]["mentor"]["groups"] == 1
    assert len(report["skipped"]) == 1 and "operands" in report["skipped"][0] and ":2:" in report["skipped"][0]
    assert "1 skipped" in capsys.readouterr().out


def test_a_run_trace_store_is_read_as_its_collapsed_groups(failures, tmp_path):
    """A record with a classifier's output (the mentor graph) gives its group; one without (the static library graph
    writes no reference back) is skipped and counted."""
    from mentor.failures import checked_group
    from mentor.runtime import MentorRuntime
    from mentor.traces import TraceStore

    rows = [json.loads(line) for line in failures.read_text().splitlines()[:2]]
    groups = [checked_group(r) for r in rows]
    records = []
    for config, group in (({"task": "arithmetic"}, groups[0]),
                          ({"graph": "graphs/static_hints/graph.py:graph", "columns": {"hint": "hint2"}}, groups[1])):
        iv = MentorRuntime(config).run([group])[0]
        records.append({**iv.to_dict(), "step": 0, "group": len(records), "round": 1, "prompt": group.prompt,
                        "attempts": [{"completion": a.completion, "reward": a.reward} for a in group.attempts]})
    run_dir = tmp_path / "run"
    store = TraceStore(run_dir)
    store.append(0, records)
    store.close()
    out = tmp_path / "r.json"
    assert run(run_dir, "--policy", "lab", "--samples", 2, "-o", out) == 0
    report = json.loads(out.read_text())
    assert report["configs"]["none"]["groups"] == 1
    assert len(report["skipped"]) == 1 and "no reference" in report["skipped"][0]


def test_fail_under_exits_1_below_the_rate_and_0_above(failures, tmp_path):
    lib3 = f"lib3={CONFIGS / 'lib3_prefix.yaml'}"
    args = (failures, "--policy", "lab", "--config", lib3, "--samples", 4, "-o", tmp_path / "r.json")
    assert run(*args, "--fail-under", "none=0.5") == 1  # no hint rescues almost nothing here
    assert run(*args, "--fail-under", "lib3=0.5") == 0


@pytest.mark.parametrize("case, names", [
    ("unknown policy", ["--policy", "no/such/policy-dir"]),
    ("config that does not load", ["--config", "bad="]),
    ("config with a bad value", ["--config", "bad="]),
    ("config naming no file", ["--config", "bad=/nonexistent/mentor.yaml"]),
    ("empty failures file", ["FAILURES"]),
    ("fail-under naming no row", ["--fail-under"]),
])
def test_bad_input_is_a_clear_error_naming_the_argument(case, names, failures, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("strategy: [unclosed\n" if case == "config that does not load" else "strategy: bogus\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    args = {"unknown policy": [failures, "--policy", "no/such/policy-dir"],
            "config that does not load": [failures, "--policy", "lab", "--config", f"bad={bad_yaml}"],
            "config with a bad value": [failures, "--policy", "lab", "--config", f"bad={bad_yaml}"],
            "config naming no file": [failures, "--policy", "lab", "--config", "bad=/nonexistent/mentor.yaml"],
            "empty failures file": [empty, "--policy", "lab"],
            "fail-under naming no row": [failures, "--policy", "lab", "--fail-under", "nobody=0.5"]}[case]
    out = tmp_path / "r.json"
    assert run(*args, "-o", out) == 2
    err = capsys.readouterr().err
    assert "mentor: error: " in err and all(n in err for n in names), err
    assert not out.exists()


def test_a_save_pretrained_directory_is_a_policy_and_a_folder_without_a_model_is_refused(failures, tmp_path, capsys):
    from mentor.lab.pretrain import COMMITTED_POLICY

    reports = []
    for policy in ("lab", COMMITTED_POLICY):
        out = tmp_path / "r.json"
        assert run(failures, "--policy", policy, "--samples", 2, "--temperature", 1.5, "-o", out) == 0
        report = json.loads(out.read_text())
        reports.append([(e["rescue_rate"], e["mean_reward"]) for e in report["configs"].values()])
    assert reports[0] == reports[1]
    capsys.readouterr()
    assert run(failures, "--policy", tmp_path, "-o", tmp_path / "r2.json") == 2
    err = capsys.readouterr().err
    assert f"--policy {tmp_path}: " in err and "no config.json" in err
