"""Editing the mentor: `mentor graph copy`, which files a run loads (never the working directory's by default), prompt
files checked at load, what a run says it ran, and `mentor diagnose` reading what `mentor eval` reads."""

import json
import os
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest
import yaml

from failed_groups import ARITHMETIC
from mentor.cli import main
from mentor.config import DEFAULT_GRAPH, MentorConfig
from mentor.llm.prompts import PROMPT_FIELDS
from mentor.runtime import MentorRuntime
from mentor.shipped import shipped_folder
from mentor.types import FailedGroup, InputError

CHECKOUT = Path(__file__).resolve().parent.parent
COMPOSE = '"draft": task.compose('


def edit_composer(graphs: Path, prefix: str) -> None:
    """Makes the copy's composer start every hint with `prefix`."""
    nodes = graphs / "mentor" / "nodes.py"
    assert COMPOSE in nodes.read_text()
    nodes.write_text(nodes.read_text().replace(COMPOSE, f'"draft": {prefix!r} + task.compose('))


def hint_of(config) -> str:
    [intervention] = MentorRuntime(config).run([FailedGroup.from_dict(ARITHMETIC)])
    return intervention.hint


def test_graph_copy_writes_a_copy_whose_edits_run_from_any_working_directory(tmp_path, monkeypatch, capsys):
    assert main(["graph", "copy", str(tmp_path / "mine")]) == 0
    assert "wrote" in capsys.readouterr().out
    mine = tmp_path / "mine"
    assert {p.name for p in mine.iterdir()} == {"graphs", "prompts", "mentor.yaml"}
    assert not list(mine.rglob("__pycache__"))
    assert (mine / "prompts" / "hint_composer.md").read_text() == (shipped_folder("prompts") / "hint_composer.md"
                                                                   ).read_text()
    edit_composer(mine / "graphs", "MINE: ")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the copy's relative paths are found from its mentor.yaml's folder
    config = MentorConfig.load(mine / "mentor.yaml")
    assert config.nodes == {n: "rules" for n in config.nodes}  # so its prompts are read by none: said at load
    assert config.graph == f"{mine / 'graphs' / 'mentor' / 'graph.py'}:graph"
    assert config.prompts_dir == str(mine / "prompts")
    with warnings.catch_warnings():  # the copy's prompts are as shipped: its own mentor.yaml warns of nothing
        warnings.simplefilter("error")
        assert hint_of(config).startswith("MINE: ")
    prompt = mine / "prompts" / "hint_composer.md"
    prompt.write_text("EDITED\n" + prompt.read_text())
    with pytest.warns(UserWarning, match="holds edited prompts, but every node runs `rules`"):  # an edit unread
        hint_of(config)
    assert not hint_of(None).startswith("MINE: ")  # the installed graph, loaded in the same process, is untouched
    # A second copy into the same folder would overwrite the edits: refused, naming what is there.
    assert main(["graph", "copy", str(mine)]) == 2
    assert "already exist" in capsys.readouterr().err and "EDITED" not in (mine / "graphs" / "mentor" / "nodes.py"
                                                                            ).read_text()


def test_a_cp_r_copy_of_a_checkout_runs_its_own_files(tmp_path):
    shutil.copytree(CHECKOUT / "graphs", tmp_path / "graphs")
    shutil.copytree(CHECKOUT / "prompts", tmp_path / "prompts")
    edit_composer(tmp_path / "graphs", "COPIED: ")
    assert hint_of({"graph": f"{tmp_path / 'graphs' / 'mentor' / 'graph.py'}:graph"}).startswith("COPIED: ")


def test_a_copy_that_imports_the_installed_nodes_is_warned_naming_both_files(tmp_path):
    shutil.copytree(CHECKOUT / "graphs", tmp_path / "old_copy")
    graph = tmp_path / "old_copy" / "mentor" / "graph.py"
    graph.write_text(graph.read_text().replace('nodes = sibling(__file__, "nodes")',
                                               "from mentor.graphs.mentor import nodes"))
    with pytest.warns(UserWarning) as caught:
        MentorRuntime({"graph": f"{graph}:graph"})
    [message] = [str(w.message) for w in caught if "edits to that file change nothing" in str(w.message)]
    assert str(graph) in message and str(graph.parent / "nodes.py") in message
    assert str(shipped_folder("graphs") / "mentor" / "nodes.py") in message


