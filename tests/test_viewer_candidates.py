"""The viewer shows the hints `hint_choice: learning` tried (mentor/trl/choice.py), from a real training run's store,
in headless Chromium (the `browser` fixture: conftest.py); a hostile hint stays text."""

import pytest

from mentor.lab.data import make_dataset
from tiny_grpo import make_trainer
from viewer_page import open_record

HOSTILE = "<img src=x onerror=\"window.pwned=1\"> Line the digits up by place."


class HalfReward:
    """Pays every row hinted by the graph, every other row hinted by the column's hint."""

    __name__ = "half_reward"

    def __call__(self, prompts, completions, mentor_hint=None, **kwargs):
        hints = mentor_hint or [""] * len(completions)
        return [0.0 if not h else float(i % 2 == 0) if h == HOSTILE else 1.0 for i, h in enumerate(hints)]


@pytest.mark.slow  # Chromium
def test_the_detail_lists_the_hints_tried_and_marks_the_one_given(tmp_path, browser):
    from mentor import Mentor
    from mentor.traces import TraceStore

    rows = make_dataset("hard", 16, seed=0)
    rows = rows.add_column("alt", [HOSTILE] * len(rows))
    trainer = make_trainer(tmp_path / "run", HalfReward(), dataset=rows)
    Mentor.from_config({"hint_choice": "learning", "hint_candidates": ["alt"]}).attach(trainer)
    trainer.train()
    store = TraceStore(tmp_path / "run", readonly=True)
    record = store.interventions()[0]
    open_record(browser, store, tmp_path / "traces.html", record["id"])
    cells = browser.js("Array.from(document.querySelectorAll('#detail-candidates tbody tr'))"
                       ".map(tr => Array.from(tr.children).map(td => td.textContent))")
    assert [(c[0], c[1], c[2], c[5]) for c in cells] == [("graph", record["candidates"][0]["hint"], "1", ""),
                                                         ("alt", HOSTILE, "0.500", "yes")]
    assert browser.js("document.querySelector('#detail-candidates tr.chosen td').textContent") == "alt"
    assert browser.js("window.pwned === undefined && !document.querySelector('#detail img')")
    assert browser.problems() == []
