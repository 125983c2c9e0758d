"""The viewer's page of a run's trace store, opened in headless Chromium (the `browser` fixture: conftest.py): what the
viewer tests beside tests/test_viewer.py share."""

from __future__ import annotations

from pathlib import Path

CARDS = ("Object.fromEntries(Array.from(document.querySelectorAll('#cards .card'))"
         ".map(c => [c.querySelector('.k').textContent, c.querySelector('.v').textContent]))")


def write_page(store, path: Path, graph: dict | None = None) -> Path:
    """The page `mentor traces view` writes for `store`, at `path`: its interventions, its steps and the graph."""
    from mentor.traces.viewer import build_html, graph_spec

    html = build_html(store.interventions_json(), store.steps(), graph or graph_spec(), source="run")
    path.write_text(html, encoding="utf-8")
    return path


def open_record(browser, store, path: Path, record_id: int) -> None:
    """Writes the page and opens it at one intervention (`#i<id>`), once its detail is drawn."""
    browser.navigate(write_page(store, path).as_uri() + f"#i{record_id}")
    browser.wait_for("window.mentorReady && document.getElementById('detail').getAttribute('data-id')")


def cards(browser) -> dict[str, str]:
    """The summary cards above the list, label -> value as shown."""
    return browser.js(CARDS)


def list_row(browser, record_id: int) -> list[str]:
    """The cells of one intervention's row in the list, as shown."""
    return browser.js(f"Array.from(document.querySelector('#list tr[data-id=\"{record_id}\"]').children)"
                      ".map(td => td.textContent)")
