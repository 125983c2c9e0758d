"""Peak memory of `mentor diagnose` against a server whose every answer is huge (the llm backend's body cap).

    .venv/bin/python benchmarks/llm_body_cap.py                          # 4 groups, 200 MiB answers
    .venv/bin/python benchmarks/llm_body_cap.py --content-mib 600 --groups 1
    PYTHONPATH=../other-checkout .venv/bin/python benchmarks/llm_body_cap.py    # the same against another checkout

Starts tests/openai_server.py on loopback answering every request with `--content-mib` MiB of content (written a
MiB at a time, never held whole by the server), runs `python -m mentor.cli diagnose` on `--groups` failed groups
with every node on `llm`, and reports the diagnose process's peak resident memory (ru_maxrss from wait4) and its
wall time. Whatever `mentor` PYTHONPATH finds is measured, so a checkout without the cap can be measured the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from failed_groups import ARITHMETIC  # noqa: E402
from machine import cpu_name, load_average  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--content-mib", type=int, default=200)
    parser.add_argument("--groups", type=int, default=4)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--content-mib",
                               str(args.content_mib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        with tempfile.TemporaryDirectory() as tmp:
            failures = Path(tmp, "failures.jsonl")
            failures.write_text("".join(json.dumps({**ARITHMETIC, "problem_id": f"add-{i}"}) + "\n"
                                        for i in range(args.groups)))
            config = Path(tmp, "mentor.yaml")
            config.write_text(json.dumps({
                "nodes": {n: "llm" for n in ("error_classifier", "root_cause_analyst", "hint_composer",
                                             "leakage_checker")},
                "llm": {"provider": "openai", "model": "test", "base_url": f"http://127.0.0.1:{port}/v1",
                        "request_timeout_s": 60, "max_retries": 0, "parse_retries": 0},
                "timeout_s": 600}))
            started = time.monotonic()
            child = subprocess.Popen([sys.executable, "-m", "mentor.cli", "diagnose", str(failures), "-o",
                                      str(Path(tmp, "out.jsonl")), "--config", str(config)],
                                     stdout=subprocess.DEVNULL, stderr=Path(tmp, "stderr").open("wb"), cwd=tmp)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.monotonic() - started
            tail = Path(tmp, "stderr").read_text(errors="replace").strip().splitlines()[-3:]
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    print("diagnose's stderr ends:", *tail, sep="\n  ")
    print(f"machine: {cpu_name()}, load {load_average()}")
    print(f"{args.groups} group(s), {args.content_mib} MiB answers: diagnose peak RSS {usage.ru_maxrss / 1024:.0f} MiB, "
          f"{wall:.1f} s, exit {os.waitstatus_to_exitcode(status)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
