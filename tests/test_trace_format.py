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


# The viewer's two decoding functions, cut out of its script and run by node on the same fixture.
NODE_SCRIPT = """
const fs = require('fs');
const src = fs.readFileSync(process.argv[1], 'utf8');
const start = src.indexOf('function nodeIO(nodes)'), end = src.indexOf('function lazyJson(');
if (start < 0 || end < start) throw new Error('nodeIO and deref not found in viewer.js');
const nodeIO = new Function(src.slice(start, end) + '; return nodeIO;')();
const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).cases;
process.stdout.write(JSON.stringify(cases.map(c => nodeIO(c.records))));
"""


def test_the_viewer_script_decodes_as_node_io_does():
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is not installed: `make test` installs Debian's nodejs (apt-get install -y nodejs)"
    done = subprocess.run([node, "-e", NODE_SCRIPT, str(VIEWER_JS), str(FIXTURE)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    decoded = json.loads(done.stdout)
    assert decoded == [case["decoded"] for case in CASES]
    assert decoded == [io_of(node_io(case["records"])) for case in CASES]
