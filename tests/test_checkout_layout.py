"""Run from a checkout, `mentor.graphs` and `mentor.prompts` are the repository's top-level graphs/ and prompts/ (where
the wheel installs them inside the package), and no other folder of the checkout joins the package."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """if True:
    import importlib, json
    import mentor.graphs.mentor.graph as graph, mentor.prompts, mentor.prompts.code as code
    from mentor.config import DEFAULT_GRAPH, DEFAULT_PROMPTS_DIR
    missing = []
    for name in ("mentor.tests", "mentor.benchmarks", "mentor.training", "mentor.docs"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            missing.append(name)
    print(json.dumps({"graph": graph.__file__, "prompts": list(mentor.prompts.__path__), "code": list(code.__path__),
                      "default_graph": DEFAULT_GRAPH, "default_prompts": DEFAULT_PROMPTS_DIR, "missing": missing}))
"""


def test_a_checkout_on_the_path_maps_graphs_and_prompts_and_nothing_else(tmp_path):
    # From elsewhere, with only PYTHONPATH naming the checkout: an editable install of another checkout in this
    # interpreter's site-packages must not win.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found["graph"] == str(ROOT / "graphs" / "mentor" / "graph.py")
    assert found["prompts"] == [str(ROOT / "prompts")] and found["code"] == [str(ROOT / "prompts" / "code")]
    assert found["default_graph"] == f"{ROOT / 'graphs' / 'mentor' / 'graph.py'}:graph"
    assert found["default_prompts"] == str(ROOT / "prompts")
    assert found["missing"] == ["mentor.tests", "mentor.benchmarks", "mentor.training", "mentor.docs"]