def test_the_default_graph_is_the_installed_one_whatever_the_working_directory_holds(tmp_path, monkeypatch):
    shutil.copytree(CHECKOUT / "graphs", tmp_path / "graphs")
    edit_composer(tmp_path / "graphs", "CWD: ")
    monkeypatch.chdir(tmp_path)
    assert DEFAULT_GRAPH == f"{shipped_folder('graphs') / 'mentor' / 'graph.py'}:graph"
    runtime = MentorRuntime(None)
    assert runtime.versions["graph"]["file"] == str((shipped_folder("graphs") / "mentor" / "graph.py").resolve())
    assert not hint_of(None).startswith("CWD: ")
    # A relative graph: in a dict (no config file) is found from the working directory.
    assert hint_of({"graph": "graphs/mentor/graph.py:graph"}).startswith("CWD: ")


def test_relative_paths_resolve_from_the_config_folder_then_the_working_directory(tmp_path, monkeypatch):
    shutil.copytree(CHECKOUT / "prompts", tmp_path / "work" / "my_prompts")
    (tmp_path / "conf").mkdir()
    config_file = tmp_path / "conf" / "mentor.yaml"
    config_file.write_text(yaml.safe_dump({"prompts_dir": "my_prompts", "graph": "graphs/mentor/graph.py:graph"}))
    monkeypatch.chdir(tmp_path / "work")
    config = MentorConfig.load(config_file)
    assert config.prompts_dir == "my_prompts"  # not beside the config: left for the working directory
    assert config.graph == "graphs/mentor/graph.py:graph"  # nowhere here: the shipped graph of that name
    shutil.copytree(CHECKOUT / "prompts", tmp_path / "conf" / "my_prompts")
    assert MentorConfig.load(config_file).prompts_dir == str(tmp_path / "conf" / "my_prompts")


@pytest.mark.parametrize("text, message", [
    ("Solve {problme}.\n{json_schema}", r"unknown placeholder\(s\) \{problme\}; the fields are \{task\}, \{problem\}"),
    ("Solve {problem} {unclosed\n", r"is not a valid template \(expected '\}' before end of string\)"),
    ("Write {\"hint\": 1}\n", r"unknown placeholder\(s\) \{\"hint\"\}"),
])
def test_a_bad_prompt_is_an_error_at_load_naming_the_file(tmp_path, text, message):
    shutil.copytree(shipped_folder("prompts"), tmp_path / "p")
    bad = tmp_path / "p" / "code" / "hint_composer.md"
    bad.write_text(text)
    with pytest.raises(InputError, match=message) as caught:
        MentorRuntime({"prompts_dir": str(tmp_path / "p"), "nodes": {"hint_composer": "llm"}})
    assert str(bad) in str(caught.value)


def test_every_prompt_field_is_given_to_every_node():
    from mentor.runtime.nodes import prompt_variables

    group = FailedGroup.from_dict(ARITHMETIC)
    assert set(prompt_variables({}, group)) | {"json_schema"} == set(PROMPT_FIELDS)
    readme = (shipped_folder("prompts") / "README.md").read_text()
    assert all(f"`{{{field}}}`" in readme for field in PROMPT_FIELDS)


