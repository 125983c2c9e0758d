"""Issue 56 item 5: `mentor eval` scores like the run. A run keeps how it generated and scored with its traces;
`mentor eval RUN` samples with its completion length and temperature and scores with its own reward functions
(`success_reward` deciding a rescue), or with `--reward` / `--success-reward`; each reward's part is reported."""

import json

from mentor import Mentor
from mentor.cli import main
from mentor.lab.data import make_dataset
from mentor.rewards import arithmetic_reward
from tiny_grpo import make_trainer
from viewer_page import open_record


def half_for_anything(completions, **kwargs):
    """A format reward that pays every completion 0.5: a total of 0.5 that is no success."""
    return [0.5] * len(completions)


def trained_run(tmp_path):
    trainer = make_trainer(tmp_path / "run", [arithmetic_reward, half_for_anything],
                           dataset=make_dataset("hard", 8, seed=0), temperature=0.9,
                           chat_template_kwargs={"style": "terse"})
    Mentor.from_config({"success_reward": "arithmetic_reward"}).attach(trainer)
    trainer.train()
    return tmp_path / "run"


def evaluate(tmp_path, run, *flags):
    out = tmp_path / "report.json"
    code = main(["eval", str(run), "--policy", "lab", "--samples", "2", "--threads", "1", "-o", str(out), *flags])
    return code, json.loads(out.read_text()) if code == 0 else None


def test_eval_of_a_run_samples_and_scores_as_the_run_did(tmp_path, capsys):
    run = trained_run(tmp_path)
    capsys.readouterr()
    code, report = evaluate(tmp_path, run)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "scoring: arithmetic_reward x1, half_for_anything x1 (the run's rewards; success by arithmetic_reward" in err
    assert (report["max_new_tokens"], report["temperature"]) == (6, 0.9)  # the run's, not eval's defaults
    assert report["chat_template_kwargs"] == {"style": "terse"} and "chat_template_kwargs {'style': 'terse'}" in err
    for row in report["configs"].values():
        parts = row["reward_parts"]
        assert parts["half_for_anything"] == 0.5 and 0.0 <= parts["arithmetic_reward"] <= 1.0
        assert abs(row["mean_reward"] - parts["half_for_anything"] - parts["arithmetic_reward"]) < 1e-9
    # A rescue is a success by arithmetic_reward, not a total above 0 (every total is at least 0.5): the lab policy
    # rescues few of its hard groups, where a total would call every group rescued (the next test).
    assert report["configs"]["none"]["rescue_rate"] < 1.0


def test_reward_flags_override_the_run_and_bad_ones_are_refused(tmp_path, capsys):
    run = trained_run(tmp_path)
    code, report = evaluate(tmp_path, run, "--reward", f"{__name__}:half_for_anything")
    assert code == 0 and all(row["rescue_rate"] == 1.0 for row in report["configs"].values())  # 0.5 > 0: success
    assert report["scoring"].startswith("scoring: half_for_anything x1 (--reward")
    code, report = evaluate(tmp_path, run, "--temperature", "0.5", "--max-new-tokens", "4")
    assert code == 0 and (report["temperature"], report["max_new_tokens"]) == (0.5, 4)
    capsys.readouterr()
    assert evaluate(tmp_path, run, "--temperature", "0")[0] == 2  # greedy: 2 samples would be one
    assert "--temperature 0 is greedy" in capsys.readouterr().err
    assert evaluate(tmp_path, run, "--reward", "no_such_module:f")[0] == 2
    assert "--reward 'no_such_module:f': cannot import it" in capsys.readouterr().err
    assert evaluate(tmp_path, run, "--success-reward", "accuracy_reward")[0] == 2
    assert "--success-reward ['accuracy_reward']: not among the rewards" in capsys.readouterr().err


def test_a_record_keeps_each_reward_functions_part_and_the_viewer_shows_them(tmp_path, browser):
    from mentor.traces import TraceStore

    run = trained_run(tmp_path)
    store = TraceStore(run, readonly=True)
    record = next(iter(store))
    assert all(a["rewards"]["half_for_anything"] == 0.5 and a["rewards"]["arithmetic_reward"] == 0.0
               and a["reward"] == 0.5 for a in record["attempts"])  # collapsed: no attempt was right
    assert all(set(a["rewards"]) == {"arithmetic_reward", "half_for_anything"} for a in record["reattempt"])
    open_record(browser, store, tmp_path / "traces.html", record["id"])
    header = browser.js("Array.from(document.querySelectorAll('#detail .attempts th')).map(th => th.textContent)")
    assert header == ["#", "completion", "reward", "arithmetic_reward", "half_for_anything"]
    cells = browser.js("Array.from(document.querySelectorAll('#detail .attempts tbody tr:first-child td'))"
                       ".map(td => td.textContent)")
    assert cells[2:] == ["0.500", "0", "0.500"]
    assert browser.problems() == []


def test_the_policy_renders_prompts_with_the_runs_chat_template_kwargs():
    from mentor.evaluation.policy import load_policy

    policy = load_policy("lab")
    policy.tokenizer.chat_template = "{{ style }}: {{ messages[0]['content'] }}"
    messages = [{"role": "user", "content": "Q: 1+1=? A:"}]
    assert policy.render(messages) == ": Q: 1+1=? A:"
    policy.chat_template_kwargs = {"style": "terse"}
    assert policy.render(messages) == "terse: Q: 1+1=? A:"
