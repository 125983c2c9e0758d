"""Where the shipped graphs and prompts are: the package's `mentor.graphs` and `mentor.prompts`, which are the
repository's top-level graphs/ and prompts/ folders (installed inside the package, or found there from a checkout)."""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import find_spec
from pathlib import Path

SHIPPED = ("graphs", "prompts")  # the folders the wheel installs as mentor.<name> (pyproject's package-dir)

_PACKAGE = Path(__file__).resolve().parent
# The repository root when the package runs from a checkout (graphs/ beside mentor/, not inside it); None: installed.
CHECKOUT = _PACKAGE.parent if not (_PACKAGE / "graphs").is_dir() and (_PACKAGE.parent / "pyproject.toml").is_file() \
    and (_PACKAGE.parent / "graphs" / "__init__.py").is_file() else None


def shipped_folder(name: str) -> Path:
    """The folder of the shipped `graphs` or `prompts`, wherever the package runs from."""
    return Path(find_spec(f"mentor.{name}").submodule_search_locations[0])


class CheckoutFolders:
    """Finds `mentor.graphs` and `mentor.prompts` in a checkout's top-level folders, where the wheel's package-dir
    finds them, and nothing else of the checkout: `mentor.tests` stays unimportable. First on `sys.meta_path`, so
    the checkout's folders win over those of an install (an editable one of another checkout) that is on the path
    too."""

    def __init__(self, root: Path):
        self.root = str(root)

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != "mentor" or name not in SHIPPED:
            return None
        return PathFinder.find_spec(fullname, [self.root])  # graphs/ a package, prompts/ a namespace


def map_checkout() -> None:
    """From a checkout, maps `mentor.graphs` and `mentor.prompts` to its folders (once); installed, nothing."""
    if CHECKOUT is not None and not any(isinstance(finder, CheckoutFolders) for finder in sys.meta_path):
        sys.meta_path.insert(0, CheckoutFolders(CHECKOUT))
