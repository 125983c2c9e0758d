"""The retry control (`hint_source: none`) shown as a control, from a real GRPOTrainer run (tests/tiny_grpo.py): the
attach line names it and no graph, its metrics hold re-draws and no tier or error class, and the viewer, in headless
Chromium (the `browser` fixture: conftest.py), shows re-draws apart from hints."""

import contextlib
import io

import pytest

from mentor import Mentor
from mentor.summary import summarise
from mentor.traces import TraceStore
from mentor.types import Intervention
from tiny_grpo import G, RecordingReward, make_trainer
from viewer_page import cards, list_row, open_record

RETRY_LINE = "retry control: collapsed groups re-drawn unhinted; no graph runs"


class RedrawReward(RecordingReward):
    """Pays every other row of the batches after the first: the re-draws of the collapsed groups."""

    def __call__(self, prompts, completions, answer, mentor_hint=None, **kwargs):
        super().__call__(prompts, completions, answer, mentor_hint, **kwargs)
        return [1.0 if len(self.calls) > 1 and i % 2 == 0 else 0.0 for i in range(len(completions))]


@pytest.fixture(scope="module")
def redraw_run(tmp_path_factory):
    """One training step under `hint_source: none`: (its run folder, what attach printed, its step's log)."""
    run = tmp_path_factory.mktemp("retry") / "run"
    trainer = make_trainer(run, RedrawReward())
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        Mentor.from_config({"hint_source": "none"}).attach(trainer)
    trainer.train()
    return run, printed.getvalue(), trainer.state.log_history[0]


def test_the_retry_control_says_so_at_attach_and_logs_re_draws_not_tiers_or_classes(redraw_run):
    run, printed, log = redraw_run
    assert RETRY_LINE in printed and "hint_source=none" in printed
    assert not any(word in printed for word in ("mentor graph:", "mentor prompts:", "mentor nodes:"))  # none runs
    assert log["mentor/redrawn"] == 2 and log["mentor/interventions"] == 2 and log["mentor/recovered"] == 1.0
    assert "mentor/tier_mean" not in log and not [k for k in log if k.startswith("mentor/error_class/")]
    assert "mentor/collapse_rate_after" in log and "mentor/withheld" in log  # the other metrics stay
    interventions = [Intervention.from_dict(r) for r in TraceStore(run, readonly=True)]
    counts = summarise(interventions)
    assert all(iv.redraw for iv in interventions) and counts.redrawn == 2
    assert counts.hinted == 0 and not counts.tiers and not counts.classes and counts.groups == 2


def test_the_viewer_shows_a_re_draw_with_no_tier_verdict_or_class(tmp_path, redraw_run, browser):
    store = TraceStore(redraw_run[0], readonly=True)
    record = store.interventions()[0]
    open_record(browser, store, tmp_path / "traces.html", record["id"])
    shown = cards(browser)
    assert shown["re-draws"] == "2" and shown["hints given"] == "0" and shown["interventions"] == "2"
    detail = browser.js("document.getElementById('detail').textContent")
    assert "re-draw (no hint)" in detail and f"Re-draw without a hint ({G})" in detail
    assert not any(word in detail.lower() for word in ("tier", "leakage checker", "error class", "diagnosis"))
    assert browser.js("document.querySelectorAll('[data-plot=tiers] .mark').length") == 0  # no tier 0 bar
    assert browser.js("document.querySelectorAll('[data-plot=recovery] .mark').length") == 0  # no `unknown` class
    assert list_row(browser, record["id"])[4:7] == ["-", "-", "re-draw (no hint)"]  # class, tier, hint
    assert browser.problems() == []
