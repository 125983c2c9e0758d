"""Where the shipped graphs and prompts are: the package's `mentor.graphs` and `mentor.prompts`, which are the
repository's top-level graphs/ and prompts/ folders (installed inside the package, or found there from a checkout)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path


def shipped_folder(name: str) -> Path:
    """The folder of the shipped `graphs` or `prompts`, wherever the package runs from."""
    return Path(find_spec(f"mentor.{name}").submodule_search_locations[0])
