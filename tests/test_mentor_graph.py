"""The mentor graph with the rules backend: its shape, the bounded leak loop, the runtime and `mentor diagnose`."""

import asyncio
import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from failed_groups import ARITHMETIC
from mentor.cli import main
from mentor.config import MentorConfig
from mentor.llm.schemas import node_schema
from mentor.runtime import MentorRuntime, load_graph
from mentor.runtime.context import MentorContext, MentorResources, lent_resources
from mentor.tasks import get_task
from mentor.tasks.base import HINT_TIERS
from mentor.types import FailedGroup, InputError, LeakVerdict


def test_graph_has_the_four_agents_and_the_bounded_loop():
    graph = load_graph(MentorConfig().graph).get_graph()
    nodes = set(graph.nodes) - {"__start__", "__end__"}
    assert nodes == {"error_classifier", "root_cause_analyst", "hint_composer", "leakage_checker"}
    edges = {(e.source, e.target) for e in graph.edges}
    assert ("error_classifier", "root_cause_analyst") in edges
    assert ("root_cause_analyst", "hint_composer") in edges
    assert ("hint_composer", "leakage_checker") in edges
    assert ("leakage_checker", "hint_composer") in edges  # the loop back with the reason
    assert ("leakage_checker", "__end__") in edges


def test_rules_backend_diagnoses_arithmetic_failures():
    [result] = MentorRuntime().run([FailedGroup.from_dict(ARITHMETIC)])
    assert result.error is None
    assert result.diagnosis.error_classes == {"missed_carry": 2, "wrong_tens": 1}
    assert result.diagnosis.error_class == "missed_carry"
    assert "2 of 3 attempts get the tens digit wrong" in result.diagnosis.root_cause
    assert result.diagnosis.first_error_step == 2  # the tens column, counted from the units
    assert "drop the carry" in result.diagnosis.root_cause  # the root cause speaks of the error class
    assert result.hint == "042" and result.tier == 3 and not result.withheld  # covers the tens errors
    assert set(result.latency_s) == set(result.backend) == {"error_classifier", "root_cause_analyst",
                                                            "hint_composer", "leakage_checker"}
    assert all(b == "rules" for b in result.backend.values())
    assert [n["node"] for n in result.nodes] == ["error_classifier", "root_cause_analyst", "hint_composer",
                                                 "leakage_checker"]
    # The classifier's traced output keeps the group's feedback, not the prompt and completions again.
    group = result.nodes[0]["output"]["group"]
    assert "prompt" not in group and group["reference"] == ARITHMETIC["reference"]
    assert [a["feedback"]["extracted_answer"] for a in group["attempts"]] == ["0415", "0325", "0435"]
    assert all("completion" not in a and "reward" not in a for a in group["attempts"])
    # A 1-1-1 tie between the hundreds, tens and units: the error class and the root cause both take the
    # leftmost (most significant) wrong column; the first wrong step is still the rightmost (the units).
    tie = {**ARITHMETIC, "attempts": [{"completion": c, "reward": 0.0} for c in (" 0525", " 0435", " 0426")]}
    [result] = MentorRuntime().run([FailedGroup.from_dict(tie)])
    assert result.diagnosis.error_classes == {"wrong_hundreds": 1, "wrong_tens": 1, "wrong_units": 1}
    assert result.diagnosis.error_class == "wrong_hundreds"
    assert result.diagnosis.root_cause.startswith("1 of 3 attempts get the hundreds digit wrong")
    assert result.diagnosis.first_error_step == 1


@pytest.mark.parametrize("retries", [0, 2])
def test_a_hint_that_always_leaks_is_withheld_after_the_bound(monkeypatch, retries):
    task = get_task("arithmetic")
    monkeypatch.setattr(task, "compose", lambda group, diagnosis, tier, feedback: "the answer is 0425")
    [result] = MentorRuntime({"max_leak_retries": retries}).run([FailedGroup.from_dict(ARITHMETIC)])
    assert result.withheld and result.hint is None
    drafts = result.leak["leaked_drafts"]
    assert len(drafts) == retries + 1
    assert all(d["detectors"] and d["draft"] == "the answer is 0425" for d in drafts)
    assert [n["node"] for n in result.nodes].count("hint_composer") == retries + 1


