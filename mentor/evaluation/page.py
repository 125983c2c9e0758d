"""The report as one self-contained HTML page (`mentor eval --html`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mentor.output import write_atomically


def write_html(report: dict[str, Any], path: Path) -> None:
    """One self-contained page: the report's warnings, the table (each rescue rate with its interval and its paired
    difference from `none`), bars of each row's rescue rate overall and per error class, and each row's diagnosis
    accuracy where the failures carry annotated first wrong steps."""
    from html import escape

    rows, classes = report["configs"], sorted({c for r in report["configs"].values() for c in r["per_error_class"]})

    def bar(rate: float) -> str:
        return (f'<div class="bar"><div style="width:{100 * rate:.1f}%"></div></div>'
                f'<span>{100 * rate:.1f}%</span>')

    def fmt(v: Any) -> str:
        return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    def interval(ci: list[float] | None) -> str:
        return "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"

    keys = ["groups", "rescue_rate", "rescue_ci", "vs_none", "vs_none_ci", "mean_reward", "hint_tokens", "withheld",
            "leaks_blocked", "llm_fallbacks", "failures", "reliance", "mentor_s", "sample_s"]
    cells = {"rescue_ci": lambda r: interval(r["rescue_ci"]),
             "vs_none": lambda r: "" if r["vs_none"] is None else f"{r['vs_none']['difference']:+.3f}",
             "vs_none_ci": lambda r: interval(r["vs_none"] and r["vs_none"]["ci"])}
    table = "".join(f"<tr><th>{escape(n)}</th>" + "".join(
        f"<td>{cells[k](r) if k in cells else fmt(r[k])}</td>" for k in keys) + "</tr>" for n, r in rows.items())
    warnings = "".join(f'<p class="warning">warning: {escape(w)}</p>' for w in report["warnings"])
    bars = "".join(f"<tr><th>{escape(n)}</th><td>{bar(r['rescue_rate'])}</td></tr>" for n, r in rows.items())
    sizes = {c: e["groups"] for r in rows.values() for c, e in r["per_error_class"].items()}
    per_class = "".join(
        f"<h3>{escape(c)} ({sizes[c]} groups)</h3><table>" + "".join(
            f"<tr><th>{escape(n)}</th><td>{bar(r['per_error_class'][c]['rescue_rate'])}</td></tr>"
            for n, r in rows.items() if c in r["per_error_class"]) + "</table>" for c in classes)
    scored = {n: r["diagnosis_accuracy"] for n, r in rows.items() if r.get("diagnosis_accuracy")}
    diagnosis = "" if not scored else (
        "<h2>Diagnosis accuracy</h2><p>The analyst's first_error_step against each attempt's annotated first wrong "
        "step (docs/evaluation.md).</p><table><tr><th>config</th><th>attempts</th><th>exact</th><th>within 1</th>"
        "</tr>" + "".join(f"<tr><th>{escape(n)}</th><td>{d['attempts']}</td><td>{bar(d['exact'])}</td>"
                          f"<td>{bar(d['within_1'])}</td></tr>" for n, d in scored.items()) + "</table>")
    o = report["oracle"]
    kwargs = report.get("chat_template_kwargs")
    template = f", chat template kwargs {json.dumps(kwargs)}" if kwargs else ""
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>mentor eval: {escape(report['policy'])}</title>
<style>body{{font:14px sans-serif;margin:2em}}td,th{{padding:2px 8px;text-align:right}}th{{text-align:left}}
.bar{{display:inline-block;width:240px;height:12px;background:#eee;margin-right:6px}}
.bar div{{height:100%;background:#4a7}}.warning{{color:#a40;font-weight:bold}}
</style></head><body><h1>mentor eval</h1>{warnings}
<p>policy {escape(report['policy'])}, {report['samples']} samples a group at temperature {report['temperature']}, seed
{report['seed']}, at most {report.get('max_new_tokens')} new tokens{escape(template)}; {escape(report.get('scoring', ''))}.
Oracle: {100 * o['rescue_rate']:.1f}% rescued if each group got the row that rescued it; best single
row {escape(o['best_single'])} at {100 * o['best_single_rate']:.1f}%. Intervals are 95%, over groups: Wilson's for a
rate, Newcombe's paired one for the difference from none (docs/evaluation.md).</p>
<table><tr><th>config</th>{''.join(f'<th>{k}</th>' for k in keys)}</tr>{table}</table>
<h2>Rescue rate</h2><table>{bars}</table><h2>Per error class</h2>{per_class}{diagnosis}</body></html>
"""
    write_atomically(path, [page])
