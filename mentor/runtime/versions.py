"""What a run ran: the graph's files and the prompt files, each with its path and hash, and each node's backend.

Training, `mentor diagnose` and `mentor eval` print it when they start (`describe`); the trace store keeps it once
per run, and the viewer shows it, so an edit can be traced to the run that used it."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

from mentor.runtime.drawing import drawing


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(paths: list[Path]) -> list[dict[str, str]]:
    return [{"path": str(p), "sha256": file_hash(p)} for p in paths if p.is_file()]


def graph_files(graph: Pregel, graph_file: Path) -> list[Path]:
    """The graph file, the other `.py` files of its folder, and the file of every node's code (the library's
    leakage checker; the installed nodes, if an edited copy still wires them in)."""
    files = {p.resolve() for p in graph_file.parent.glob("*.py")} | {graph_file.resolve()}
    for spec in getattr(getattr(graph, "builder", None), "nodes", {}).values():
        runnable = getattr(spec, "runnable", None)
        for code in (getattr(runnable, "func", None), getattr(runnable, "afunc", None)):
            module = sys.modules.get(getattr(code, "__module__", "") or "")
            file = getattr(module, "__file__", None)
            if file and file.endswith(".py"):
                files.add(Path(file).resolve())
    return sorted(files)


def versions(config, graph: Pregel, graph_file: Path, prompt_files: list[Path]) -> dict[str, Any]:
    """The run's versions: `graph` (spec and files), `prompts` (folder and files), each graph node's `backend`."""
    backends = {name: config.nodes.get(name, "graph's own code") for name in graph.nodes if not name.startswith("__")}
    llm = config.llm
    return {"graph": {"spec": config.graph, "file": str(graph_file.resolve()),
                      "files": _files(graph_files(graph, graph_file)),
                      "drawing": drawing(graph, f"{graph_file.resolve()}:{config.graph.rpartition(':')[2]}")},  # what the viewer draws: it imports no graph code
            "prompts": {"dir": str(Path(config.prompts_dir).resolve()), "files": _files(prompt_files)},
            "backends": backends,
            "llm": {"provider": llm.provider, "model": llm.model, "base_url": llm.base_url}
            if "llm" in backends.values() else None}


def files_hash(files: list[dict[str, str]]) -> str:
    """One hash over every file the graph loads (each file's name and hash), so an edit to any of them shows."""
    return hashlib.sha256("\n".join(sorted(f"{Path(f['path']).name} {f['sha256']}" for f in files)).encode()).hexdigest()


def describe(v: dict[str, Any]) -> str:
    """The lines a run prints when it starts: what graph, prompts and backends it runs."""
    graph = v["graph"]
    files = graph["files"]
    llm = v.get("llm")
    lines = [f"mentor graph: {graph['file']}:{graph['spec'].rpartition(':')[2]}"
             + (f" (sha256 {files_hash(files)[:12]} over its {len(files)} files: "
                f"{', '.join(sorted({Path(f['path']).name for f in files}))})" if files else ""),
             f"mentor prompts: {v['prompts']['dir']} ({len(v['prompts']['files'])} prompt files; read by llm nodes "
             f"only)",
             "mentor nodes: " + ", ".join(f"{n}={b}" for n, b in v["backends"].items())
             + (f" (llm: {llm['provider']} {llm['model']}" + (f" at {llm['base_url']}" if llm["base_url"] else "")
                + ")" if llm else "")]
    return "\n".join(lines)