def test_a_library_hint_that_leaks_is_withheld_though_retries_are_left():
    leaky = {**ARITHMETIC, "reference": {**ARITHMETIC["reference"], "hint": "0425"}}
    [result] = MentorRuntime({"graph": "graphs/static_hints/graph.py:graph", "max_leak_retries": 2}).run(
        [FailedGroup.from_dict(leaky)])
    assert result.hint is None and result.withheld and result.error is None
    assert [d["draft"] for d in result.leak["leaked_drafts"]] == ["0425"]


def test_the_composer_hears_why_a_draft_leaked(monkeypatch):
    task = get_task("arithmetic")
    seen = []

    def compose(group, diagnosis, tier, feedback):
        seen.append(feedback)
        return "0425" if feedback is None else "04"

    monkeypatch.setattr(task, "compose", compose)
    [result] = MentorRuntime().run([FailedGroup.from_dict(ARITHMETIC)])
    assert result.hint == "04" and not result.withheld
    assert seen[0] is None and "leaked" in seen[1]


def test_one_failing_group_does_not_touch_the_others(monkeypatch):
    task = get_task("arithmetic")
    original = task.analyse

    def analyse(group, classes):
        if group.problem_id == "bad":
            raise RuntimeError("boom")
        return original(group, classes)

    monkeypatch.setattr(task, "analyse", analyse)
    groups = [FailedGroup.from_dict({**ARITHMETIC, "problem_id": pid}) for pid in ("a", "bad", "c")]
    results = MentorRuntime().run(groups)
    assert [r.problem_id for r in results] == ["a", "bad", "c"]
    assert results[1].error and "boom" in results[1].error and results[1].hint is None
    assert results[0].hint == results[2].hint == "042"


LONG_GRAPH = """
from langgraph.graph import END, START, StateGraph

from mentor.graphs.mentor.graph import route_after_check
from mentor.graphs.mentor.nodes import error_classifier, hint_composer, leakage_checker, root_cause_analyst
from mentor.graphs.mentor.state import MentorState

builder = StateGraph(MentorState)
chain = ["error_classifier"] + [f"note_{i}" for i in range(12)] + ["root_cause_analyst", "hint_composer"]
builder.add_node("error_classifier", error_classifier)
for name in chain[1:-2]:
    builder.add_node(name, lambda state: {})
builder.add_node("root_cause_analyst", root_cause_analyst)
builder.add_node("hint_composer", hint_composer)
builder.add_node("leakage_checker", leakage_checker)
builder.add_edge(START, chain[0])
for a, b in zip(chain, chain[1:] + ["leakage_checker"]):
    builder.add_edge(a, b)
builder.add_conditional_edges("leakage_checker", route_after_check)
graph = builder.compile(name="long")
"""


def test_an_edited_graph_longer_than_the_default_is_not_cut_off(tmp_path, monkeypatch):
    # 14 steps before the composer, then 3 drafts: past the old fixed limit of 8 + 2 * max_leak_retries.
    (tmp_path / "long_graph.py").write_text(LONG_GRAPH)
    monkeypatch.setattr(get_task("arithmetic"), "compose", lambda group, diagnosis, tier, feedback: "it is 0425")
    runtime = MentorRuntime({"graph": f"{tmp_path / 'long_graph.py'}:graph", "max_leak_retries": 2})
    [result] = runtime.run([FailedGroup.from_dict(ARITHMETIC)])
    assert result.error is None and result.withheld
    assert len(result.leak["leaked_drafts"]) == 3
    assert [n["node"] for n in result.nodes].count("note_11") == 1


