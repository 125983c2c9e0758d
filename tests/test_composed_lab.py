"""The composed-skills lab: its data, the one-step hint cap, the mentor's step choice, and its pre-training rows."""

import random
from pathlib import Path

import pytest

from mentor.lab import composed as lab
from mentor.lab.data import generate_problems
from mentor.lab.pretrain import hparams_of, pretrained_policy
from mentor.lab.sampling import completions, evaluate
from mentor.leakage.checker import check_leak
from mentor.runtime import MentorRuntime
from mentor.tasks import get_task
from mentor.tasks.composed import extract_steps, reward, step_hint, steps_of
from mentor.types import Attempt, FailedGroup


def test_problems_are_chains_worked_left_to_right_modulo_10():
    row = lab.make_row([3, 4, 2, 4], ["*", "-", "+"])  # 3*4 = 2, 2-2 = 0, 0+4 = 4 (mod 5)
    assert row["prompt"] == "Q: 3*4-2+4=? A:" and row["answer"] == "204" and row["level"] == "hard"
    assert reward(" 2 0 4", "204") == 1.0 and reward(" 2 0 4\n", "204") == 1.0
    assert reward(" 2 0 3", "204") == 0.0 and reward(" 2 0 4 2", "204") == 0.0 and reward("204", "204") == 0.0
    assert extract_steps(" 1 3") == [1, 3] and extract_steps("x") is None
    easy = generate_problems("easy", 200, seed=3, lab="composed")
    assert {len(r["answer"]) for r in easy} == {2} and len({r["problem_id"] for r in easy}) == 200
    assert generate_problems("hard", 50, seed=1, lab="composed") == generate_problems("hard", 50, seed=1, lab="composed")
    train = {r["problem_id"] for r in generate_problems("hard", 2000, split="train", lab="composed")}
    held = {r["problem_id"] for r in generate_problems("hard", 300, split="heldout", lab="composed")}
    assert not train & held


def test_each_seed_mis_learns_its_own_facts():
    g0, g1 = lab.gaps(0), lab.gaps(1)
    assert len(g0) == len(g1) == 25 and g0 == lab.gaps(0) and g0 != g1
    assert all(wrong != (x * y if op == "*" else x + y if op == "+" else x - y) % 5 and 0 <= wrong < 5
               for (x, op, y), wrong in g0.items())
    assert len(set(g0) & set(g1)) < 18  # about a third in common, by chance
    # A mis-learned fact changes the chain from its step on, and only from there.
    (x, op, y), wrong = next(iter(g0.items()))
    assert steps_of([x, y, 0], [op, "+"], g0) == [wrong, wrong]


def test_no_hint_of_any_arm_reveals_more_than_one_step():
    task = get_task("composed")
    ref = {"answer": "204", "digits": [3, 4, 2, 4], "ops": "*-+"}
    assert not check_leak("2 _ _", ref, task).leaked and not check_leak("_ 0 _", ref, task).leaked
    for hint in ("2 0 _", "_ 0 4", "2 0 4", "_ _ 4", "204", "the answer is 204", "2 _", "_ _ _"):
        assert check_leak(hint, ref, task).leaked, hint
    # Every fixed library rule is a one-step hint that the gate lets through, and never the last step.
    from mentor.lab.composed_eval import LIBRARY_RULES, reference_of
    row = lab.make_row([3, 4, 2, 4], ["*", "-", "+"])
    hints = [reference_of(row)[f"hint_step{k}"] for k in LIBRARY_RULES.values()]
    assert hints == ["2 _ _", "_ 0 _"] and not any(check_leak(h, ref, task).leaked for h in hints)


def group(completions, answer="204"):
    return FailedGroup("chain-3*4-2+4", "composed", "Q: 3*4-2+4=? A:",
                       {"answer": answer, "digits": [3, 4, 2, 4], "ops": "*-+"},
                       [Attempt(c, 0.0) for c in completions])


@pytest.mark.parametrize("attempts, step, hint", [
    ([" 2 3 2", " 2 3 2", " 2 1 0", " 2 4 3"], 2, "_ 0 _"),  # every attempt first goes wrong at step 2
    ([" 4 2 1", " 4 2 1", " 1 4 3", " 4 2 1"], 1, "2 _ _"),  # at step 1
    ([" 2 0 2", " 2 0 2", " 2 0 0", " 2 0 1"], 3, "_ 0 _"),  # at step 3, the answer: the step before it
])
def test_the_mentor_reveals_the_step_every_attempt_gets_wrong(attempts, step, hint):
    runtime = MentorRuntime({"task": "composed", "hint_placement": "prompt"})
    [iv] = runtime.run([group(attempts)])
    assert iv.diagnosis.first_error_step == step and iv.hint == hint and not iv.withheld


