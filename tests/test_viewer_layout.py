"""The viewer's summary and browse layout in headless Chromium at 1,400 px (tests/chromium.py's window): a run where
the mentor rescued nothing (collapse 100% before and after, 0% recovery) with long problem ids and a detail open; and a
crowded list (a long error class, every outcome badge) whose outcome column stays in view."""

from __future__ import annotations

import pytest

from chromium import started_chromium
from failed_groups import ARITHMETIC


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    from mentor.runtime import MentorRuntime
    from mentor.traces import TraceStore
    from mentor.traces.viewer import write_html
    from mentor.types import FailedGroup

    run = tmp_path_factory.mktemp("nothing_rescued")
    store = TraceStore(run)
    runtime = MentorRuntime(None)
    for step in range(3):
        groups = [FailedGroup.from_dict({**ARITHMETIC, "problem_id": f"gsm8k-a-very-long-problem-identifier-{step}-{g}"})
                  for g in range(3)]
        records = [{**iv.to_dict(), "step": step, "group": g, "round": 1, "prompt": group.prompt,
                    "attempts": [{"completion": a.completion * 30, "reward": 0.0} for a in group.attempts],
                    "reattempt": [{"completion": "The answer is 0415 " * 20, "reward": 0.0}] * 4, "recovered": False}
                   for g, (group, iv) in enumerate(zip(groups, runtime.run(groups)))]
        store.append(step, records, {"mentor/collapse_rate_before": 1.0, "mentor/collapse_rate_after": 1.0})
    store.close()
    path, _ = write_html(run)
    return path.as_uri()


@pytest.fixture(scope="module")
def browser(page):
    browser = started_chromium()
    browser.navigate(page)
    browser.wait_for("window.mentorReady")
    yield browser
    browser.close()


def test_before_and_after_at_the_same_value_both_show(browser):
    # 'before' is drawn under 'after', wider and with larger marks, so at the same value its band stays visible.
    widths = browser.js("Array.from(document.querySelectorAll('[data-plot=collapse] path.line'))"
                        ".map(p => [p.getAttribute('class'), parseFloat(getComputedStyle(p).strokeWidth)])")
    before = [w for cls, w in widths if "s1" in cls]
    after = [w for cls, w in widths if "s0" in cls]
    assert before and after and min(before) > max(after) + 2
    radii = browser.js("['s1', 's0'].map(c => Array.from(document.querySelectorAll("
                       "'[data-plot=collapse] circle.' + c)).map(e => +e.getAttribute('r')))")
    assert len(radii[0]) == len(radii[1]) == 3 and min(radii[0]) > max(radii[1])


def test_a_zero_recovery_rate_is_drawn_as_a_measured_zero(browser):
    notes = browser.js("Array.from(document.querySelectorAll('[data-plot=recovery] svg text.note')).map(t => t.textContent)")
    assert notes == ["0% of 9"]
    stub = browser.js("(() => { const r = document.querySelector('[data-plot=recovery] svg rect.stub');"
                      " return r && r.getBoundingClientRect().height; })()")
    assert stub and stub >= 1


def test_at_1400_px_with_a_detail_open_nothing_spills_past_its_card(browser):
    assert browser.js("innerWidth") == 1400
    first = browser.js("document.querySelector('#list tbody tr').dataset.id")
    browser.click(f"#list tbody tr[data-id='{first}']")
    browser.wait_for("document.getElementById('detail').dataset.id === " + repr(first))
    spill = browser.js("Array.from(document.querySelectorAll('.panel, figure.plot'))"
                       ".filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.id || p.className)")
    assert spill == []
    edges = browser.js("(() => { const l = document.querySelector('#list').getBoundingClientRect(),"
                       " p = document.querySelector('#list').closest('.panel').getBoundingClientRect(),"
                       " last = document.querySelector('#list tbody tr td:last-child').getBoundingClientRect(),"
                       " d = document.getElementById('detail').getBoundingClientRect();"
                       " return [l.right, p.right, last.right, d.right, document.documentElement.clientWidth]; })()")
    list_right, panel_right, last_cell, detail_right, page_width = edges
    assert list_right <= panel_right and last_cell <= panel_right and detail_right <= page_width
    assert browser.js("document.querySelector('#list td.pid').title").startswith("gsm8k-a-very-long-problem")


@pytest.fixture(scope="module")
def crowded_page(tmp_path_factory) -> str:
    """120 interventions at 4-digit steps, each with a long error class, its hint withheld after two leaked drafts."""
    from mentor.traces import TraceStore
    from mentor.traces.viewer import write_html

    run = tmp_path_factory.mktemp("crowded")
    store = TraceStore(run)
    for step in range(40):
        records = [{"problem_id": f"gsm8k-a-very-long-problem-identifier-{step}-{g}", "task": "arithmetic",
                    "diagnosis": {"error_class": "wrong_intermediate_step"}, "hint": None, "tier": 0,
                    "withheld": True, "leak": {"leaked_drafts": [{"draft": "9", "detectors": ["answer"]}] * 2},
                    "step": 1000 + step, "group": g, "round": 1, "prompt": ARITHMETIC["prompt"],
                    "attempts": [{"completion": " 12", "reward": 0.0}], "reattempt": [], "recovered": False}
                   for g in range(3)]
        store.append(1000 + step, records, {"mentor/collapse_rate_before": 1.0})
    store.close()
    path, _ = write_html(run)
    return path.as_uri()


def test_at_1400_px_a_crowded_list_keeps_its_outcome_column_in_view(browser, crowded_page):
    browser.navigate(crowded_page)
    browser.wait_for("window.mentorReady")
    assert browser.js("innerWidth") == 1400
    edges = browser.js("(() => { const list = document.querySelector('#list'), panel = list.closest('.panel'),"
                       " p = panel.getBoundingClientRect();"
                       " const cells = Array.from(list.querySelectorAll('th:last-child, td:last-child'))"
                       ".map(c => c.getBoundingClientRect());"
                       " return [cells.length, cells.filter(c => c.left < p.left || c.right > p.right).length,"
                       " panel.scrollWidth - panel.clientWidth,"
                       " list.querySelector('td:last-child').textContent]; })()")
    shown, outside, overflow, badges = edges
    assert shown > 1 and badges == "withheldnot recovered2 leaks"  # every badge there, header and rows
    assert outside == 0 and overflow <= 1  # in view, and the list fits its card: nothing scrolled out of sight
