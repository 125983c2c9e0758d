"""The edit loop as a user runs it (README, "Edit the mentor"): copy the graph, edit a node and a prompt, replay a real
run's traces through the copy, measure it against the original, train with it, and find what ran in the traces and
the viewer. Real parts throughout: a tiny real GRPOTrainer, the lab policy, a loopback OpenAI-compatible server, the
real SmolLM2 for one case, and headless Chromium."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from mentor.cli import main

PREFIX = "EDITED: "
INSTRUCTION = "NEW INSTRUCTION: name the column the student should check first."


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit_copy(mine: Path) -> None:
    """The user's two edits: the composer prefixes its hint, and its prompt gains an instruction line."""
    nodes = mine / "graphs" / "mentor" / "nodes.py"
    nodes.write_text(nodes.read_text().replace('"draft": task.compose(', f'"draft": {PREFIX!r} + task.compose('))
    prompt = mine / "prompts" / "hint_composer.md"
    prompt.write_text(INSTRUCTION + "\n" + prompt.read_text())


def with_llm_composer(mine: Path, llm: dict, **keys) -> Path:
    """The copy's mentor.yaml with the composer on `llm`, so its edited prompt is sent (`keys`: more config keys)."""
    config = yaml.safe_load((mine / "mentor.yaml").read_text())
    config["nodes"]["hint_composer"] = "llm"
    config.update(llm=llm, **keys)
    path = mine / "mentor-llm.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    """One step of a tiny real GRPO run with the installed mentor: its output_dir holds mentor/traces.sqlite."""
    from mentor import Mentor
    from tiny_grpo import RecordingReward, make_trainer

    path = tmp_path_factory.mktemp("real_run")
    trainer = make_trainer(path, RecordingReward(), max_steps=1)
    Mentor.from_config(None).attach(trainer)
    trainer.train()
    assert (path / "mentor" / "traces.sqlite").is_file()
    return path


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("loop") / "mine"
    assert main(["graph", "copy", str(folder)]) == 0
    edit_copy(folder)
    return folder


def test_replay_a_real_run_through_the_edited_copy_and_measure_it_against_the_original(real_run, mine, tmp_path,
                                                                                       capsys):
    out = tmp_path / "replayed.jsonl"
    with pytest.warns(UserWarning, match="only `llm` nodes read prompts"):  # rules everywhere: said, not hidden
        assert main(["diagnose", str(real_run / "mentor" / "traces.sqlite"), "-o", str(out),
                     "--config", str(mine / "mentor.yaml")]) == 0
    err = capsys.readouterr().err
    assert f"mentor graph: {mine / 'graphs' / 'mentor' / 'graph.py'}:graph (sha256 " in err
    replayed = [json.loads(line) for line in out.read_text().splitlines()]
    hinted = [r["hint"] for r in replayed if r["hint"]]
    assert replayed and hinted and all(h.startswith(PREFIX) for h in hinted)

    report = tmp_path / "report.json"
    with pytest.warns(UserWarning, match="only `llm` nodes read prompts"):
        assert main(["eval", str(real_run), "--policy", "lab", "--config", "shipped=default", "--config",
                     f"mine={mine / 'mentor.yaml'}", "--samples", "2", "--threads", "1", "-o", str(report),
                     "--interventions", str(tmp_path / "rows")]) == 0
    err = capsys.readouterr().err
    assert f"[mine] mentor graph: {mine / 'graphs' / 'mentor' / 'graph.py'}:graph" in err
    assert "[shipped] mentor graph: " in err and f"[shipped] mentor graph: {mine}" not in err
    rows = json.loads(report.read_text())["configs"]
    assert rows["mine"]["groups"] == rows["shipped"]["groups"] == len(replayed)
    shipped_hints = [json.loads(x)["hint"] for x in (tmp_path / "rows" / "shipped.jsonl").read_text().splitlines()]
    mine_hints = [json.loads(x)["hint"] for x in (tmp_path / "rows" / "mine.jsonl").read_text().splitlines()]
    assert all(h.startswith(PREFIX) for h in mine_hints if h)
    assert [h and h.removeprefix(PREFIX) for h in mine_hints] == shipped_hints  # the prefix is the only change


def test_train_with_the_copy_and_find_what_ran_in_the_traces_and_the_viewer(mine, openai_server, tmp_path, capsys,
                                                                             browser):
    from mentor import Mentor
    from mentor.traces import TraceStore
    from mentor.traces.viewer import write_html
    from tiny_grpo import RecordingReward, make_trainer

    config = with_llm_composer(mine, {"provider": "openai", "model": "test", "base_url": openai_server.base_url,
                                      "request_timeout_s": 5.0, "max_retries": 0})
    trainer = make_trainer(tmp_path / "run", RecordingReward(), max_steps=2)
    Mentor.from_config(config).attach(trainer)
    err = capsys.readouterr().err
    assert "mentor attached: task=arithmetic" in err  # printed: a default TRL script shows it
    assert f"mentor graph: {mine / 'graphs' / 'mentor' / 'graph.py'}:graph" in err
    assert "hint_composer=llm, leakage_checker=rules (llm: openai test at " in err
    trainer.train()
    sent = openai_server.texts("hint_composer")
    assert sent and all(INSTRUCTION in text for text in sent)

    store = TraceStore(tmp_path / "run", readonly=True)
    [run] = store.runs()
    records = store.interventions()
    store.close()
    graph_files = {f["path"]: f["sha256"] for f in run["graph"]["files"]}
    prompt_files = {f["path"]: f["sha256"] for f in run["prompts"]["files"]}
    nodes_file, prompt_file = mine / "graphs" / "mentor" / "nodes.py", mine / "prompts" / "hint_composer.md"
    assert graph_files[str(nodes_file)] == sha256(nodes_file) and prompt_files[str(prompt_file)] == sha256(prompt_file)
    assert run["step"] == 0 and run["backends"]["hint_composer"] == "llm"
    composer = [n for r in records for n in r["nodes"] if n["node"] == "hint_composer"]
    assert composer and all(n["prompt"] in sent and INSTRUCTION in n["prompt"] for n in composer)

    # The page draws the graph the run recorded (the copy's), not the installed one.
    page, _ = write_html(tmp_path / "run")
    assert '"spec":"' + str(mine / "graphs" / "mentor" / "graph.py") + ':graph"' in page.read_text()
    browser.navigate(page.as_uri())
    browser.wait_for("window.mentorReady")
    assert browser.problems() == []
    shown = browser.js("document.getElementById('runs').innerText")
    assert f"graph\n{mine / 'graphs' / 'mentor' / 'graph.py'}" in shown and "hint_composer=llm" in shown
    browser.js("document.querySelectorAll('#runs details').forEach(d => d.open = true)")
    shown = browser.js("document.getElementById('runs').innerText")
    assert f"{sha256(nodes_file)[:12]}\t{nodes_file}" in shown and f"{sha256(prompt_file)[:12]}\t{prompt_file}" in shown
    browser.click(f"#list tbody tr[data-id='{records[0]['id']}']")
    browser.wait_for("!!document.querySelector(\"#detail .node[data-node='hint_composer'] details.prompt\")")
    browser.click("#detail .node[data-node='hint_composer'] details.prompt summary")
    browser.wait_for("document.querySelector(\"#detail .node[data-node='hint_composer'] pre.prompt-sent\")"
                     ".textContent.length > 0")  # filled on the fold's toggle event, which fires after the click
    prompt = browser.js("document.querySelector(\"#detail .node[data-node='hint_composer'] pre.prompt-sent\").innerText")
    assert INSTRUCTION in prompt and prompt in sent


def test_the_edited_prompt_is_the_one_the_real_smollm2_gets(mine, smollm2):
    import torch

    from failed_groups import ARITHMETIC
    from mentor.llm.hf import BatchedChat
    from mentor.runtime import MentorRuntime
    from mentor.types import FailedGroup

    config = with_llm_composer(mine, {"provider": "hf", "model": smollm2, "request_timeout_s": 120,
                                      "parse_retries": 0, "max_tokens": 48}, timeout_s=300)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        chat = BatchedChat(model=smollm2)
        runtime = MentorRuntime(config, chat_model=chat)
        [result] = runtime.run([FailedGroup.from_dict(ARITHMETIC)])
    finally:
        torch.set_num_threads(threads)
    [composer] = [n for n in result.nodes if n["node"] == "hint_composer"]
    assert composer["backend"] == "llm" and result.fallbacks == [], result.fallbacks  # the model answered
    assert composer["prompt"].startswith(INSTRUCTION) and "Q: 158+267=? A:" in composer["prompt"]
    assert runtime.versions["llm"]["model"] == smollm2