def test_pretraining_teaches_reading_hints_on_the_easy_level_only_and_never_a_gap_fact():
    hp = hparams_of("composed", {})
    sample = lab.pretrain_rows(hp, seed=0, rng=random.Random(0))
    prompts, completions, ends, given = sample(3000, 0)
    table = lab.gaps(0)
    assert set(given) == {0} and all(ends)
    hard = [(p, c) for p, c in zip(prompts, completions) if len(c) == 6]
    easy_hinted = [(p, c) for p, c in zip(prompts, completions) if p.startswith("Hint: ") and len(c) == 4]
    assert 0.4 < len(hard) / 3000 < 0.5 and 0.1 < len(easy_hinted) / 3000 < 0.2  # 45%, and 25% of the 55% easy
    copied = 0
    for p, c in hard + easy_hinted:
        expr = p.split("Q: ")[1].split("=")[0]
        digits, ops, steps = [int(ch) for ch in expr[::2]], list(expr[1::2]), [int(ch) for ch in c[1::2]]
        if len(c) == 6:  # a hard row writes exactly what the seed's facts give: a hint line there says nothing new
            assert steps == steps_of(digits, ops, table)
            if p.startswith("Hint: "):
                assert p.split("\n")[0] in {f"Hint: {step_hint(steps, k)}" for k in (1, 2)}
        else:  # an easy hint row: the hinted step takes the hint's digit, and the chain goes on from it
            k = p.split("\n")[0].removeprefix("Hint: ").split(" ").index(next(ch for ch in p[6:9] if ch.isdigit())) + 1
            assert steps[:k - 1] == steps_of(digits[:k], ops[:k - 1], table)
            assert steps[k:] == steps_of([steps[k - 1], *digits[k + 1:]], ops[k:], table)
            copied += steps[k - 1] != steps_of(digits, ops, table)[k - 1]
    assert copied > len(easy_hinted) / 2  # mostly a digit the policy would not have written: it must read it
    # No row ever pairs a gap fact with its true value.
    for p, c in zip(prompts, completions):
        expr = p.split("Q: ")[1].split("=")[0]
        digits, ops, steps = [int(ch) for ch in expr[::2]], list(expr[1::2]), [int(ch) for ch in c[1::2]]
        prev = digits[0]
        for op, d, value in zip(ops, digits[1:], steps):
            assert (prev, op, d) not in table or value == table[prev, op, d] or p.startswith("Hint: ")
            prev = value


def test_quick_composed_demo_pretrains_the_seed_picks_its_library_and_writes_results(tmp_path, monkeypatch):
    """The demo's composed path end to end, at tiny sizes: a seed's policy is pre-trained on first use into the cache
    (here a 20-step, 1-layer one), its library rule measured, three real GRPO arms, results.json and report.html."""
    import json

    from mentor.lab.demo import ARMS, DemoSettings, run_demo

    monkeypatch.chdir(tmp_path)  # the cache, .cache/mentor-lab, lands here
    settings = DemoSettings.for_lab("composed", quick=True)
    assert settings.lab == "composed" and settings.strategy["hint_placement"] == "prompt"
    tiny = {"steps": 20, "model": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}}
    from dataclasses import replace
    settings = replace(settings, steps=2, eval_every=2, heldout_problems=20, train_problems=40, jobs=1, pretrain=tiny)
    results = run_demo(tmp_path / "out", settings)
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["lab"] == "composed" and set(written["arms"]) == set(ARMS)
    [cached] = list((tmp_path / ".cache" / "mentor-lab").glob("composed-*"))
    assert written["policy"] == str(Path(".cache/mentor-lab") / cached.name)
    for arm in ARMS:
        figures = written["arms"][arm]
        assert 0.0 <= figures["heldout_acc_after"] <= 1.0 and [p["step"] for p in figures["runs"][0]["curve"]] == [0, 2]
    library = written["arms"]["static_hints"]["runs"][0]["library"]
    assert library["step"] in (1, 2) and (library["groups"] == 0 or set(library["rescue_rates"]) == {"step1", "step2"})
    # Hint dependence with the same one-step hints for every arm, beside each arm's own (the library's step, else 1).
    for arm in ARMS:
        run = written["arms"][arm]["runs"][0]
        own = library["step"] if arm == "static_hints" else 1
        assert set(run["hint_dependence_by_step"]) == {"1", "2"}
        assert run["hint_dependence_by_step"][str(own)] == run["hint_dependence"]
    assert results["arms"]["grpo"]["interventions"] == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "composed lab" in page and 'id="results"' in page
    # The SDPO arms (TRL's SDPOTrainer, no re-attempt): the mentor's and the library's hints reach the teacher's
    # prompt as feedback; SDPO alone has no mentor. In the lab's templates the teacher reads the hint line a GRPO
    # re-attempt reads.
    from mentor.lab.demo_settings import SDPO_ARMS
    from mentor.tasks.composed import hint_prompt
    from mentor.traces import TraceStore

    sdpo = run_demo(tmp_path / "sdpo", replace(settings, arms=list(SDPO_ARMS), sdpo_templates="lab"))["arms"]
    assert sdpo["sdpo"]["interventions"] == 0 and sdpo["sdpo_mentor"]["interventions"] > 0
    assert sdpo["sdpo_library"]["runs"][0]["library"]["step"] == library["step"]
    for arm in ("sdpo_library", "sdpo_mentor"):
        hinted = [r for r in TraceStore(tmp_path / "sdpo" / f"{arm}-seed0", readonly=True) if r["hint"]]
        assert hinted and not any(r.get("reattempt") for r in hinted)
        assert all(r["teacher_prompt"] == hint_prompt(r["prompt"], r["hint"]) for r in hinted)
    # A second run of the same seed loads the cached policy instead of pre-training again.
    mtime = (cached / "meta.json").stat().st_mtime
    run_demo(tmp_path / "out2", replace(settings, arms=["grpo"]))
    assert (cached / "meta.json").stat().st_mtime == mtime


