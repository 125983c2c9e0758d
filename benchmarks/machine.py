"""The machine a benchmark ran on, for its report: the CPU's name and the load average (the development VM is
shared, so every figure is printed with them; see docs/benchmarks.md). The scripts run as `python benchmarks/X.py`,
which puts this folder on sys.path, so they import it as `machine`."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo; else what `platform` knows; else "unknown CPU"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average() -> tuple[float, float, float]:
    """The 1-, 5- and 15-minute load averages; NaN where the system keeps none."""
    return os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
