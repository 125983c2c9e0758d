"""A node call that outlives `timeout_s` (a sync node that sleeps or never returns): the group is cut off, the mentor's
threads stay bounded, `mentor diagnose` exits when its groups are done; and offline each group's deadline starts with
the group, not the run. The graph is tests/stalling_graph.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from failed_groups import ARITHMETIC
from mentor.cli import main
from mentor.runtime import MentorRuntime
from mentor.types import FailedGroup

pytestmark = pytest.mark.slow  # a CLI subprocess per case, waiting out real timeouts

ROOT = Path(__file__).resolve().parent.parent
GRAPH = f"{Path(__file__).resolve().parent / 'stalling_graph.py'}:graph"
HANG_GUARD_S = 60  # far above the few seconds these runs take (a Python start, imports, one timeout)


def rows(*ids: str) -> str:
    return "".join(json.dumps({**ARITHMETIC, "problem_id": pid}) + "\n" for pid in ids)


def python(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=HANG_GUARD_S,
                          env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}", **env})


@pytest.mark.parametrize("stall", ["stuck", "sleep"])  # never returns; sleeps 30 s
def test_diagnose_exits_after_the_timeout_though_a_sync_node_is_stuck(tmp_path, stall):
    (tmp_path / "f.jsonl").write_text(rows(f"{stall}-1", "add-1"))
    (tmp_path / "cfg.yaml").write_text(f"graph: {GRAPH}\ntimeout_s: 1\n")
    done = python(["-m", "mentor.cli", "diagnose", "f.jsonl", "-o", "out.jsonl", "--config", "cfg.yaml"], tmp_path)
    assert done.returncode == 0, done.stderr  # "stuck": before, it waited for ever (HANG_GUARD_S ends that)
    assert "woke" not in done.stderr  # "sleep": before, it waited for the sleeping thread (30 s) before exiting
    stuck, fine = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert stuck["hint"] is None and "timeout: no hint within 1 s of the group's start" in stuck["error"]
    assert "cut off in stall" in stuck["error"]
    assert fine["error"] is None and fine["hint"] == "042"


STUCK_THREADS = """
import json, threading
from failed_groups import ARITHMETIC
from mentor.runtime import MentorRuntime
from mentor.runtime.event_loop import mentor_threads
from mentor.types import FailedGroup

runtime = MentorRuntime({"graph": GRAPH, "timeout_s": 0.5, "max_concurrent_groups": 2})
pool = mentor_threads()
def run(*ids):
    return [[r.problem_id, r.hint, r.error] for r in runtime.run(
        [FailedGroup.from_dict({**ARITHMETIC, "problem_id": i}) for i in ids])]
out = {"bound": pool.max_threads}
out["stuck"] = [r for i in range(pool.max_threads - 1) for r in run(f"stuck-{i}")]  # one a run: each holds a thread
out["one_thread_left"] = run("add-1")
out["last_stuck"] = run("stuck-last")
out["pool_full"] = run("add-2")
out["busy"] = pool.busy
out["mentor_threads"] = sum(t.name.startswith("mentor-worker") for t in threading.enumerate())
print(json.dumps(out))
"""


def test_stuck_calls_hold_at_most_the_bound_of_the_mentors_own_threads_and_never_hold_up_exit(tmp_path):
    # 2 * max_concurrent_groups = 4 daemon threads. Stuck calls hold them for good (Python cannot stop a thread):
    # with one thread left, groups are hinted; with none, a group is cut off at its deadline (the documented limit),
    # never hung. The process then exits at once, its 4 threads still stuck.
    done = python(["-c", f"GRAPH = {GRAPH!r}\n" + STUCK_THREADS], tmp_path)  # HANG_GUARD_S: it exits, stuck threads and all
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["bound"] == 4
    assert all(hint is None and "cut off in stall" in error for _, hint, error in out["stuck"] + out["last_stuck"])
    assert out["one_thread_left"] == [["add-1", "042", None]]
    [[_, hint, error]] = out["pool_full"]
    assert hint is None and error.startswith("timeout: no hint within 0.5 s of the run's start")
    assert out["busy"] == out["mentor_threads"] == 4  # every stuck call holds one; no thread beyond the bound


def test_offline_each_groups_deadline_starts_with_the_group(tmp_path, capsys):
    # One slot, four groups of 0.4 s each, timeout_s 1: the last groups wait longer than 1 s for the slot.
    failures, out, cfg = tmp_path / "f.jsonl", tmp_path / "out.jsonl", tmp_path / "cfg.yaml"
    failures.write_text(rows(*(f"slow-{i}" for i in range(4))))
    cfg.write_text(f"graph: {GRAPH}\ntimeout_s: 1\nmax_concurrent_groups: 1\n")
    assert main(["diagnose", str(failures), "-o", str(out), "--config", str(cfg)]) == 0
    written = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(w["error"], w["hint"]) for w in written] == [(None, "042")] * 4, capsys.readouterr().out
    # Training keeps the run's clock: the whole run, and so the step, is held for at most timeout_s.
    groups = [FailedGroup.from_dict({**ARITHMETIC, "problem_id": f"slow-{i}"}) for i in range(4)]
    in_training = MentorRuntime(str(cfg)).run(groups)
    assert any(r.error and "of the run's start" in r.error for r in in_training)
