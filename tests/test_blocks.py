"""`mentor demo --lab composed --blocks N`: the paired bootstrap, the decision rule, the resample control and a tiny
blocked run end to end (real GRPOTrainer, real worker processes)."""

import json
from dataclasses import replace

import pytest

from mentor.cli import main
from mentor.lab import block_folder, blocks
from mentor.lab.blocks import decide, outcome, paired_bootstrap
from mentor.lab.environment import environment
from mentor.traces import TraceStore


def test_the_bootstrap_resamples_policies_and_weights_their_blocks():
    # Constant differences: no spread, whatever the clusters.
    flat = paired_bootstrap({0: [0.05, 0.05], 1: [0.05], 2: [0.05]})
    assert flat["n"] == 4 and flat["clusters"] == 3
    assert flat["ci"] == pytest.approx([0.05, 0.05]) and flat["mean"] == pytest.approx(0.05)
    # The mean is over blocks, and a resample draws whole policies: ten blocks at 0 and one at 1 give 1/11, and the
    # interval reaches both ends (a resample of policy 1 alone, or of policy 0 alone).
    lop = paired_bootstrap({0: [0.0] * 10, 1: [1.0]}, resamples=4000)
    assert lop["mean"] == pytest.approx(1 / 11) and lop["ci"] == pytest.approx([0.0, 1.0])
    assert lop["ci90"][0] <= lop["mean"] <= lop["ci90"][1] and lop["ci90"][1] <= lop["ci"][1]
    # Six policies whose two blocks agree: the interval is as wide as the policies' spread, not narrowed by the
    # doubled count an independent-blocks bootstrap would assume.
    pairs = {p: [d, d] for p, d in enumerate([-0.1, -0.05, 0.0, 0.05, 0.1, 0.15])}
    singles = {i: [d] for i, d in enumerate(sum(pairs.values(), []))}
    assert paired_bootstrap(pairs)["ci"][1] - paired_bootstrap(pairs)["ci"][0] > \
        1.2 * (paired_bootstrap(singles)["ci"][1] - paired_bootstrap(singles)["ci"][0])
    assert paired_bootstrap(pairs, seed=3) == paired_bootstrap(pairs, seed=3)
    with pytest.raises(ValueError, match="no differences"):
        paired_bootstrap({0: []})


def test_the_decision_rule_is_the_pre_registered_one():
    assert decide({"ci": [0.001, 0.1], "ci90": [0.01, 0.09], "n": 8}) == {"decision": "win"}
    assert decide({"ci": [-0.1, -0.001], "ci90": [-0.09, -0.01], "n": 8}) == {"decision": "loss"}
    assert decide({"ci": [-0.04, 0.035], "ci90": [-0.029, 0.029], "n": 8}) == {"decision": "matches"}
    # 90% CI past the margin: unresolved, and the blocks needed for a 95% CI of +-0.03 grow with its square.
    assert decide({"ci": [-0.09, 0.03], "ci90": [-0.08, 0.02], "n": 8}) == {"decision": "unresolved", "n_needed": 32}
    # A win is a win even inside the margin; 0 on the CI's edge is not.
    assert decide({"ci": [0.001, 0.02], "ci90": [0.002, 0.019], "n": 8})["decision"] == "win"
    assert decide({"ci": [0.0, 0.02], "ci90": [0.001, 0.019], "n": 8})["decision"] == "matches"


def test_the_outcome_is_the_mean_of_the_last_three_evaluations_after_step_0():
    curve = [{"step": s, "heldout_acc": a} for s, a in [(0, 0.9), (25, 0.1), (50, 0.2), (75, 0.3), (100, 0.7)]]
    assert outcome(curve) == pytest.approx(0.4)
    assert outcome(curve[:2]) == pytest.approx(0.1)  # fewer evaluations than three: those there are
    with pytest.raises(ValueError, match="after step 0"):
        outcome(curve[:1])


def test_the_resample_arm_is_the_retry_control_any_task_has():
    from mentor.config import MentorConfig
    from mentor.lab.composed import COMPOSED_STRATEGY
    from mentor.lab.composed_demo import dataset
    from mentor.lab.demo import arm_config

    # The mentor arm's config but for `hint_source: none` (tests/test_success_reward_and_retry.py): the same task,
    # budget and splice, without a hint.
    resample, mentor = (MentorConfig.load(arm_config(arm, COMPOSED_STRATEGY)) for arm in ("resample", "mentor"))
    assert resample.to_dict() == {**mentor.to_dict(), "hint_source": "none"}
    assert "hint_step1" not in dataset(10, 0, None).column_names


