"""`mentor graph copy DIR`: an editable copy of the installed graphs and prompts, with a mentor.yaml that runs it."""

from __future__ import annotations

import os
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
    write over any of them, a link included (a dangling one too: writing through it would land outside `folder`),
    and leaves nothing behind when a copy fails half-way."""
    targets = [folder / "graphs", folder / "prompts", folder / "mentor.yaml"]
    there = [str(p) + (" (a link)" if p.is_symlink() else "") for p in targets if os.path.lexists(p)]
    if there:
        raise InputError(f"graph copy {folder}: {', '.join(there)} already exist(s); give a new or empty folder")
    if folder.is_symlink() and not folder.exists():
        raise InputError(f"graph copy {folder}: is a link to {os.readlink(folder)}, which does not exist; give a folder")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"graph copy {folder}: is a file; give a folder")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    made: list[Path] = []
    try:
        for source, target in ((shipped_folder("graphs"), targets[0]), (shipped_folder("prompts"), targets[1])):
            shutil.copytree(source, target, ignore=ignore)
            made.append(target)
        # O_EXCL with O_NOFOLLOW: a link put there since the check is refused, never written through.
        fd = os.open(targets[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(CONFIG)
    except OSError as e:
        for target in made:
            shutil.rmtree(target, ignore_errors=True)
        raise InputError(f"graph copy {folder}: {e.strerror or e} ({e.filename}); nothing was written") from e
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
