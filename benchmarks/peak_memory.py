"""Peak resident memory of a command together with a server already running beside it, sampled every second.

    .venv/bin/python benchmarks/peak_memory.py --beside 'port 8011' -- .venv-vllm/bin/mentor eval ...

Sums the proportional resident memory (Pss, /proc/PID/smaps_rollup: a page shared by n processes counts 1/n in
each, so the sum counts it once) of the command's process tree and of every process whose command line holds
the `--beside` text, with their children (a server and its engine's workers), once a second, and prints the peak of each and of the sum, and the machine's
peak memory in use (MemTotal - MemAvailable, /proc/meminfo), which counts whatever else runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def pss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:  # the process ended meanwhile
        pass
    return 0.0


def in_use_mb() -> float:
    lines = Path("/proc/meminfo").read_text().splitlines()
    info = {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in lines)}
    return (info["MemTotal"] - info["MemAvailable"]) / 1024


def processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command line)."""
    out = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                out[int(proc.name)] = (ppid, (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except (OSError, IndexError, ValueError):
                continue
    return out


def tree(root: int, table: dict[int, tuple[int, str]]) -> set[int]:
    pids, grew = {root}, True
    while grew:
        more = {pid for pid, (ppid, _) in table.items() if ppid in pids} - pids
        pids |= more
        grew = bool(more)
    return pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--beside", required=True, help="text in the command line of the processes running beside")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    run = subprocess.Popen(command)
    me = {run.pid, *tree(run.pid, processes())}
    peak = {"command": 0.0, "beside": 0.0, "sum": 0.0, "machine": 0.0}
    while run.poll() is None:
        table = processes()
        mine = tree(run.pid, table)
        matched = {pid for pid, (_, cmd) in table.items() if args.beside in cmd} - mine - me - {os.getpid()}
        beside = set().union(*(tree(pid, table) for pid in matched))  # with its workers, which rename themselves
        now = {"command": sum(map(pss_mb, mine)), "beside": sum(map(pss_mb, beside)), "machine": in_use_mb()}
        now["sum"] = now["command"] + now["beside"]
        peak = {k: max(peak[k], now[k]) for k in peak}
        time.sleep(1)
    print(f"peak resident memory: command {peak['command'] / 1024:.1f} GiB, beside ('{args.beside}') "
          f"{peak['beside'] / 1024:.1f} GiB, both at once {peak['sum'] / 1024:.1f} GiB (Pss); the machine's memory "
          f"in use {peak['machine'] / 1024:.1f} GiB at its peak", file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
