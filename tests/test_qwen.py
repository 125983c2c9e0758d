"""The real Qwen2.5-Coder-0.5B-Instruct (`make setup-qwen` first; `make test-qwen` runs these, `make test` leaves
them out): resolved by name to the checked, converted copy, it solves a HumanEval problem through its chat template,
scored in the sandbox by `code_reward`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mentor.models import MANIFEST, offline_copy, resolve
from mentor.models.chunked import CHUNKED_MODELS, QWEN_0_5B, checked_path

pytestmark = pytest.mark.qwen


@pytest.fixture(scope="module")
def qwen() -> Path:
    return Path(offline_copy(QWEN_0_5B))  # an InputError naming `python -m mentor.models.chunked` if not set up


def test_the_name_resolves_to_a_plain_copy_of_the_checked_file(qwen):
    assert resolve(QWEN_0_5B) == str(qwen)
    assert checked_path(QWEN_0_5B).stat().st_size == CHUNKED_MODELS[QWEN_0_5B].size
    config = json.loads((qwen / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"]) == ("qwen2", 24)
    assert "quantization_config" not in config  # Trainer refuses a quantized-flagged model
    assert json.loads((qwen / MANIFEST).read_text())["source"] == checked_path(QWEN_0_5B).name


def test_it_solves_a_humaneval_problem_greedy_through_its_chat_template(qwen):
    from mentor.data.humaneval import chat_prompt, load_humaneval
    from mentor.data.policy_failures import sampled_groups
    from mentor.policy import torch_threads
    from mentor.rewards import code_reward

    problem = next(p for p in load_humaneval() if p["task_id"] == "HumanEval/7")  # filter_by_substring
    with torch_threads(2):
        [[text]] = sampled_groups(QWEN_0_5B, "code", [(problem["task_id"], chat_prompt(problem["prompt"]), problem)],
                                  1, 0.0, 384, 0)
    assert "def filter_by_substring" in text
    assert code_reward([text], [problem["test"]], [problem["entry_point"]], prompt=[problem["prompt"]]) == [1.0]


def test_a_prompt_edit_changes_the_hint_mentor_diagnose_writes_on_qwen(qwen, tmp_path, capsys):
    """The edit loop with a useful local llm mentor (docs/configuration.md, "A local llm mentor for the edit loop"):
    `graph copy`, the composer on Qwen through `hf`, greedy; an instruction added to the code composer's prompt
    changes the hint `mentor diagnose` writes for the same failed group."""
    import yaml

    from mentor.cli import main

    first = Path("experiments/qwen40/failures_0.jsonl").read_text().splitlines()[0]  # HumanEval/10, 8 failures
    failures = tmp_path / "failures.jsonl"
    failures.write_text(first + "\n")
    mine = tmp_path / "mine"
    assert main(["graph", "copy", str(mine)]) == 0
    config = yaml.safe_load((mine / "mentor.yaml").read_text())
    config["nodes"]["hint_composer"] = "llm"
    config.update(llm={"provider": "hf", "model": QWEN_0_5B, "temperature": 0.0, "request_timeout_s": 600},
                  timeout_s=900)
    (mine / "mentor.yaml").write_text(yaml.safe_dump(config))

    def hint() -> str:
        out = tmp_path / "out.jsonl"
        assert main(["diagnose", str(failures), "-o", str(out), "--config", str(mine / "mentor.yaml")]) == 0
        [row] = [json.loads(line) for line in out.read_text().splitlines()]
        assert row["backend"]["hint_composer"] == "llm" and not row["fallbacks"], row["fallbacks"]
        [composer] = [n for n in row["nodes"] if n["node"] == "hint_composer"]
        return row["hint"], composer["prompt"]

    before, sent = hint()
    edit = "Begin the hint with the word REMEMBER in capitals."
    prompt = mine / "prompts" / "code" / "hint_composer.md"
    prompt.write_text(prompt.read_text().replace("Rules: write prose only", f"{edit}\n\nRules: write prose only", 1))
    after, sent_after = hint()  # the same process: the edit is read again, not a cached prompt
    assert edit not in sent and edit in sent_after
    assert after != before, before  # greedy: only the edit differs (the 0.5B model does not obey it to the word)
