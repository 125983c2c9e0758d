"""The compact node-record format of a trace (mentor/trace_format.py): the runtime's encoder, the Python decoder
and the viewer's script decoder, all checked on one shared fixture, tests/data/node_records.json."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mentor.trace_format import encoded, node_io, node_view

FIXTURE = Path(__file__).parent / "data" / "node_records.json"
VIEWER_JS = Path(__file__).parents[1] / "mentor" / "traces" / "assets" / "viewer.js"
CASES = json.loads(FIXTURE.read_text())["cases"]


def io_of(full: list[dict]) -> list[dict]:
    return [{"input": node["input"], "output": node["output"]} for node in full]


@pytest.mark.parametrize("case", [c for c in CASES if "stream" in c], ids=lambda c: c["name"])
def test_the_runtime_writes_the_compact_records(case):
    outputs, records = [], []
    for node in case["stream"]:
        records.append(encoded(node_view(node["input"]), outputs, dict(node["output"])))
        outputs.append(node["output"])
    assert records == case["records"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_node_io_rebuilds_each_whole_input_and_output(case):
    full = node_io(case["records"])
    assert io_of(full) == case["decoded"]
    assert [n.get("inherited") for n in full] == [r.get("inherited") for r in case["records"]]  # the rest is kept


# The viewer's decoding functions, cut out of its script and run by node on the fixtures the Python decoders read.
NODE_SCRIPT = """
const fs = require('fs');
const [script, fixture, name, endMarker, field] = process.argv.slice(1);
const src = fs.readFileSync(script, 'utf8');
const start = src.indexOf('function ' + name + '('), end = src.indexOf(endMarker);
if (start < 0 || end < start) throw new Error(name + ' not found in viewer.js');
const decode = new Function(src.slice(start, end) + '; return ' + name + ';')();
const cases = JSON.parse(fs.readFileSync(fixture, 'utf8')).cases;
process.stdout.write(JSON.stringify(cases.map(c => decode(c[field]))));
"""


def viewer_decoded(name: str, end_marker: str, fixture: Path, field: str) -> list:
    """viewer.js's function `name` (its source up to `end_marker`, helpers it calls included), run by node on each
    case's `field` of `fixture`."""
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed: `make test` installs Debian's nodejs (apt-get install -y nodejs)"
    done = subprocess.run([node, "-e", NODE_SCRIPT, str(VIEWER_JS), str(fixture), name, end_marker, field],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_viewer_script_decodes_as_node_io_does():
    decoded = viewer_decoded("nodeIO", "function lazyJson(", FIXTURE, "records")
    assert decoded == [case["decoded"] for case in CASES]
    assert decoded == [io_of(node_io(case["records"])) for case in CASES]


# --- the trace record: one writer, one decoder in Python and one in the viewer's script -----------------------------
RECORDS = Path(__file__).parent / "data" / "trace_records.json"
RECORD_CASES = json.loads(RECORDS.read_text())["cases"]


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda c: c["name"])
def test_decoded_record_gives_every_record_the_current_shape(case):
    from mentor.trace_format import TraceRecord, decoded_record

    decoded = decoded_record(case["raw"])
    assert decoded == case["decoded"]
    assert {"reference", "previous_hints", "hinted_prompt", "teacher_prompt", "recovered"} <= set(decoded) <= set(
        TraceRecord.__annotations__)
    assert {k: decoded[k] for k in case["raw"]} == case["raw"]  # what a record holds is kept as it is
    assert decoded_record(decoded) == decoded


def test_a_record_of_an_earlier_version_gets_its_group_from_the_classifier():
    old = RECORD_CASES[0]
    assert "reference" not in old["raw"] and old["raw"]["prompt"] == "Q: 851+368=? A:"
    assert old["decoded"]["reference"] == {"answer": "1219", "operands": [851, 368]}
    assert old["decoded"]["hinted_prompt"] is None and old["decoded"]["recovered"] is old["raw"]["recovered"]
    diagnose_line = RECORD_CASES[2]
    assert "recovered" not in diagnose_line["raw"] and diagnose_line["decoded"]["recovered"] is None


def test_the_viewer_script_decodes_records_as_decoded_record_does():
    decoded = viewer_decoded("traceRecord", "// --- DOM helpers", RECORDS, "raw")
    assert decoded == [case["decoded"] for case in RECORD_CASES]


def test_a_store_an_earlier_version_wrote_is_still_read_as_failed_groups(tmp_path):
    from mentor.command_files import read_failures
    from mentor.traces import TraceStore

    store = TraceStore(tmp_path)  # the records as the earlier version stored them, unchanged
    store.append(0, [case["raw"] for case in RECORD_CASES[:2]])
    store.close()
    [group], skipped = read_failures(tmp_path)
    assert (group.prompt, group.reference) == ("Q: 851+368=? A:", {"answer": "1219", "operands": [851, 368]})
    assert len(group.attempts) == len(RECORD_CASES[0]["raw"]["attempts"])
    assert len(skipped) == 1 and "no reference" in skipped[0]  # the stub
    reader = TraceStore(tmp_path, readonly=True)
    assert [{k: v for k, v in r.items() if k != "id"} for r in reader.interventions()] == [
        case["decoded"] for case in RECORD_CASES[:2]]
    reader.close()


def test_a_mentor_diagnose_file_is_read_back_as_failed_groups(tmp_path):
    """The writer's line carries the group, so `mentor diagnose`'s output is again an input: same groups."""
    from failed_groups import ARITHMETIC
    from mentor.command_files import read_failures
    from mentor.traces.jsonl import write_interventions
    from mentor.types import FailedGroup, Intervention

    group = FailedGroup.from_dict({**ARITHMETIC, "previous_hints": [{"tier": 1, "hint": "carry"}]})
    write_interventions(tmp_path / "out.jsonl", [group], [Intervention(group.problem_id, group.task, hint="h")],
                        ["Q: ... Hint: h"])
    [line] = (tmp_path / "out.jsonl").read_text().splitlines()
    assert json.loads(line)["hinted_prompt"] == "Q: ... Hint: h" and json.loads(line)["recovered"] is None
    assert read_failures(tmp_path / "out.jsonl") == ([group], [])
