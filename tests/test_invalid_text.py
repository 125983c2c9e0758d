r"""A lone surrogate in what a node returns (JSON's "\ud800" decodes to one: a Python string no tokenizer, SQLite or
page accepts) is refused or repaired, and counted; training, the runtime and the trace store never crash on it."""

from __future__ import annotations

import json

from failed_groups import group
from llm_config import config
from mentor import Mentor
from mentor.cli import main
from mentor.lab.hard_failures import lab_failure_rows
from mentor.runtime import MentorRuntime
from mentor.tasks import get_task
from mentor.text import REPLACEMENT
from mentor.traces import TraceStore
from openai_server import Reply
from tiny_grpo import RecordingReward, make_trainer

BAD_HINT = {"hint": "Carry into the hundreds \ud800 column.", "tier": 1}


def composer_answers_a_surrogate(req) -> Reply:
    return Reply(content=BAD_HINT) if req.node == "hint_composer" else Reply()


def test_an_llm_hint_holding_a_lone_surrogate_is_unusable_and_falls_back_to_rules(openai_server):
    openai_server.behaviour = composer_answers_a_surrogate
    [rules] = MentorRuntime().run([group()])
    [result] = MentorRuntime(config(openai_server, nodes={"hint_composer": "llm"}, parse_retries=1)).run([group()])
    assert openai_server.count("hint_composer") == 2  # re-asked once, as for malformed JSON
    assert result.error is None and result.hint == rules.hint
    assert result.backend["hint_composer"] == "rules (llm fallback)"
    [fallback] = result.fallbacks
    assert fallback.startswith("hint_composer: LLMOutputError") and "hint holds a lone surrogate" in fallback


def test_training_with_an_llm_composer_that_writes_a_lone_surrogate_finishes_and_counts_it(tmp_path, openai_server):
    openai_server.behaviour = composer_answers_a_surrogate
    cfg = {"nodes": {"hint_composer": "llm"},
           "llm": {"provider": "openai", "model": "m", "base_url": openai_server.base_url, "max_retries": 0,
                   "parse_retries": 0}}
    trainer = make_trainer(tmp_path, RecordingReward())
    Mentor.from_config(cfg).attach(trainer)
    trainer.train()  # before: the tokenizer raised TypeError inside _generate and training stopped
    log = trainer.state.log_history[0]
    assert log["mentor/llm_fallbacks"] == 2 and log["mentor/failures"] == 0
    records = list(TraceStore(tmp_path, readonly=True))
    assert len(records) == 2 and all("lone surrogate" in r["fallbacks"][0] and r["hint"] for r in records)


def test_mentor_eval_with_an_llm_composer_that_writes_a_lone_surrogate_writes_its_report(tmp_path, openai_server):
    openai_server.behaviour = composer_answers_a_surrogate
    failures, out = tmp_path / "f.jsonl", tmp_path / "r.json"
    failures.write_text("".join(json.dumps(r) + "\n" for r in lab_failure_rows(n=3, seed=0)))
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"nodes: {{hint_composer: llm}}\nllm: {{provider: openai, model: m, base_url: "
                   f"'{openai_server.base_url}', max_retries: 0, parse_retries: 0}}\n")
    assert main(["eval", str(failures), "--policy", "lab", "--config", f"llm={cfg}", "--samples", "2", "-o", str(out),
                 "--threads", "1"]) == 0  # before: exit 1, no report
    row = json.loads(out.read_text())["configs"]["llm"]
    assert row["llm_fallbacks"] == row["groups"] == 3 and row["failures"] == 0


def test_a_rules_node_that_returns_a_lone_surrogate_gets_its_hint_refused_and_the_rest_repaired(monkeypatch):
    task = get_task("arithmetic")
    analyse = task.analyse
    monkeypatch.setattr(task, "compose", lambda group, diagnosis, tier, feedback: "Carry \ud800 into the hundreds.")
    monkeypatch.setattr(task, "analyse", lambda group, classes: (analyse(group, classes)[0] + " \udfff", None))
    [result] = MentorRuntime().run([group()])
    assert result.hint is None and "hint holds a lone surrogate" in result.error  # counted in mentor/failures
    assert result.diagnosis.root_cause.endswith(" " + REPLACEMENT)
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # every string is text now: this would raise


def test_the_trace_store_repairs_surrogates_and_keeps_a_steps_other_records(tmp_path):
    store = TraceStore(tmp_path)
    good = {"problem_id": "a", "hint": "fine", "diagnosis": {"error_class": "wrong_tens"}}
    surrogate = {"problem_id": "b\ud800", "hint": "Carry \ud800 here.", "nodes": [{"output": {"x\udfff": "y"}}]}
    unstorable = {"problem_id": "c", "hint": "ok", "nodes": [{"output": {1, 2}}]}  # a set: not JSON
    deep: list = []
    for _ in range(5000):  # past Python's recursion limit for json.dumps
        deep = [deep]
    store.append(1, [good, surrogate, unstorable, {"problem_id": "d", "nodes": deep}], {"mentor/failures": 0.0})
    store.close()
    records = list(TraceStore(tmp_path, readonly=True))
    assert [r["problem_id"] for r in records] == ["a", "b" + REPLACEMENT, "c", "d"]
    assert records[0]["hint"] == "fine" and records[1]["hint"] == f"Carry {REPLACEMENT} here."
    assert records[1]["nodes"] == [{"output": {f"x{REPLACEMENT}": "y"}}]
    assert "could not be stored: TypeError" in records[2]["error"]
    assert "could not be stored: RecursionError" in records[3]["error"]