def test_a_graph_run_given_no_context_gets_the_defaults_and_a_mapping_is_read_as_the_context(monkeypatch):
    # `langgraph dev` and Studio run the graph with no context, or with the run's `context` mapping.
    monkeypatch.setattr(get_task("arithmetic"), "compose", lambda group, diagnosis, tier, feedback: "it is 0425")
    graph = load_graph(MentorConfig().graph)
    default = asyncio.run(graph.ainvoke({"group": ARITHMETIC}))
    given = asyncio.run(graph.ainvoke({"group": ARITHMETIC}, context={"max_leak_retries": 0}))
    assert default["withheld"] and len(default["leaked_drafts"]) == 1 + MentorConfig().max_leak_retries
    assert given["withheld"] and len(given["leaked_drafts"]) == 1
    with pytest.raises(TypeError, match="'mentor'"):  # the settings sit at the context's top level now
        asyncio.run(graph.ainvoke({"group": ARITHMETIC}, context={"mentor": {"max_leak_retries": 0}}))


def test_the_run_context_is_plain_described_settings_and_the_live_resources_are_apart():
    # What `langgraph dev` sends as JSON and Studio shows: every field described, nothing live inside.
    settings = MentorContext.of(MentorConfig(nodes={"hint_composer": "llm"}, max_leak_retries=1))
    assert [f.name for f in dataclasses.fields(MentorContext) if not f.metadata.get("description")] == []
    for spec in (MentorConfig().graph, "graphs/static_hints/graph.py:graph"):  # the schema LangGraph serves for it
        described = load_graph(spec).get_context_jsonschema()["properties"]
        assert sorted(described) == sorted(f.name for f in dataclasses.fields(MentorContext))
        assert all(field["description"] for field in described.values()), spec
    plain = json.loads(json.dumps(dataclasses.asdict(settings)))
    assert MentorContext(**plain) == settings and plain["nodes"]["hint_composer"] == "llm"
    assert isinstance(MentorContext(llm={"max_tokens": 7}).llm.max_tokens, int)
    with pytest.raises(InputError, match="nodes.hint_composer: backend 'gpt'"):
        MentorContext(nodes={"hint_composer": "gpt"})
    with pytest.raises(InputError, match="max_leak_retries: -1 is out of range"):
        MentorContext(max_leak_retries=-1)
    with pytest.raises(InputError, match=r"llm: unknown key\(s\) \['colour'\]"):
        MentorContext(llm={"colour": "blue"})
    runtime = MentorRuntime({"max_leak_retries": 1})
    assert runtime.context == MentorContext(max_leak_retries=1)
    assert lent_resources() == MentorResources()  # outside a run: none lent


@pytest.mark.parametrize("prompt", ["prompts/hint_composer.md", "prompts/code/hint_composer.md"])
def test_the_composer_prompts_and_schema_name_the_library_hint_tiers(prompt):
    text = Path(prompt).read_text()
    assert {int(n): name for n, name in re.findall(r"^- tier (\d), ([a-z ]+):", text, re.M)} == HINT_TIERS
    tiers = sorted(HINT_TIERS)
    assert f'"tier": <{", ".join(map(str, tiers[:-1]))} or {tiers[-1]}>' in text
    listed = ", ".join(f"{n} {name}" for n, name in HINT_TIERS.items())
    assert f"the tier asked of the composer: {listed} |" in Path("prompts/README.md").read_text()
    assert node_schema("hint_composer", {}, 1)["properties"]["tier"]["enum"] == tiers


def test_graph_loads_from_an_edited_copy(tmp_path):
    shutil.copytree("graphs", tmp_path / "my_graphs")
    graph_file = tmp_path / "my_graphs" / "mentor" / "graph.py"
    graph_file.write_text(graph_file.read_text().replace('compile(name="mentor")', 'compile(name="edited")'))
    assert load_graph(f"{graph_file}:graph").name == "edited"
    assert load_graph(f"{graph_file}:build_graph").name == "edited"
    with pytest.raises(InputError, match="no variable 'nope'"):
        load_graph(f"{graph_file}:nope")
    # A copy that keeps the name `graphs` loads its own files beside the shipped graph, in one process.
    load_graph("graphs/mentor/graph.py:graph")
    shutil.copytree("graphs", tmp_path / "same_name" / "graphs")
    nodes = tmp_path / "same_name" / "graphs" / "mentor" / "nodes.py"
    nodes.write_text(nodes.read_text().replace('"draft": task.compose(', '"draft": "EDITED " + task.compose('))
    copy = f"{tmp_path / 'same_name' / 'graphs' / 'mentor' / 'graph.py'}:graph"
    [edited] = MentorRuntime({"graph": copy}).run([FailedGroup.from_dict(ARITHMETIC)])
    [shipped] = MentorRuntime({"graph": "graphs/mentor/graph.py:graph"}).run([FailedGroup.from_dict(ARITHMETIC)])
    assert edited.hint.startswith("EDITED ") and not shipped.hint.startswith("EDITED")


