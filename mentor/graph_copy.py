"""`mentor graph copy DIR`: an editable copy of the installed graphs and prompts, with a mentor.yaml that runs it."""

from __future__ import annotations

import shutil
from pathlib import Path

from mentor.shipped import shipped_folder
from mentor.types import InputError

CONFIG = """\
# Written by `mentor graph copy`: runs the graph and prompts of this folder. Relative paths are found from this
# file's folder. Prompts are read only by `llm` nodes: set a node to llm (and `llm:`, docs/configuration.md) to
# use an edited prompt.
graph: graphs/mentor/graph.py:graph
prompts_dir: prompts
nodes:
  error_classifier: rules
  root_cause_analyst: rules
  hint_composer: rules
  leakage_checker: rules
"""


def copy_graph(folder: Path) -> list[Path]:
    """Writes `folder`/graphs, `folder`/prompts and `folder`/mentor.yaml; returns them. Refuses (InputError) to
    write over any of them."""
    targets = [folder / "graphs", folder / "prompts", folder / "mentor.yaml"]
    there = [str(p) for p in targets if p.exists()]
    if there:
        raise InputError(f"graph copy {folder}: {', '.join(there)} already exist(s); give a new or empty folder")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"graph copy {folder}: is a file; give a folder")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(shipped_folder("graphs"), targets[0], ignore=ignore)
    shutil.copytree(shipped_folder("prompts"), targets[1], ignore=ignore)
    targets[2].write_text(CONFIG)
    return targets


def cmd_graph_copy(args) -> int:
    folder = Path(args.folder)
    copy_graph(folder)
    config = folder / "mentor.yaml"
    print(f"wrote {folder / 'graphs'} (edit graphs/mentor/nodes.py; graph.py wires the nodes), {folder / 'prompts'} "
          f"(read by llm nodes) and {config}\n"
          f"next: mentor diagnose RUN_DIR -o out.jsonl --config {config}   # replay a run's failures through it\n"
          f"      mentor eval RUN_DIR --policy CKPT --config shipped=default --config mine={config} -o report.json")
    return 0
