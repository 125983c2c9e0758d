"""The demo's report.html: the curves as inline SVG, the table, links into the mentor arm's traces. No network."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

COLOURS = {"grpo": "#888888", "static_hints": "#1f77b4", "mentor": "#d62728"}


def svg_lines(title: str, series: dict[str, list[tuple[float, float]]], y_max: float = 1.0,
              width: int = 460, height: int = 220) -> str:
    """A small line plot: one polyline per series, axes from 0 to the last x and 0 to `y_max`."""
    pad = 36
    x_max = max((x for points in series.values() for x, _ in points), default=1) or 1
    lines = []
    for name, points in series.items():
        coords = " ".join(f"{pad + (width - 2 * pad) * x / x_max:.1f},"
                          f"{height - pad - (height - 2 * pad) * min(y, y_max) / y_max:.1f}" for x, y in points)
        lines.append(f'<polyline class="series" data-arm="{html.escape(name)}" fill="none" stroke-width="2" '
                     f'stroke="{COLOURS.get(name, "#444")}" points="{coords}"><title>{html.escape(name)}</title>'
                     f'</polyline>')
    legend = "".join(f'<text x="{pad + 8 + 120 * i}" y="14" fill="{COLOURS.get(n, "#444")}">{html.escape(n)}</text>'
                     for i, n in enumerate(series))
    return (f'<figure><figcaption>{html.escape(title)}</figcaption><svg width="{width}" height="{height}" '
            f'role="img" aria-label="{html.escape(title)}">{legend}'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#000"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#000"/>'
            f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{y_max:g}</text>'
            f'<text x="{pad - 4}" y="{height - pad}" text-anchor="end">0</text>'
            f'<text x="{width - pad}" y="{height - pad + 16}" text-anchor="end">step {x_max:g}</text>'
            f'{"".join(lines)}</svg></figure>')


def ran_on(environment: dict[str, str] | None) -> str:
    """The report's sentence on where the run computed (nothing for a results.json that predates the record)."""
    if not environment:
        return ""
    packages = ", ".join(f"{name} {environment.get(name, '?')}" for name in ("torch", "transformers", "trl"))
    return html.escape(f" Ran on {environment.get('cpu', '?')} ({environment.get('cpu_capability', '?')} kernels), "
                       f"{packages}: another CPU gives other figures for the same seed.")


def write_report(results: dict[str, Any], out_dir: Path) -> Path:
    """Writes `report.html` next to results.json and returns its path."""
    arms = results["arms"]
    first = {arm: figures["runs"][0] for arm, figures in arms.items()}
    plots = [
        svg_lines("Held-out accuracy, unhinted, greedy (seed of the first run)",
                  {a: [(p["step"], p["heldout_acc"]) for p in r["curve"]] for a, r in first.items()}),
        svg_lines("Training reward per step", {a: list(enumerate(r["reward"])) for a, r in first.items()}),
        svg_lines("Collapse rate before intervention", {a: list(enumerate(r["collapse_rate_before"]))
                                                        for a, r in first.items()}),
        svg_lines("Collapse rate after intervention", {a: list(enumerate(r["collapse_rate_after"]))
                                                       for a, r in first.items()}),
    ]
    rows = []
    for arm, f in arms.items():
        traces = [r.get("traces") for r in f["runs"] if r.get("traces")]
        links = " ".join(f'<a href="{html.escape(t)}">seed {i}</a>' for i, t in enumerate(traces))
        rows.append(
            f"<tr><td>{html.escape(arm)}</td><td>{f['heldout_acc_before']:.3f}</td><td>{f['heldout_acc_after']:.3f}</td>"
            f"<td>{', '.join(f'{a:.3f}' for a in f['heldout_acc_after_per_seed'])}</td><td>{f['spread']:.3f}</td>"
            f"<td>{f['hint_dependence']:+.3f}</td><td>{f['hint_tokens_per_intervention']:.2f}</td>"
            f"<td>{f['interventions']:.0f}</td><td>{links or '-'}</td></tr>")
    hint_given = (f"the first {results['settings']['static_hint_digits']} answer digits"
                  if results.get("lab", "addition") == "addition" else
                  "the static library's one-step hint (for the other arms: step 1)")
    title = "MENTOR demo" + (f" ({results['lab']} lab)" if results.get("lab", "addition") != "addition" else "")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1000px}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}figure{{display:inline-block;margin:0.5em}}
figcaption{{font-size:90%}}</style></head><body>
<h1>{html.escape(title)}: zero-reward collapse and recovery</h1>
<p>{results['steps']} GRPO steps per arm from the same pre-trained policy; seeds {results['settings']['seeds']};
held-out accuracy on {results['settings']['heldout_problems']} hard problems never trained on, greedy, without hints.
Hint dependence is accuracy with {hint_given} given minus accuracy without.</p>
<table id="results"><tr><th>arm</th><th>before</th><th>after (mean)</th><th>after per seed</th><th>spread</th>
<th>hint dependence</th><th>hint tokens / intervention</th><th>interventions</th><th>traces</th></tr>
{''.join(rows)}</table>
<div id="plots">{''.join(plots)}</div>
<p>Figures: <code>results.json</code>. Wall time {results['wall_s']:.0f} s.{ran_on(results.get("environment"))}</p>
</body></html>"""
    path = out_dir / "report.html"
    path.write_text(page)
    return path