def test_config_errors_name_the_field():
    with pytest.raises(InputError, match="strategy"):
        MentorConfig.load({"strategy": "everything"})
    with pytest.raises(InputError, match="unknown key.*colour"):
        MentorConfig.load({"colour": "blue"})
    with pytest.raises(InputError, match="nodes.hint_composer"):
        MentorConfig.load({"nodes": {"hint_composer": "gpt"}})
    with pytest.raises(InputError, match="strip_hint.*mode: in_step"):
        MentorConfig.load({"mode": "next_attempt", "strip_hint": True})


@pytest.mark.parametrize("values, message", [
    ({"max_leak_retries": "two"}, r"max_leak_retries: expected int, got 'two' \(str\)"),
    ({"collapse_threshold": "abc"}, r"collapse_threshold: expected float, got 'abc'"),
    ({"max_rounds": 2.5}, r"max_rounds: expected int, got 2.5"),
    ({"k": True}, r"k: expected int, got True \(bool\)"),  # a bool is an int to Python, not to a config
    ({"strip_hint": 1}, r"strip_hint: expected bool, got 1"),
    ({"columns": ["answer"]}, r"columns: expected mapping"),
    ({"llm": {"request_timeout_s": "30s"}}, r"llm.request_timeout_s: expected float, got '30s'"),
    ({"llm": {"base_url": 8000}}, r"llm.base_url: expected str or null, got 8000"),
])
def test_config_refuses_values_of_the_wrong_type(values, message):
    with pytest.raises(InputError, match=message):
        MentorConfig.load(values)


def test_config_accepts_an_int_for_a_float_and_null_where_optional():
    config = MentorConfig.load({"timeout_s": 5, "task": None, "llm": {"base_url": None, "temperature": 1}})
    assert (config.timeout_s, config.task, config.llm.base_url, config.llm.temperature) == (5, None, None, 1)
    # YAML 1.1 reads `1e-6` as text, and TRL's keys in the same file accept it: so do ours.
    assert MentorConfig.load(yaml.safe_load("collapse_threshold: 1e-6")).collapse_threshold == 1e-6


