"""The versions of a dependency that the package declares: pyproject.toml's `dependencies`, the one place they are
written, read from the installed package's metadata (or, run from a checkout, from the checkout's pyproject.toml)."""

from __future__ import annotations

import tomllib
from importlib.metadata import requires

from packaging.requirements import Requirement
from packaging.version import Version

from mentor.shipped import CHECKOUT

DISTRIBUTION = "mentor-rl"


def declared(name: str) -> Requirement:
    """The package's requirement on dependency `name`."""
    if CHECKOUT is not None:
        lines = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["dependencies"]
    else:
        lines = requires(DISTRIBUTION) or []
    for line in lines:
        requirement = Requirement(line)
        if requirement.name == name:
            return requirement
    raise LookupError(f"{DISTRIBUTION} declares no requirement on {name}")


def version_range(name: str) -> tuple[str, str]:
    """[lowest, highest) versions of `name` that the package is tested with (its `>=` and `<` bounds), written in
    full (1.16.0)."""
    bounds = {spec.operator: Version(spec.version) for spec in declared(name).specifier}
    return tuple(f"{v.major}.{v.minor}.{v.micro}" for v in (bounds[">="], bounds["<"]))
