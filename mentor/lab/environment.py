"""What besides the code makes a lab run's figures: the packages that compute it and the CPU kernels torch runs.

The same code and seed give other figures on another CPU: torch picks its vectorised kernels by the CPU's instruction
set, and their float rounding differs. On one Intel Xeon, `make demo`'s seed 0 `static_hints` arm ended at 0.948 with
torch's AVX-512 kernels, 0.928 with its AVX2 ones and 0.952 with its scalar ones (`ATEN_CPU_CAPABILITY`; docs/
benchmarks.md). So each block file and results.json record `environment()`, and a cached pre-trained policy is keyed
by `kernels()` too.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("torch", "transformers", "trl", "accelerate", "datasets", "numpy")  # the ones a lab run computes with


def cpu_name() -> str:
    """The CPU's model name (`/proc/cpuinfo`'s first `model name`), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:  # not Linux
        pass
    return platform.processor() or platform.machine()


def kernels() -> dict[str, str]:
    """The CPU and the kernel set torch chose for it (`AVX512`, `AVX2`, `DEFAULT`; `ATEN_CPU_CAPABILITY` overrides)."""
    import torch

    return {"cpu": cpu_name(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def environment() -> dict[str, str]:
    """Python's version, each of `PACKAGES`' versions and `kernels()`: one flat record, compared key by key."""
    return {"python": platform.python_version(), **{name: package_version(name) for name in PACKAGES}, **kernels()}


def differences(made_on: dict[str, str], here: dict[str, str]) -> list[str]:
    """`key: theirs -> ours` for each key whose value differs (a key one side lacks counts as `?` there)."""
    return [f"{key}: {made_on.get(key, '?')} -> {here.get(key, '?')}" for key in sorted({*made_on, *here})
            if made_on.get(key) != here.get(key)]
