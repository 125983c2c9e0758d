"""`python -m mentor.evaluation.pooled`: `mentor eval` reports of several seeds pooled, a problem one cluster."""

import json

import pytest

from mentor.evaluation.pooled import main, parse_comparison, pool
from mentor.types import InputError


def report(ids, **rows):
    return {"configs": {n: {"group_rescued": f, "rescue_rate": sum(f) / len(f)} for n, f in rows.items()},
            "problem_ids": ids}


def test_rows_pool_every_group_and_a_comparison_clusters_by_problem():
    a = report(["p1", "p2", "p3"], none=[False, False, True], mentor=[True, False, True])
    b = report(["p1", "p4"], none=[False, False], mentor=[True, True])
    out = pool([a, b], [("mentor", "none")], resamples=2000)
    assert out["rows"]["mentor"]["groups"] == 5 and out["rows"]["mentor"]["rescued"] == 4
    assert out["rows"]["none"]["per_report"] == [pytest.approx(1 / 3), 0.0]
    assert (out["oracle"]["groups"], out["oracle"]["rescued"]) == (5, 4)  # any row: p2 is the only group lost
    c = out["comparisons"]["mentor - none"]
    assert c["mean"] == pytest.approx(3 / 5) and (c["n"], c["clusters"]) == (5, 4)  # p1 twice is one cluster
    assert (c["gained"], c["lost"]) == (3, 0) and c["per_report"] == [pytest.approx(1 / 3), 1.0]
    assert c["ci"][0] <= c["mean"] <= c["ci"][1] and c["decision"] in {"win", "unresolved"}


def test_equal_rows_match_and_opposite_rows_lose():
    ids = [f"p{i}" for i in range(200)]
    same = report(ids, none=[i % 2 == 0 for i in range(200)], mentor=[i % 2 == 0 for i in range(200)])
    assert pool([same], [("mentor", "none")])["comparisons"]["mentor - none"]["decision"] == "matches"
    worse = report(ids, none=[True] * 200, mentor=[i % 3 == 0 for i in range(200)])
    assert pool([worse], [("mentor", "none")])["comparisons"]["mentor - none"]["decision"] == "loss"


def test_bad_inputs_name_the_fix(tmp_path):
    with pytest.raises(InputError, match="ROW-ROW"):
        parse_comparison("mentor")
    with pytest.raises(InputError, match="no row 'feedback'"):
        pool([report(["p"], none=[True], mentor=[False])], [("mentor", "feedback")])
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"configs": {"none": {"rescue_rate": 0.0}}}))
    assert main([str(old), "--compare", "mentor-none"]) == 2
    short = tmp_path / "short.json"
    short.write_text(json.dumps(report(["p1", "p2"], none=[True])))
    with pytest.raises(SystemExit):
        main([str(short)])  # --compare is required


def test_the_command_prints_and_writes_the_pooled_figures(tmp_path, capsys):
    files = []
    for seed in range(2):
        f = tmp_path / f"eval_{seed}.json"
        f.write_text(json.dumps(report(["p1", "p2", "p3"], none=[False] * 3, mentor=[True, seed == 0, False])))
        files.append(str(f))
    assert main([*files, "--compare", "mentor - none", "-o", str(tmp_path / "pooled.json")]) == 0
    printed = capsys.readouterr().out
    assert "2 reports pooled" in printed and "mentor - none" in printed and "3 problems" in printed
    assert "oracle          3/6" in printed
    written = json.loads((tmp_path / "pooled.json").read_text())
    assert written["comparisons"]["mentor - none"]["mean"] == pytest.approx(3 / 6)


def test_holm_decides_by_the_sign_flip_over_problems_adjusted_over_the_comparisons_given(tmp_path, capsys):
    """Six problems gained and one tied: a sign-flip p of 2·2/2^7 (exact at 7 clusters). Alone that is a win; beside a
    second comparison of p 1 Holm doubles it past 0.05, so the bootstrap's win becomes unresolved."""
    ids = [f"p{i}" for i in range(7)]
    seed_a = report(ids, none=[False] * 7, mentor=[True] * 6 + [False], same=[False] * 7)
    alone = pool([seed_a], [("mentor", "none")], holm_test=True)["comparisons"]["mentor - none"]
    assert (alone["sign_flip_p"], alone["holm_p"]) == (pytest.approx(4 / 128), pytest.approx(4 / 128))
    assert (alone["decision"], alone["bootstrap_decision"]) == ("win", "win")
    both = pool([seed_a], [("mentor", "none"), ("same", "none")], holm_test=True)["comparisons"]
    assert both["mentor - none"]["holm_p"] == pytest.approx(8 / 128) and both["same - none"]["holm_p"] == 1.0
    assert (both["mentor - none"]["decision"], both["mentor - none"]["bootstrap_decision"]) == ("unresolved", "win")
    assert both["mentor - none"]["n_needed"] > 7
    reverse = pool([seed_a], [("none", "mentor")], holm_test=True)["comparisons"]["none - mentor"]
    assert reverse["decision"] == "loss"
    # A problem gained under one seed and lost under another is one cluster summing to 0: it no longer counts.
    seed_b = report(["p0"], none=[True], mentor=[False], same=[True])
    pooled = pool([seed_a, seed_b], [("mentor", "none")], holm_test=True)["comparisons"]["mentor - none"]
    assert pooled["sign_flip_p"] == pytest.approx(2 * 4 / 128)  # 5 problems at +1 of 7: 2·2²/2^7

    f = tmp_path / "eval.json"
    f.write_text(json.dumps(seed_a))
    assert main([str(f), "--compare", "mentor-none", "--compare", "same-none", "--holm",
                 "-o", str(tmp_path / "pooled.json")]) == 0
    assert "sign-flip p 0.0312, Holm 0.0625; bootstrap win" in capsys.readouterr().out
    written = json.loads((tmp_path / "pooled.json").read_text())
    assert written["holm"] is True and written["comparisons"]["mentor - none"]["decision"] == "unresolved"
    assert "holm_p" not in pool([seed_a], [("mentor", "none")])["comparisons"]["mentor - none"]
