"""The compiled graph a `path.py:variable` spec names: its file found, imported as part of its folder, and built."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Callable

from langgraph.pregel import Pregel

from mentor.config import MentorConfig
from mentor.runtime.graph_files import import_file, warn_foreign_nodes
from mentor.shipped import shipped_folder
from mentor.types import InputError


def load_graph(spec: str, config: MentorConfig | None = None):
    """The graph named by `path.py:variable` (the langgraph.json convention).

    The variable is a compiled graph, or a function returning one, given the MentorConfig if it takes an argument
    (`build_graph(config)`). A relative path is found in the working directory, else among the shipped graphs
    (`graphs/static_hints/graph.py:graph`); a config file's own relative `graph:` was already made absolute against
    its folder (`MentorConfig.load`). The file is imported as part of its folder (mentor.runtime.graph_files), so it
    imports that folder's files, not another copy's; the folder above its package folders goes on sys.path too,
    for absolute imports of its own package.
    """
    path = resolve_graph_path(spec)
    name = spec.rpartition(":")[2] if ":" in spec else ""
    if not path.is_file() or not name:
        raise InputError(f"graph '{spec}': expected 'path/to/file.py:variable' with an existing file")
    root = path.resolve().parent
    while (root / "__init__.py").exists():
        root = root.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = import_file(path)
    except Exception as e:  # the file's own fault; the chained traceback shows where
        raise InputError(f"graph '{spec}': importing '{path}' raised {type(e).__name__}: {e}. Fix the file") from e
    warn_foreign_nodes(module, path)
    if not hasattr(module, name):
        raise InputError(f"graph '{spec}': '{path}' has no variable '{name}'")
    obj = getattr(module, name)
    if not isinstance(obj, Pregel) and callable(obj):
        given = _takes_an_argument(obj)
        call = f"{name}(config)" if given else f"{name}()"
        try:
            obj = obj(config) if given else obj()
        except Exception as e:
            raise InputError(f"graph '{spec}': {call} raised {type(e).__name__}: {e}") from e
        name = call
    if not isinstance(obj, Pregel):  # else every group would fail later, on `astream`
        raise InputError(f"graph '{spec}': {name} is {str(obj)[:80]!r} ({type(obj).__name__}), not a compiled "
                         f"LangGraph graph; point it at a `builder.compile()` result or a function returning one")
    return obj


def _takes_an_argument(builder: Callable) -> bool:
    """Whether a graph builder takes the MentorConfig (`build_graph(config)`) rather than nothing (the shipped
    graphs' `build_graph()`, whose graph reads its settings from each run's context)."""
    try:
        return bool(inspect.signature(builder).parameters)
    except (TypeError, ValueError):  # no signature to read (a builtin): give it the config, as before
        return True


def resolve_graph_path(spec: str) -> Path:
    """The file of a `path.py:variable` spec: as given if absolute or found from the working directory, else the
    shipped graph of that relative name."""
    path = Path(spec.rpartition(":")[0] if ":" in spec else spec)
    if not path.is_absolute() and not path.exists():  # a shipped graph, spelt as in langgraph.json
        path = shipped_folder("graphs").parent / path
    return path