def test_prompts_set_for_rules_nodes_warn_and_an_llm_node_without_a_prompt_is_refused(tmp_path):
    shutil.copytree(shipped_folder("prompts"), tmp_path / "p")
    (tmp_path / "p" / "code" / "hint_composer.md").write_text("Edited. {problem}")
    with pytest.warns(UserWarning, match="every node runs `rules`, and only `llm` nodes read prompts"):
        MentorRuntime({"prompts_dir": str(tmp_path / "p")})
    (tmp_path / "p" / "hint_composer.md").unlink()
    (tmp_path / "p" / "code" / "hint_composer.md").unlink()
    with pytest.raises(InputError, match="nodes.hint_composer: llm, but prompts_dir .* has no hint_composer.md"):
        MentorRuntime({"prompts_dir": str(tmp_path / "p"), "nodes": {"hint_composer": "llm"}})
    with pytest.raises(InputError, match="prompts_dir: .* is not a folder"):
        MentorRuntime({"prompts_dir": str(tmp_path / "nowhere")})


def test_diagnose_says_what_it_runs(tmp_path, capsys):
    failures = tmp_path / "failures.jsonl"
    failures.write_text(json.dumps(ARITHMETIC) + "\n")
    assert main(["diagnose", str(failures), "-o", str(tmp_path / "out.jsonl")]) == 0
    err = capsys.readouterr().err
    graph = shipped_folder("graphs") / "mentor" / "graph.py"
    assert f"mentor graph: {graph.resolve()}:graph (sha256 " in err
    assert f"mentor prompts: {shipped_folder('prompts').resolve()}" in err
    assert "mentor nodes: error_classifier=rules, root_cause_analyst=rules, hint_composer=rules, " \
           "leakage_checker=rules" in err