def test_diagnose_cli_skips_bad_lines_and_keeps_the_rest(tmp_path, capsys):
    failures = tmp_path / "failures.jsonl"
    rows = [json.dumps(ARITHMETIC), "{not json", json.dumps({"problem_id": "x", "task": "arithmetic"}),
            json.dumps({**ARITHMETIC, "problem_id": "add-0043"})]
    failures.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "failures.jsonl:2: not JSON" in captured.err
    assert "failures.jsonl:3: missing field 'prompt'" in captured.err
    assert "groups: 2" in captured.out and "missed_carry" in captured.out
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["problem_id"] for line in lines] == ["add-0042", "add-0043"]
    assert main(["diagnose", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    for line in lines:
        assert {"error_class", "error_classes", "root_cause", "first_error_step"} <= set(line["diagnosis"])
        assert {"hint", "tier", "withheld", "leak", "latency_s", "backend"} <= set(line)
        assert line["prompt"] == ARITHMETIC["prompt"]
        assert [a["completion"] for a in line["attempts"]] == [a["completion"] for a in ARITHMETIC["attempts"]]


def test_diagnose_cli_skips_lines_wrong_in_substance(tmp_path, capsys):
    bad = [{**ARITHMETIC, "attempts": [{"completion": " 0415", "reward": "abc"}]},
           {**ARITHMETIC, "attempts": [{"completion": " 0415", "reward": True}]},
           {**ARITHMETIC, "previous_hints": "use the carry"},
           {**ARITHMETIC, "previous_hints": [{"tier": 1, "hint": "0"}, "use the carry"]},
           {**ARITHMETIC, "task": "chess"},
           {**ARITHMETIC, "reference": {"operand": [158, 267]}},
           {**ARITHMETIC, "task": "code"}]
    good = {**ARITHMETIC, "problem_id": "add-0043", "attempts": [{"completion": " 0415", "reward": 0}],
            "previous_hints": [{"tier": 1, "hint": "0"}]}
    failures = tmp_path / "failures.jsonl"
    unscored = {**ARITHMETIC, "problem_id": "add-0044",  # a null reward (unscorable, as traces write it) fails
                "attempts": [{"completion": " 0415"}, {"completion": " 0325", "reward": None}]}
    failures.write_text("\n".join(json.dumps(row) for row in [ARITHMETIC, *bad, unscored, good]) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["diagnose", str(failures), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    expected = ["2: attempts[0].reward must be a number", "3: attempts[0].reward must be a number",
                "4: field 'previous_hints' must be a list", "5: previous_hints[1] must be a JSON object",
                "6: unknown task 'chess'", "7: reference lacks 'answer', 'operands', which the arithmetic task needs",
                "8: reference lacks 'test', 'entry_point', which the code task needs"]
    for message in expected:
        assert f"failures.jsonl:{message}" in err
    assert err.count("; skipped") == len(bad) and "Traceback" not in err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["problem_id"], line["error"]) for line in lines] == [("add-0042", None), ("add-0044", None),
                                                                       ("add-0043", None)]


def test_graph_draw_ascii_without_grandalf_says_what_to_install(monkeypatch, capsys):
    import langchain_core.runnables.graph_ascii as graph_ascii

    monkeypatch.setattr(graph_ascii, "_HAS_GRANDALF", False)  # as when grandalf is not installed
    assert main(["graph", "draw", "--format", "ascii"]) == 2
    assert "--format ascii needs grandalf: pip install 'mentor-rl[draw]'" in capsys.readouterr().err


def _static_config(tmp_path):
    path = tmp_path / "static.yaml"
    path.write_text("graph: graphs/static_hints/graph.py:graph\n")
    return path


def test_graph_draw_offline(tmp_path, capsys):
    assert main(["graph", "draw"]) == 0
    assert "hint_composer" in capsys.readouterr().out
    assert main(["graph", "draw", "--format", "ascii", "-o", str(tmp_path / "g.txt")]) == 0
    ascii_text = (tmp_path / "g.txt").read_text()
    assert "leakage_checker" in ascii_text
    # The leak retry, which the layout cannot draw, is named under it, as mermaid and PNG draw it.
    assert ascii_text.splitlines()[-1] == "leakage_checker -.-> hint_composer   (loops back: not drawn above)"
    assert main(["graph", "draw", "--format", "mermaid", "-o", str(tmp_path / "g.mmd")]) == 0
    assert "leakage_checker -.-> hint_composer" in (tmp_path / "g.mmd").read_text()
    assert main(["graph", "draw", "--format", "ascii", "--config", str(_static_config(tmp_path))]) == 0
    assert "loops back" not in capsys.readouterr().out  # the static graph has no loop
    assert main(["graph", "draw", "--format", "png", "-o", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_arithmetic_leak_check_spots_the_whole_answer_only():
    task = get_task("arithmetic")
    reference = {"answer": "0425", "operands": [158, 267]}
    assert task.leak_check("it is 425", reference).leaked
    assert task.leak_check("0 425", reference).leaked
    assert not task.leak_check("04", reference).leaked
    assert not task.leak_check("add 158 and 267", reference).leaked
    assert isinstance(task.leak_check("04", reference), LeakVerdict)


def test_max_leak_retries_has_one_default_and_the_run_sizes_its_budget_from_the_context():
    from mentor.runtime.runner import recursion_limit

    assert MentorContext().max_leak_retries == MentorConfig().max_leak_retries  # declared once, in MentorConfig
    runtime = MentorRuntime({"max_leak_retries": 5})
    assert runtime.context.max_leak_retries == 5
    assert recursion_limit(runtime.graph, runtime.context.max_leak_retries) == 4 * 6 + 4  # 4 nodes, 6 passes each
