"""How the trace viewer copes with a big run: file size, load time and JS heap for 10,000 interventions.

    .venv/bin/python benchmarks/viewer.py                       # 100, 1,000 and 10,000 interventions, 3 loads each
    .venv/bin/python benchmarks/viewer.py --sizes 10000 --repeats 5

For each size it writes that many synthetic intervention records (the shape GenerationHook.record writes: 4 failed
attempts, the node records of the task stream with their inputs and outputs, a rejected draft on one in three,
4 re-attempt completions) into a TraceStore, builds the page with `mentor traces view`'s code, and loads it
from file:// in headless Chromium (tests/chromium.py's CDP client). It reports:

- build: seconds to read the store and write the HTML (graph drawing excluded: it is loaded once);
- size: the HTML file;
- load: ms from navigation start to the first render of the list (`window.mentorListRendered`, the page's
  performance.now()), and to the end of the page's start-up script (summary plots and graph drawn);
- heap: JSHeapUsedSize (Performance.getMetrics) after load and a forced garbage collection;
- filter and search: ms to re-filter all records by error class, and by a full-text query (first query, which
  builds the search index, and a second one);
- open: ms to open one intervention's detail.

Medians over the repeats (a fresh page each). Prints one line per size and the 10,000 / 100 ratios;
docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from chromium import Chromium, find_chromium  # noqa: E402
from machine import cpu_name  # noqa: E402
from mentor.traces import TraceStore  # noqa: E402
from mentor.traces.viewer import TraceSource, build_html, graph_spec  # noqa: E402

CLASSES = ["missed_carry", "wrong_tens", "wrong_hundreds", "no_answer", "off_by_one", "format"]
NODES = ["error_classifier", "root_cause_analyst", "hint_composer", "leakage_checker"]
ALPHABET = "0123456789 +=?QA:abcdefghijklmnopqrstuvwxyz"


def synthetic_record(i: int, rng: random.Random, G: int = 4) -> dict:
    """One intervention record shaped like a real one (see mentor/trl/hook.py `GenerationHook.record`)."""
    a, b = rng.randint(100, 999), rng.randint(100, 999)
    answer = f"{a + b:04d}"
    cls = rng.choice(CLASSES)
    withheld = i % 17 == 0
    leaked = i % 3 == 0 or withheld
    tier = rng.choice([1, 2, 3])
    hint = None if withheld else (answer[:2] if tier == 3 else f"Add the hundreds digits {a // 100} and {b // 100}.")
    diagnosis = {"error_class": cls, "error_classes": {cls: 3, "no_answer": 1},
                 "root_cause": f"3 of {G} attempts: {cls.replace('_', ' ')} in the tens column ({a}+{b}).",
                 "first_error_step": rng.choice([None, 1, 2, 3])}
    drafts = [{"draft": f"the answer is {answer}", "tier": tier, "detectors": ["answer_digits", "whole_answer"],
               "reason": f"answer_digits: '{answer}' in the hint equals the answer {answer}"}] if leaked else []
    attempts = [{"completion": "".join(rng.choice(ALPHABET) for _ in range(8)), "reward": 0.0} for _ in range(G)]
    reattempt = [] if withheld else [{"completion": "".join(rng.choice(ALPHABET) for _ in range(8)),
                                      "reward": float(rng.random() < 0.4)} for _ in range(G)]
    classes = [cls] * 3 + ["no_answer"]
    state: dict = {"leaked_drafts": []}
    nodes = []
    outputs = [{"classes": classes}, {"diagnosis": diagnosis}, {"draft": drafts[0]["draft"] if leaked else hint,
                                                                "tier": tier},
               {"leaked_drafts": drafts, "hint": None if leaked else hint, "withheld": False}]
    if leaked:
        outputs += [{"draft": hint, "tier": tier}, {"hint": hint, "withheld": withheld}]
    for k, out in enumerate(outputs):
        node = NODES[k] if k < 4 else NODES[2 + (k - 4)]
        out = {**out, "backend": {node: "rules"}}
        nodes.append({"node": node, "latency_s": rng.uniform(0.001, 0.02), "backend": "rules",
                      "input": {k2: v for k2, v in state.items()}, "output": out, "error": None})
        state.update({k2: v for k2, v in out.items() if k2 != "backend"})
    recovered = any(r["reward"] > 0 for r in reattempt)
    return {"problem_id": f"add-{a}-{b}", "task": "arithmetic", "diagnosis": diagnosis, "hint": hint, "tier": tier,
            "withheld": withheld, "leak": {"leaked_drafts": drafts},
            "latency_s": {n["node"]: n["latency_s"] for n in nodes}, "backend": {n: "rules" for n in NODES},
            "fallbacks": [], "error": None, "nodes": nodes, "prompt": f"Q: {a:03d}+{b:03d}=? A:",
            "attempts": attempts, "reattempt": reattempt, "recovered": recovered, "strategy": "replace_group",
            "placement": "prompt"}


def make_store(directory: Path, n: int, per_step: int = 16, seed: int = 0) -> Path:
    rng = random.Random(seed)
    store = TraceStore(directory)
    for step in range(0, (n + per_step - 1) // per_step):
        count = min(per_step, n - step * per_step)
        records = [{**synthetic_record(step * per_step + g, rng), "step": step, "group": g, "round": 1}
                   for g in range(count)]
        before = rng.uniform(0.3, 1.0)
        store.append(step, records, {"mentor/collapse_rate_before": before,
                                     "mentor/collapse_rate_after": before * rng.uniform(0, 0.5),
                                     "mentor/interventions": count})
    store.close()
    return directory


def measure(browser: Chromium, url: str) -> dict[str, float]:
    browser.navigate("about:blank")
    t0 = time.perf_counter()
    browser.navigate(url, timeout=120)
    wall = time.perf_counter() - t0
    browser.wait_for("window.mentorReady", timeout=120)
    out = {"wall_ms": 1000 * wall, "list_ms": browser.js("window.mentorListRendered"),
           "script_ms": browser.js("window.mentorScriptStart"), "parse_ms": browser.js("window.mentorDataParsed"),
           "ready_ms": browser.js("window.mentorReady")}
    browser.call("HeapProfiler.collectGarbage")
    out["heap_mb"] = browser.metrics()["JSHeapUsedSize"] / 1e6
    out["filter_ms"] = browser.js("""(() => { const t = performance.now();
        document.getElementById('f-class').value = 'missed_carry'; mentorViewer.applyFilters(false);
        const dt = performance.now() - t; document.getElementById('f-class').value = ''; return dt; })()""")
    out["search1_ms"] = browser.js("""(() => { const t = performance.now();
        document.getElementById('f-search').value = 'tens column 12'; mentorViewer.applyFilters(false);
        return performance.now() - t; })()""")
    out["search2_ms"] = browser.js("""(() => { const t = performance.now();
        document.getElementById('f-search').value = 'answer_digits'; mentorViewer.applyFilters(false);
        return performance.now() - t; })()""")
    out["open_ms"] = browser.js("""(() => { const rs = mentorViewer.records(); const t = performance.now();
        mentorViewer.showDetail(rs[rs.length >> 1].id); return performance.now() - t; })()""")
    if browser.problems():
        raise RuntimeError(f"the page reported problems: {browser.problems()[:3]}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    binary = find_chromium()
    if not binary:
        print("no chromium on PATH: apt-get install -y chromium (or set MENTOR_CHROMIUM)", file=sys.stderr)
        return 1
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores visible; {version}; Python {platform.python_version()}")
    graph = graph_spec()
    results = {}
    browser = Chromium(binary)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in args.sizes:
                run = make_store(Path(tmp) / f"run{n}", n)
                t0 = time.perf_counter()
                source = TraceSource(run)
                page = build_html(source.interventions_json(), source.steps(), graph, source=source.label)
                html_path = Path(tmp) / f"traces{n}.html"
                html_path.write_text(page, encoding="utf-8")
                build_s = time.perf_counter() - t0
                source.close()
                runs = [measure(browser, html_path.as_uri()) for _ in range(args.repeats)]
                med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                med.update(build_s=build_s, size_mb=html_path.stat().st_size / 1e6)
                results[n] = med
                print(f"{n:>6} interventions: html {med['size_mb']:.1f} MB (built in {build_s:.2f} s); "
                      f"script starts at {med['script_ms']:.0f} ms, data parsed at {med['parse_ms']:.0f} ms, "
                      f"list rendered at {med['list_ms']:.0f} ms, page ready at {med['ready_ms']:.0f} ms "
                      f"(navigate to load event {med['wall_ms']:.0f} ms); JS heap {med['heap_mb']:.1f} MB; "
                      f"filter {med['filter_ms']:.1f} ms, search {med['search1_ms']:.1f} ms first / "
                      f"{med['search2_ms']:.1f} ms next; open one {med['open_ms']:.1f} ms", flush=True)
    finally:
        browser.close()
    lo, hi = min(results), max(results)
    if lo != hi:
        r = {k: results[hi][k] / results[lo][k] for k in ("size_mb", "list_ms", "ready_ms", "wall_ms", "heap_mb")}
        print(f"{hi} vs {lo} interventions: size x{r['size_mb']:.0f}, list render x{r['list_ms']:.1f}, "
              f"page ready x{r['ready_ms']:.1f}, load event x{r['wall_ms']:.1f}, JS heap x{r['heap_mb']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