def test_round_6s_arms_train_memory_with_the_candidates_and_mentor_iw_with_weights(tmp_path, monkeypatch):
    """The arms round 6 added, end to end at tiny sizes: `memory` trains on the candidate columns `learning` reads
    (its first start failed at attach without them) and logs its memory figures; `mentor_iw` weights its stripped
    rows."""
    from dataclasses import replace

    from mentor.lab.composed_demo import CANDIDATE_COLUMNS
    from mentor.lab.demo import DemoSettings, run_demo
    from mentor.traces import TraceStore

    monkeypatch.chdir(tmp_path)
    tiny = {"steps": 20, "model": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}}
    settings = replace(DemoSettings.for_lab("composed", quick=True), steps=3, eval_every=3, heldout_problems=20,
                       train_problems=40, jobs=1, pretrain=tiny, arms=["memory", "mentor_iw"])
    arms = run_demo(tmp_path / "out", settings)["arms"]
    assert arms["memory"]["interventions"] > 0 and arms["mentor_iw"]["interventions"] > 0
    memory = TraceStore(tmp_path / "out" / "memory-seed0", readonly=True)
    sources = {c["source"] for r in memory for c in r.get("candidates") or []}
    assert sources & set(CANDIDATE_COLUMNS)  # a column equal to the graph's hint is no other candidate
    assert all("mentor/graph_runs_saved" in s for s in memory.steps())
    weighted = TraceStore(tmp_path / "out" / "mentor_iw-seed0", readonly=True).steps()
    assert all("mentor/off_policy_rows" in s for s in weighted) and sum(s["mentor/off_policy_rows"] for s in weighted)


def test_the_committed_policy_collapses_on_the_hard_level_and_a_one_step_hint_rescues():
    """Seed 0's policy (committed): the easy level done with its own facts, most hard groups collapsed, and each fixed
    one-step hint rescuing more groups than a fresh draw (docs/lab.md's headroom table, at 100 problems)."""
    from mentor.lab.composed_eval import composed_failure_rows, rescue_table
    from mentor.models.checkpoint import load_checkpoint

    path = pretrained_policy(seed=0, lab="composed")
    assert path == str(lab.COMMITTED_POLICY)
    model, tok = load_checkpoint(path)
    easy = generate_problems("easy", 100, seed=1, split="all", lab="composed")
    outs = completions(model, tok, easy, lab="composed")
    table = lab.gaps(0)
    own = [extract_steps(o[0]) == steps_of(r["digits"], list(r["ops"]), table) for o, r in zip(outs, easy)]
    assert sum(own) >= 95  # the easy level, as pre-trained: its gaps' wrong values included
    problems = generate_problems("hard", 100, seed=0, split="heldout", lab="composed")
    rows = composed_failure_rows(path, problems)
    assert len(rows) >= 50  # collapsed: no attempt of 8 at T=1 right (72% at 300 problems)
    assert evaluate(model, tok, problems, lab="composed") <= 0.3
    report = rescue_table(path, rows, sample_seed=0)
    rates = {name: row["rescue_rate"] for name, row in report["configs"].items()}
    assert rates["step1"] > rates["none"] + 0.1 and rates["mentor"] > rates["none"] + 0.1
    assert report["oracle"]["rescue_rate"] > max(rates["step1"], rates["step2"])
