"""`mentor demo --quick` end to end: three real arms on the committed lab policy, results.json and report.html."""

import json
import re

import pytest

from mentor.cli import main
from mentor.lab.demo import ARMS
from mentor.lab.environment import environment
from mentor.types import InputError


@pytest.mark.slow  # a demo run
def test_quick_demo_writes_results_report_and_traces(tmp_path, capsys):
    assert main(["demo", "--quick", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["steps"] == 20 and set(results["arms"]) == set(ARMS)
    for arm, figures in results["arms"].items():
        assert 0.0 <= figures["heldout_acc_before"] <= 1.0 and 0.0 <= figures["heldout_acc_after"] <= 1.0
        run = figures["runs"][0]
        assert [p["step"] for p in run["curve"]] == [0, 10, 20]
        assert len(run["reward"]) == len(run["collapse_rate_before"]) == 20
        assert len(run["heldout_wrong"]) == round(100 * (1 - figures["heldout_acc_after"]))  # 100 held-out problems
    grpo, mentor = results["arms"]["grpo"], results["arms"]["mentor"]
    # The collapse, shown: plain GRPO almost never earns a reward on the hard level, so it learns nothing.
    collapse = grpo["runs"][0]["collapse_rate_before"]
    assert sum(collapse) / len(collapse) >= 0.9 and grpo["interventions"] == 0
    assert grpo["heldout_acc_after"] <= grpo["heldout_acc_before"] + 0.02
    # The mentor intervened, and lowered the collapse rate inside the step.
    run = mentor["runs"][0]
    assert mentor["interventions"] > 0 and mentor["hint_tokens_per_intervention"] > 0
    assert sum(run["collapse_rate_after"]) < sum(run["collapse_rate_before"])
    report = (tmp_path / "report.html").read_text()
    assert report.count("<polyline") == 4 * len(ARMS) and 'id="results"' in report
    links = re.findall(r'href="([^"]+)"', report)
    assert links and all((tmp_path / link).exists() for link in links)
    assert "held-out accuracy" in capsys.readouterr().out
    # Where it computed: the same seed gives other figures on another CPU's kernels (mentor.lab.environment).
    assert results["environment"] == environment()
    assert f"({environment()['cpu_capability']} kernels), torch {environment()['torch']}" in report


@pytest.mark.slow  # a demo run
def test_demo_runs_arms_in_turn_with_one_job(tmp_path):
    assert main(["demo", "--quick", "--arms", "mentor", "--steps", "4", "--eval-every", "2", "--jobs", "1",
                 "--heldout-problems", "20", "--train-problems", "50", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["settings"]["jobs"] == 1 and list(results["arms"]) == ["mentor"]
    assert results["settings"]["train_problems"] == 50
    run = results["arms"]["mentor"]["runs"][0]
    assert [p["step"] for p in run["curve"]] == [0, 2, 4] and results["arms"]["mentor"]["interventions"] > 0


@pytest.mark.slow  # a demo run
def test_the_settings_strategy_reaches_every_worker_process(tmp_path):
    from mentor.lab.demo import LAB_STRATEGY, DemoSettings, run_demo
    from mentor.traces import TraceStore

    strategy = {**LAB_STRATEGY, "hint_placement": "prompt", "strip_hint": False, "train_prefix": False}
    settings = DemoSettings(steps=3, eval_every=3, heldout_problems=20, train_problems=200, seeds=[0, 1],
                            arms=["mentor"], jobs=2, strategy=strategy)
    run_demo(tmp_path, settings)
    for seed in (0, 1):
        store = TraceStore(tmp_path / f"mentor-seed{seed}", readonly=True)
        assert store.count() > 0 and {r["placement"] for r in store} == {"prompt"}
        store.close()


@pytest.mark.slow  # a demo run
def test_the_static_library_hint_length_is_a_setting(tmp_path, capsys):
    from mentor.traces import TraceStore

    assert main(["demo", "--quick", "--arms", "static_hints", "--static-hint-digits", "2", "--steps", "3",
                 "--eval-every", "3", "--heldout-problems", "20", "--jobs", "1", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "results.json").read_text())["settings"]["static_hint_digits"] == 2
    store = TraceStore(tmp_path / "static_hints-seed0", readonly=True)
    hints = [r["hint"] for r in store if r.get("hint")]
    store.close()
    assert hints and {len(h) for h in hints} == {2}
    assert "first 2 answer digits" in (tmp_path / "report.html").read_text()
    # The whole answer is no hint: refused before anything runs.
    assert main(["demo", "--static-hint-digits", "4", "--out", str(tmp_path / "x")]) == 2
    assert "static_hint_digits must be 1, 2 or 3" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_bad_demo_settings_are_refused_before_anything_runs(tmp_path, capsys):
    from mentor.lab.demo import DemoSettings

    bad = {"--seeds": ("a,1", "--seeds: give comma-separated integers"), "--steps": ("0", "steps must be at least 1"),
           "--jobs": ("-1", "jobs must be at least 0"), "--eval-every": ("0", "eval_every must be at least 1"),
           "--heldout-problems": ("0", "heldout_problems must be at least 1"),
           "--train-problems": ("0", "train_problems must be at least 1"),
           "--arms": ("grpo,mentr", "arms: unknown arm(s) ['mentr']")}
    for flag, (value, message) in bad.items():
        assert main(["demo", flag, value, "--out", str(tmp_path / "out")]) == 2, flag
        assert message in capsys.readouterr().err, flag
    assert not (tmp_path / "out").exists()
    with pytest.raises(InputError, match="learning_rate must be above 0"):
        DemoSettings(learning_rate=0.0)


def test_sigterm_while_the_pool_runs_takes_ctrl_c_s_path_and_the_handler_is_then_restored():
    import signal
    from concurrent.futures import ProcessPoolExecutor

    from mentor.lab.demo_pool import workers_stopped_on_sigterm
    from mentor.types import Terminated

    before = signal.getsignal(signal.SIGTERM)
    with ProcessPoolExecutor(1) as pool:  # no worker starts before a submit
        with pytest.raises(Terminated), workers_stopped_on_sigterm(pool):
            signal.raise_signal(signal.SIGTERM)
    assert issubclass(Terminated, KeyboardInterrupt) and signal.getsignal(signal.SIGTERM) is before


@pytest.mark.slow  # a demo run, interrupted
def test_ctrl_c_starts_none_of_the_runs_queued_behind_the_running_ones(tmp_path):
    """`mentor demo --quick --jobs 2`: three arms, two at a time. Ctrl-C (SIGINT to the group, workers included) while
    the first two run: they stop, and the third, already handed to the pool, never starts (each worker took its own
    Ctrl-C and would otherwise take the next run)."""
    import os
    import signal
    import subprocess
    import sys

    from interrupt import HANG_GUARD_S, default_sigint, wait_until

    proc = subprocess.Popen([sys.executable, "-m", "mentor.cli", "demo", "--quick", "--jobs", "2", "--out", "out"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint)
    out = tmp_path / "out"
    try:
        wait_until(lambda: len(list(out.glob("*-seed0"))) >= 2)  # both first runs started
        started = sorted(p.name for p in out.glob("*-seed0"))
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert len(started) == 2 and sorted(p.name for p in out.glob("*-seed0")) == started, started
    assert not (out / "results.json").exists()
