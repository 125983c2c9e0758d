"""A bug in a user's node is told, not only counted: its traceback once in training, and in `mentor diagnose` and
`mentor eval`, which exit 1 for it unless `--allow-node-errors` (issue 34, item 7)."""

import json

import pytest

from failed_groups import ARITHMETIC
from mentor.cli import main
from mentor.runtime.node_errors import NodeErrorLog, error_key, report_node_errors
from mentor.types import Intervention


@pytest.fixture
def misspelt(tmp_path):
    """A `mentor graph copy` whose hint composer reads `group.taks`: an AttributeError in every group."""
    assert main(["graph", "copy", str(tmp_path / "mine")]) == 0
    nodes = tmp_path / "mine" / "graphs" / "mentor" / "nodes.py"
    text = nodes.read_text()
    head, composer = text.split("async def hint_composer", 1)
    assert "get_task(group.task)" in composer
    nodes.write_text(head + "async def hint_composer" + composer.replace("get_task(group.task)", "get_task(group.taks)", 1))
    return tmp_path / "mine" / "mentor.yaml"


def failures_file(tmp_path, n=3):
    path = tmp_path / "failures.jsonl"
    path.write_text("".join(json.dumps({**ARITHMETIC, "problem_id": f"add-{i}"}) + "\n" for i in range(n)))
    return path


def test_diagnose_prints_the_first_traceback_and_exits_1_for_a_node_error(misspelt, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["diagnose", str(failures_file(tmp_path)), "-o", str(out), "--config", str(misspelt)]) == 1
    err = capsys.readouterr().err
    assert "3 of 3 groups failed from an exception in a node" in err
    assert err.count("groups failed from an exception in a node") == 1  # the first traceback, not one per group
    assert "nodes.py" in err and "get_task(group.taks)" in err and "AttributeError" in err
    assert len(out.read_text().splitlines()) == 3  # the output is still written
    [row] = [json.loads(line) for line in out.read_text().splitlines()][:1]
    assert "AttributeError" in row["error_traceback"]
    assert main(["diagnose", str(failures_file(tmp_path)), "-o", str(out), "--config", str(misspelt),
                 "--allow-node-errors"]) == 0
    assert "Traceback" in capsys.readouterr().err  # still told


def test_diagnose_without_node_errors_exits_0(tmp_path, capsys):
    assert main(["diagnose", str(failures_file(tmp_path)), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_the_training_log_writes_each_distinct_error_once(capsys):
    def failed(problem_id, line, kind="AttributeError"):
        tb = f'Traceback (most recent call last):\n  File "/x/nodes.py", line {line}, in hint_composer\n{kind}: boom\n'
        return Intervention(problem_id, error=f"{kind}: boom", error_traceback=tb)

    log = NodeErrorLog()
    assert log.report([failed("a", 71), failed("b", 71), Intervention("ok")]) == 1
    assert log.report([failed("c", 71), failed("d", 80), failed("e", 71, "KeyError")]) == 2
    err = capsys.readouterr().err
    assert err.count("mentor: a node raised") == 3 and "group a" in err and "group b" not in err and "group c" not in err
    assert error_key(failed("a", 71).error_traceback) != error_key(failed("a", 72).error_traceback)
    noted = [failed("a", 71).error_traceback + f"During task with name 'hint_composer' and id '{i}'\n" for i in "xy"]
    assert error_key(noted[0]) == error_key(noted[1]) == error_key(failed("a", 71).error_traceback)
    assert report_node_errors([Intervention("ok")], allow=False) == 0


def test_a_node_error_in_training_is_logged_once_with_its_traceback(misspelt, tmp_path, capsys):
    from mentor import Mentor
    from tiny_grpo import RecordingReward, make_trainer

    trainer = make_trainer(tmp_path / "run", RecordingReward(), max_steps=2)
    Mentor.from_config(str(misspelt)).attach(trainer)
    trainer.train()
    failures = [log["mentor/failures"] for log in trainer.state.log_history if "mentor/failures" in log]
    assert sum(failures) >= 2  # several groups failed, over two steps
    err = capsys.readouterr().err
    assert err.count("mentor: a node raised") == 1, err[-3000:]
    assert "Traceback (most recent call last)" in err and "get_task(group.taks)" in err and "Logged once" in err


def test_eval_prints_the_first_traceback_and_exits_1_for_a_node_error(misspelt, tmp_path, capsys):
    argv = ["eval", str(failures_file(tmp_path, 2)), "--policy", "lab", "--config", f"mine={misspelt}",
            "--samples", "2", "-o", str(tmp_path / "report.json"), "--threads", "1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "[mine] 2 of 2 groups failed from an exception in a node" in err and "get_task(group.taks)" in err
    assert json.loads((tmp_path / "report.json").read_text())["configs"]["mine"]["failures"] == 2
    assert main(argv + ["--allow-node-errors"]) == 0
