"""A graph's files, imported by path: each folder of graph files becomes a package named after its own path, so an
edited copy of `graphs/` imports its own `nodes.py`, and two copies (the shipped graph and yours, in `mentor eval`)
load side by side in one process."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType

from mentor.shipped import shipped_folder


def folder_package(folder: Path) -> str:
    """The module name of `folder` as a package, unique to its resolved path; imported on the first call.

    Its `__init__.py` runs if it has one, and `from .nodes import x` works in its files."""
    folder = folder.resolve()
    name = "mentor_graph_" + hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    if name not in sys.modules:
        init = folder / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
        else:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            if init.is_file():
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return name


def import_file(path: Path) -> ModuleType:
    """The module of the graph file `path`, imported as part of its folder's package (see `folder_package`)."""
    return importlib.import_module(f"{folder_package(path.parent)}.{path.stem}")


def sibling(anchor: str, name: str) -> ModuleType:
    """Module `name` from the folder of the file `anchor` (a graph file passes its `__file__`).

    The shipped graphs import each other this way, so a copy imports its own files whichever way it is loaded:
    by `graph:` (`mentor.runtime.load_graph`), by file path (`langgraph dev`) or as a package module."""
    return import_file(Path(anchor).parent / f"{name}.py")


def warn_foreign_nodes(module: ModuleType, path: Path) -> None:
    """Warns when the graph file `path` wires nodes from the installed package's `nodes.py` while its own folder has
    a `nodes.py`: an edit to the copy's nodes would change nothing."""
    own = path.parent / "nodes.py"
    shipped = shipped_folder("graphs").resolve()
    if not own.is_file() or shipped in path.resolve().parents:
        return
    for value in vars(module).values():
        source = value if isinstance(value, ModuleType) else sys.modules.get(getattr(value, "__module__", "") or "")
        file = Path(getattr(source, "__file__", "") or "")
        if file.name == "nodes.py" and file.is_file() and file.resolve() != own.resolve() \
                and shipped in file.resolve().parents:
            warnings.warn(f"graph file {path} runs the nodes of {file.resolve()} (the installed package), not "
                          f"{own.resolve()} beside it, so edits to that file change nothing. Import them with "
                          f"`from mentor.runtime.graph_files import sibling` and `nodes = sibling(__file__, "
                          f"\"nodes\")`, as the files `mentor graph copy` writes do", UserWarning, stacklevel=3)
            return