def test_diagnose_reads_a_run_directory_and_its_trace_store_and_refuses_a_file_that_is_not_jsonl(tmp_path, capsys):
    from mentor.traces import TraceStore

    group = FailedGroup.from_dict({**ARITHMETIC, "attempts": [{"completion": " 0415", "reward": 0.0}]})
    [iv] = MentorRuntime(None).run([group])
    store = TraceStore(tmp_path / "run")
    store.append(0, [{**iv.to_dict(), "step": 0, "prompt": group.prompt,
                      "attempts": [{"completion": " 0415", "reward": 0.0}]}])
    store.close()
    for source in (tmp_path / "run", tmp_path / "run" / "mentor" / "traces.sqlite"):
        out = tmp_path / "out.jsonl"
        assert main(["diagnose", str(source), "-o", str(out)]) == 0, capsys.readouterr().err
        [written] = [json.loads(line) for line in out.read_text().splitlines()]
        assert written["problem_id"] == ARITHMETIC["problem_id"] and written["hint"] == iv.hint
    renamed = tmp_path / "traces.db"  # SQLite under another name is still read as a store
    shutil.copy(tmp_path / "run" / "mentor" / "traces.sqlite", renamed)
    assert main(["diagnose", str(renamed), "-o", str(tmp_path / "out2.jsonl")]) == 0
    capsys.readouterr()
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 8)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    for bad, message in ((binary, "no failed group could be read"), (empty, "the file is empty"),
                         (other, "not a mentor trace store"), (tmp_path, "no trace store at")):
        out = tmp_path / "never.jsonl"
        assert main(["diagnose", str(bad), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert "mentor: error: " in err and str(bad) in err and message in err, err
        assert not out.exists()


def test_a_copy_loaded_by_file_path_as_langgraph_dev_does_runs_its_own_nodes(tmp_path):
    import importlib.util

    from mentor.runtime.runner import MentorRuntime as Runtime

    shutil.copytree(CHECKOUT / "graphs", tmp_path / "graphs")
    edit_composer(tmp_path / "graphs", "BY PATH: ")
    spec = importlib.util.spec_from_file_location("loaded_by_path", tmp_path / "graphs" / "mentor" / "graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # outside any package, as langgraph dev loads graph.py
    assert Path(module.nodes.__file__) == tmp_path / "graphs" / "mentor" / "nodes.py"
    runtime = Runtime(None)
    runtime.graph = module.graph
    [intervention] = runtime.run([FailedGroup.from_dict(ARITHMETIC)])
    assert intervention.hint.startswith("BY PATH: ")


def test_the_start_up_hash_covers_every_file_the_graph_loads(tmp_path):
    from mentor.runtime.versions import describe

    assert main(["graph", "copy", str(tmp_path / "mine")]) == 0
    config = {"graph": str(tmp_path / "mine" / "graphs" / "mentor" / "graph.py") + ":graph"}
    before = describe(MentorRuntime(config).versions).splitlines()[0]
    assert "nodes.py" in before and "state.py" in before  # the files it covers are named
    nodes = tmp_path / "mine" / "graphs" / "mentor" / "nodes.py"
    nodes.write_text(nodes.read_text() + "\n# an edit\n")
    after = describe(MentorRuntime(config).versions).splitlines()[0]
    assert before != after and before.split(" (sha256")[0] == after.split(" (sha256")[0]


def test_made_up_error_classes_are_warned_about_once_naming_the_tasks_classes(tmp_path):
    import warnings

    assert main(["graph", "copy", str(tmp_path / "mine")]) == 0
    nodes = tmp_path / "mine" / "graphs" / "mentor" / "nodes.py"
    text = nodes.read_text()
    assert text.count("task.classify(a, group.reference)") == 1
    nodes.write_text(text.replace("task.classify(a, group.reference)", '"misread_plus"'))
    runtime = MentorRuntime({"graph": str(nodes.parent / "graph.py") + ":graph"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = runtime.run([FailedGroup.from_dict({**ARITHMETIC, "problem_id": f"p{i}"}) for i in range(3)])
    assert all(r.diagnosis.error_classes == {"misread_plus": 3} for r in results)  # kept, under its own name
    [warning] = [w for w in caught if "not classes of" in str(w.message)]
    assert "['misread_plus']" in str(warning.message) and "'missed_carry', 'no_answer'" in str(warning.message)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MentorRuntime().run([FailedGroup.from_dict(ARITHMETIC)])
    assert not [w for w in caught if "not classes of" in str(w.message)]  # the shipped classifier keeps to them


@pytest.mark.parametrize("name", ["mentor.yaml", "graphs", "prompts"])
def test_graph_copy_refuses_a_dangling_link_and_writes_nothing_through_it(tmp_path, capsys, name):
    folder, outside = tmp_path / "mine", tmp_path / "outside" / name
    folder.mkdir()
    (tmp_path / "outside").mkdir()
    (folder / name).symlink_to(outside)  # dangling: `outside/<name>` does not exist
    assert main(["graph", "copy", str(folder)]) == 2
    assert f"{folder / name} (a link) already exist(s)" in capsys.readouterr().err
    assert not os.path.lexists(outside) and sorted(p.name for p in folder.iterdir()) == [name]  # no half copy


def test_graph_copy_writes_mentor_yaml_without_following_a_link_made_after_the_check(tmp_path, monkeypatch):
    from mentor.cli import graph_copy

    folder, outside = tmp_path / "mine", tmp_path / "outside.yaml"
    real_copytree = shutil.copytree

    def copytree_then_plant_a_link(src, dst, *args, **kw):
        real_copytree(src, dst, *args, **kw)
        if Path(dst) == folder / "prompts":
            (folder / "mentor.yaml").symlink_to(outside)

    monkeypatch.setattr(graph_copy.shutil, "copytree", copytree_then_plant_a_link)
    with pytest.raises(InputError, match="nothing was written"):
        graph_copy.copy_graph(folder)
    assert not outside.exists() and not (folder / "graphs").exists() and not (folder / "prompts").exists()


def test_a_prompt_edited_while_the_process_runs_is_what_the_next_call_sends(tmp_path):
    """A notebook's loop: diagnose, edit the prompt, diagnose again. The second call reads the edit."""
    from mentor.llm.prompts import load_prompt

    shutil.copytree(shipped_folder("prompts"), tmp_path / "p")
    sent = lambda: load_prompt(str(tmp_path / "p"), "code", "hint_composer").messages[0].prompt.template  # noqa: E731
    before = sent()
    (tmp_path / "p" / "code" / "hint_composer.md").write_text("EDITED {problem}")
    assert sent() == "EDITED {problem}" != before