def test_the_sdpo_arms_configure_feedback_only():
    from mentor.config import MentorConfig
    from mentor.lab.composed import COMPOSED_STRATEGY
    from mentor.lab.composed_eval import library_config
    from mentor.lab.demo import arm_config
    from mentor.trl.sdpo_hook import check_config

    assert arm_config("sdpo", COMPOSED_STRATEGY) is None  # SDPO alone: no mentor
    rule = {**library_config(2), "hint_placement": "prompt"}
    library, mentor = (MentorConfig.load(arm_config(arm, COMPOSED_STRATEGY, rule)) for arm in ("sdpo_library",
                                                                                              "sdpo_mentor"))
    for config in (library, mentor):
        check_config(config)  # SDPO refuses a config that shapes a re-attempt: these shape none
        assert config.task == "composed"
    assert library.graph.endswith("static_hints/graph.py:graph") and library.columns == {"hint": "hint_step2"}
    assert mentor.graph == MentorConfig().graph  # the four-node mentor, as the GRPO arm's


def test_lab_sdpo_templates_need_an_sdpo_arm_and_keep_issue_42s_blocks_reusable(tmp_path, capsys):
    from pathlib import Path

    from mentor.lab.blocks import BLOCK_DEFAULTS
    from mentor.lab.demo_settings import DemoSettings

    assert main(["demo", "--lab", "composed", "--blocks", "2", "--arms", "grpo,mentor", "--sdpo-templates", "lab",
                 "--out", str(tmp_path)]) == 2
    assert "sdpo_templates: 'lab' changes only the SDPO arms" in capsys.readouterr().err
    # The setting was added after issue 42's run: at its default, the committed blocks keep their key (and are reused).
    settings = replace(DemoSettings.for_lab("composed"), arms=["static_hints", "mentor", "sdpo", "sdpo_library",
                                                               "sdpo_mentor"], **BLOCK_DEFAULTS)
    committed = Path(__file__).parent.parent / "experiments" / "sdpo42" / "blocks" / "p0-g0.json"
    assert blocks.settings_key(settings) == json.loads(committed.read_text())["settings_key"]
    assert blocks.settings_key(replace(settings, sdpo_templates="lab")) != blocks.settings_key(settings)


def test_blocks_need_the_composed_lab_and_at_most_two_workers(tmp_path, capsys):
    assert main(["demo", "--blocks", "2", "--out", str(tmp_path)]) == 2
    assert "--lab composed" in capsys.readouterr().err
    assert main(["demo", "--lab", "composed", "--blocks", "2", "--jobs", "3", "--out", str(tmp_path)]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert main(["demo", "--lab", "composed", "--blocks", "0", "--out", str(tmp_path)]) == 2
    assert main(["demo", "--allow-stale-blocks", "--out", str(tmp_path)]) == 2
    assert "give --blocks too" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


def test_pretrain_seeds_are_ranges_and_lists_and_fix_the_blocks_per_seed(tmp_path, capsys):
    from mentor.lab.demo_cli import parse_seed_list
    from mentor.types import InputError

    assert parse_seed_list("--pretrain-seeds", "100-123") == list(range(100, 124))
    assert parse_seed_list("--pretrain-seeds", "5, 3,9-10") == [5, 3, 9, 10]
    for bad, says in [("100-", "ranges and lists"), ("-3", "ranges and lists"), ("7-5", "5-7"),
                      ("1,2,1", r"repeats \[1\]")]:
        with pytest.raises(InputError, match=says):
            parse_seed_list("--pretrain-seeds", bad)
    # 24 blocks over 24 named policies: one GRPO seed each, unless --grpo-seeds says otherwise and the count disagrees.
    base = ["demo", "--lab", "composed", "--out", str(tmp_path)]
    assert main([*base, "--blocks", "24", "--pretrain-seeds", "100-123", "--grpo-seeds", "2"]) == 2
    assert "--blocks must be 24 x --grpo-seeds (2) = 48" in capsys.readouterr().err
    assert main([*base, "--blocks", "5", "--pretrain-seeds", "100-101"]) == 2
    assert "--blocks must be 2 x" in capsys.readouterr().err
    assert main(["demo", "--pretrain-seeds", "3", "--out", str(tmp_path)]) == 2
    assert "give --blocks too" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


def test_a_block_file_cut_short_is_run_again_with_a_warning_naming_it(tmp_path, capsys):
    settings = tiny_settings()
    path = tmp_path / "blocks" / "p3-g0.json"
    path.parent.mkdir()
    whole = json.dumps({"name": "p3-g0", "settings_key": blocks.settings_key(settings), "outcome": {}})
    path.write_text(whole)
    assert blocks.finished_block(tmp_path, "p3-g0", settings)["name"] == "p3-g0"
    for cut in (whole[:len(whole) // 2], "", "[1, 2]", b"\xff\xfe{"):
        path.write_bytes(cut if isinstance(cut, bytes) else cut.encode())
        assert blocks.finished_block(tmp_path, "p3-g0", settings) is None
        err = capsys.readouterr().err
        assert f"warning: {path} is not a finished block" in err and "running block p3-g0 again" in err


def tiny_settings():
    from mentor.lab.demo import COMPOSED_ARMS, DemoSettings

    tiny = {"steps": 20, "model": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}}
    return replace(DemoSettings.for_lab("composed", quick=True), steps=3, eval_every=1, heldout_problems=20,
                   train_problems=40, pretrain=tiny, arms=list(COMPOSED_ARMS))


def test_the_collapse_rule_keeps_a_collapsed_seed_and_drops_it_above_the_bar(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    info = blocks.prepare_policy(0, replace(tiny_settings(), arms=["grpo"]))
    assert info["collapsed_share"] >= 2 / 3 and info["kept"] and "library" not in info  # 20 steps: all collapse
    monkeypatch.setattr(blocks, "COLLAPSE_MIN", info["collapsed_share"] + 1e-9)
    assert not blocks.prepare_policy(0, replace(tiny_settings(), arms=["grpo"]))["kept"]


@pytest.mark.slow
def test_a_tiny_blocked_run_pairs_every_arm_and_reuses_finished_blocks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the pre-training cache lands here
    settings = tiny_settings()
    results = blocks.run_blocks(tmp_path / "out", settings, 2, grpo_seeds=2, jobs=2)
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {"lab", "steps", "settings", "policy", "policies", "arms", "wall_s", "blocks", "paired"} <= set(written)
    assert [(b["pretrain_seed"], b["grpo_seed"]) for b in written["blocks"]] == [(0, 0), (0, 1)]
    assert set(written["arms"]) == {"grpo", "resample", "static_hints", "mentor", "learning", "two_draws"}
    for name in ("mentor - static_hints", "mentor - resample", "static_hints - resample", "learning - mentor",
                 "learning - static_hints", "learning - resample"):
        stats = written["paired"][name]
        assert stats["n"] == 2 and stats["clusters"] == 1 and len(stats["ci"]) == 2 and "decision" in stats
        a, b = name.split(" - ")
        assert stats["mean"] == pytest.approx(sum(bl["outcome"][a] - bl["outcome"][b] for bl in written["blocks"]) / 2)
    # The control gets the extra attempts the mentor gets: every collapsed group re-drawn (this policy: all of them).
    arms = written["arms"]
    assert arms["resample"]["interventions"] == arms["mentor"]["interventions"] > 0
    # The learning arm mentors the same groups and tries the graph's hint and the lab's one-step rules on each.
    assert arms["learning"]["interventions"] == arms["mentor"]["interventions"]
    store = TraceStore(tmp_path / "out" / "blocks" / "p0-g0" / "learning-seed0", readonly=True)
    tried = [[c["source"] for c in r["candidates"]] for r in store.interventions()]
    assert tried and all(t[0] == "graph" and set(t[1:]) <= {"hint_step1", "hint_step2"} for t in tried)
    assert sum(len(t) for t in tried) > len(tried)  # the graph's hint is one of the rules' only sometimes
    assert arms["resample"]["hint_tokens_per_intervention"] == 0 and arms["grpo"]["interventions"] == 0
    # Within a block the arms share the start: the same held-out accuracy at step 0.
    for block in written["blocks"]:
        runs = [json.loads((tmp_path / "out" / "blocks" / f"{block['name']}.json").read_text())["runs"][a]
                for a in settings.arms]
        assert len({r["heldout_acc_before"] for r in runs}) == 1
    assert (tmp_path / "out" / "report.html").exists() and not (tmp_path / "out" / "results.json.partial").exists()
    assert all(b["code"] == block_folder.code_version() for b in written["blocks"])  # the code that made each block
    here = environment()  # and where: each block from its worker, the run from the parent
    assert written["environment"] == here and all(b["environment"] == here for b in written["blocks"])
    assert here["cpu_capability"] == __import__("torch").backends.cpu.get_cpu_capability()
    # A rerun reuses the finished blocks instead of training them again, and, from a fresh clone (no pre-training
    # cache: another working directory), without pre-training their policy.
    path = tmp_path / "out" / "blocks" / "p0-g0.json"
    mtime = path.stat().st_mtime
    (fresh := tmp_path / "fresh").mkdir()
    monkeypatch.chdir(fresh)
    again = blocks.run_blocks(tmp_path / "out", settings, 2, grpo_seeds=2, jobs=1)
    assert path.stat().st_mtime == mtime and again["paired"] == results["paired"]
    assert not (fresh / ".cache").exists() and again["policies"] == results["policies"]


@pytest.mark.slow
def test_a_run_whose_every_seed_is_dropped_stops_at_the_cap_and_records_them(tmp_path, monkeypatch):
    """The collapse rule set past any policy (from the Python API): the run tries the seed asked for and its
    replacements, the next unused seeds, up to the cap, then fails naming them, with the dropped seeds written."""
    from mentor.types import InputError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(blocks, "COLLAPSE_MIN", 1.01)  # no share of collapsed groups reaches it
    monkeypatch.setattr(blocks, "DROP_CAP_MIN", 1)  # one seed tried, for time (the replacement order: candidate_seeds)
    with pytest.raises(InputError, match=r"dropped 1 pre-training seed\(s\) \(\[7\]\)"):
        blocks.run_blocks(tmp_path / "out", replace(tiny_settings(), arms=["grpo"]), 1, grpo_seeds=1, jobs=1,
                          pretrain_seeds=[7])
    written = json.loads((tmp_path / "out" / "results.json.partial").read_text())
    assert [d["seed"] for d in written["blocks_dropped"]] == [7] and not written["blocks"]
    assert "1.010" in written["collapse_rule"] and not (tmp_path / "out" / "results.json").exists()


def test_the_modules_examples_hold():
    import doctest

    from mentor.evaluation import lookahead, policy_stats
    from mentor.lab import demo_cli

    for module in (blocks, lookahead, demo_cli, policy_stats):
        assert doctest.testmod(module).failed == 0


INTERRUPTED_RUN = """
import sys
from dataclasses import replace
sys.path.insert(0, {tests!r})
from test_blocks import tiny_settings
from mentor.lab.blocks import run_blocks
if __name__ == "__main__":
    try:
        run_blocks("out", replace(tiny_settings(), steps=40, eval_every=20), 6, grpo_seeds=1, jobs=1)
    except KeyboardInterrupt:
        sys.exit(130)
"""


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_blocks_and_their_summary(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, workers included) once a block has finished: its file stays,
    results.json.partial summarises it, and no results.json is written."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from interrupt import default_sigint

    (tmp_path / "run.py").write_text(INTERRUPTED_RUN.format(tests=str(Path(__file__).resolve().parent)))
    proc = subprocess.Popen([sys.executable, "run.py"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 300  # a hang guard
        while not list((tmp_path / "out" / "blocks").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert_interrupted_run_kept_its_finished_blocks(tmp_path / "out", out, of=6)


def assert_interrupted_run_kept_its_finished_blocks(out_dir, printed: str, of: int) -> None:
    """Some but not all of `of` blocks finished: their files stay, results.json.partial summarises them, the run says
    so, and no results.json is written."""
    assert "interrupted:" in printed and "finished block(s) kept" in printed, printed
    finished = sorted(p.stem for p in (out_dir / "blocks").glob("*.json"))
    summary = json.loads((out_dir / "results.json.partial").read_text())
    assert finished and [b["name"] for b in summary["blocks"]] == finished and not summary["complete"]
    assert len(finished) < of and not (out_dir / "results.json").exists()
    assert not (out_dir / block_folder.LOCK_NAME).exists()  # the lock went with the run


@pytest.mark.slow
def test_sigterm_to_the_parent_alone_stops_its_workers_and_keeps_the_finished_blocks(tmp_path):
    """SIGTERM to `mentor demo --blocks`'s own pid (`kill PID`, `timeout`, a scheduler), not to its group, once a block
    has finished: the workers stop with it rather than run on, the finished block is kept as on Ctrl-C, and the exit
    status is 143 (128 + SIGTERM)."""
    import signal
    import subprocess
    import sys
    from contextlib import suppress

    import psutil  # accelerate's dependency, so TRL's

    from interrupt import HANG_GUARD_S, StreamLines

    # 3 one-arm blocks on 2 workers: the third starts only once one has finished, so one is still running at the signal.
    proc = subprocess.Popen([sys.executable, "-m", "mentor.cli", "demo", "--lab", "composed", "--blocks", "3",
                             "--grpo-seeds", "3", "--jobs", "2", "--steps", "3", "--eval-every", "1",
                             "--heldout-problems", "20", "--arms", "grpo", "--out", "out"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[psutil.Process] = []
    try:
        stdout, stderr = StreamLines(proc.stdout), StreamLines(proc.stderr)
        assert stdout.wait_for("(1 done"), stdout.text() + stderr.text()
        workers = [c for c in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(c.cmdline())]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=HANG_GUARD_S)
        left_running = [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    finally:
        for process in (proc, *workers):  # none left behind, whatever the outcome
            with suppress(psutil.NoSuchProcess):
                process.kill()
    out, err = stdout.text(final=True), stderr.text(final=True)
    assert proc.returncode == 143, err[-2000:]
    assert len(workers) == 2 and not left_running, left_running
    assert "mentor: interrupted" in err and "Traceback" not in err, err[-2000:]
    assert_interrupted_run_kept_its_finished_blocks(tmp_path / "out", out, of=3)


# Issue 42's committed run: 12 blocks made before block files recorded their code, and its documented command.
SDPO42 = ["demo", "--lab", "composed", "--blocks", "12", "--arms", "static_hints,mentor,sdpo,sdpo_library,sdpo_mentor",
          "--jobs", "2"]


def committed_blocks(out, code=None):
    """A copy of issue 42's committed block files in `out/blocks` (each stamped with `code` when given); reusing them
    all trains nothing."""
    from pathlib import Path

    (out / "blocks").mkdir(parents=True)
    for path in sorted((Path(__file__).parent.parent / "experiments" / "sdpo42" / "blocks").glob("*.json")):
        block = json.loads(path.read_text())
        if code is not None:
            block["code"] = code
        (out / "blocks" / path.name).write_text(json.dumps(block))
    return {p.name: p.read_bytes() for p in (out / "blocks").glob("*.json")}


def test_blocks_with_no_recorded_code_are_refused_unless_allowed_and_then_reused_with_a_warning(tmp_path, capsys):
    out = tmp_path / "sdpo42"
    before = committed_blocks(out)
    assert main([*SDPO42, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "p0-g0, p0-g1, p1-g0" in err and "p5-g1" in err and "no recorded code version" in err, err
    assert "--allow-stale-blocks" in err and not (out / "results.json").exists()
    # The documented command with the flag: every block reused as it is, with a warning listing them.
    assert main([*SDPO42, "--allow-stale-blocks", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "warning: reusing 12 block(s) made by other code" in captured.err and "p5-g1" in captured.err
    assert captured.out.count(": reused") == 12
    written = json.loads((out / "results.json").read_text())
    assert len(written["blocks"]) == 12 and written["code"] == block_folder.code_version()
    assert {p.name: p.read_bytes() for p in (out / "blocks").glob("*.json")} == before
    assert not (out / block_folder.LOCK_NAME).exists()


def test_a_block_made_by_other_code_is_refused_naming_the_part_and_one_made_by_this_code_reused(tmp_path, capsys):
    out = tmp_path / "out"
    committed_blocks(out, block_folder.code_version())
    assert main([*SDPO42, "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    block = json.loads((out / "blocks" / "p3-g1.json").read_text())
    block["code"]["lab"] = "0" * 16
    (out / "blocks" / "p3-g1.json").write_text(json.dumps(block))
    assert main([*SDPO42, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "1 block file(s)" in err and "p3-g1 (changed: lab)" in err and "p3-g0" not in err, err


def test_a_block_made_in_another_environment_is_reused_with_a_warning_naming_what_differs(tmp_path, capsys):
    out = tmp_path / "out"
    committed_blocks(out, block_folder.code_version())
    for name, made_on in (("p3-g1", {**environment(), "cpu_capability": "AVX2-elsewhere"}),
                          ("p0-g0", environment())):
        block = json.loads((out / "blocks" / f"{name}.json").read_text())
        (out / "blocks" / f"{name}.json").write_text(json.dumps({**block, "environment": made_on}))
    assert main([*SDPO42, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 block(s)" in err and "another environment" in err, err
    assert f"p3-g1 (cpu_capability: AVX2-elsewhere -> {environment()['cpu_capability']})" in err, err
    assert "p0-g0" not in err and "p3-g0" not in err  # the same environment, and none recorded (before the record)


def test_the_code_version_covers_the_sources_that_make_a_block_wherever_they_are_installed(tmp_path):
    import shutil
    from pathlib import Path

    from mentor.shipped import shipped_folder

    # The wheel's layout (graphs and prompts inside the package) hashes as the checkout's does.
    package = tmp_path / "mentor"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(blocks.__file__).parent.parent, package, ignore=skip)
    for name in ("graphs", "prompts"):
        shutil.copytree(shipped_folder(name), package / name, ignore=skip)
    version = block_folder.code_version(package)
    assert version == block_folder.code_version() and set(version) == {"lab", "hook", "core", "graphs", "prompts"}

    def changed(path: str) -> list[str]:  # the parts an edit of `path` changes
        nonlocal version
        (package / path).write_text((package / path).read_text() + "\n# an edit\n")
        before, version = version, block_folder.code_version(package)
        return sorted(part for part in version if version[part] != before[part])

    assert changed("lab/data.py") == ["lab"] and changed("lab/policy/meta.json") == ["lab"]
    assert changed("trl/hook.py") == ["hook"] and changed("tasks/composed.py") == ["core"]
    assert changed("graphs/mentor/nodes.py") == ["graphs"] and changed("prompts/hint_composer.md") == ["prompts"]
    assert changed("cli/__init__.py") == [] and changed("traces/viewer/page.py") == []  # they show results only


def test_a_rerun_with_other_settings_refuses_to_overwrite_the_folders_blocks(tmp_path, capsys):
    out = tmp_path / "out"
    before = committed_blocks(out)
    assert main(["demo", "--lab", "composed", "--blocks", "1", "--grpo-seeds", "1", "--arms", "grpo", "--steps", "1",
                 "--eval-every", "1", "--heldout-problems", "20", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "12 block file(s) in" in err and "other settings" in err and "another --out" in err, err
    assert {p.name: p.read_bytes() for p in (out / "blocks").glob("*.json")} == before


def test_a_second_run_on_one_folder_is_refused_while_the_first_holds_its_lock(tmp_path, capsys, monkeypatch):
    import fcntl

    from mentor.lab import report

    out = tmp_path / "out"
    committed_blocks(out)
    with open(out / ".lock", "a") as held:  # another run's lock
        fcntl.flock(held, fcntl.LOCK_EX)
        assert main([*SDPO42, "--allow-stale-blocks", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"another run is writing to {out}" in err and "wait for it" in err, err
    assert not (out / "results.json").exists()
    # Ctrl-C releases the lock (and removes its file): the next run is not refused.

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "write_report", interrupted)
    with pytest.raises(KeyboardInterrupt):
        blocks.run_blocks(out, blocks_settings(), 12, allow_stale=True)
    assert not (out / ".lock").exists()
    monkeypatch.undo()
    assert main([*SDPO42, "--allow-stale-blocks", "--out", str(out)]) == 0


def blocks_settings():
    """The settings of SDPO42's command."""
    from mentor.lab.blocks import BLOCK_DEFAULTS
    from mentor.lab.demo_settings import DemoSettings

    return replace(DemoSettings.for_lab("composed"), arms=["static_hints", "mentor", "sdpo", "sdpo_library",
                                                           "sdpo_mentor"], **BLOCK_DEFAULTS)
