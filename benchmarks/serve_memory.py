"""Memory of `mentor traces serve` on a big store: what GET / and the page's API loading cost the server.

    .venv/bin/python benchmarks/serve_memory.py                    # a ~100 MB store, 6 clients at once
    .venv/bin/python benchmarks/serve_memory.py --records 20000 --clients 6

Writes a store of synthetic records (benchmarks/viewer.py's), starts `python -m mentor.cli traces serve` on it in a
subprocess (whatever `mentor` its PYTHONPATH finds, so an older checkout can be measured the same way), and reports
the server's resident memory (VmRSS) and peak (VmHWM) from /proc:

- after start;
- after `--clients` concurrent GET / (each read to the end);
- after `--clients` concurrent clients each reading every record the way the page does: `/api/interventions`
  from after_id=0, asking again from the last id until the answer is empty.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_name, load_average  # noqa: E402
from viewer import make_store  # noqa: E402


def memory_mb(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=600) as r:
        return r.read()


def read_all(url: str) -> int:
    """Every record, as the page loads them: batch after batch from the last id."""
    after, count = 0, 0
    while True:
        batch = json.loads(get(f"{url}api/interventions?after_id={after}&limit=1000"))
        if not batch:
            return count
        count += len(batch)
        after = batch[-1]["id"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--clients", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mentor-serve-") as tmp:
        make_store(Path(tmp), args.records)
        size = (Path(tmp) / "mentor" / "traces.sqlite").stat().st_size
        server = subprocess.Popen([sys.executable, "-m", "mentor.cli", "traces", "serve", tmp, "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
        try:
            line = server.stdout.readline()
            url = line.split(" at ", 1)[1].split(" ", 1)[0]
            time.sleep(0.5)
            print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load average {load_average()[0]:.1f}; "
                  f"{args.records} records, store {size / 1e6:.0f} MB, {args.clients} clients")
            rss, peak = memory_mb(server.pid)
            print(f"after start:              RSS {rss:7.0f} MB  peak {peak:7.0f} MB")
            with ThreadPoolExecutor(args.clients) as pool:
                sizes = list(pool.map(lambda _: len(get(url)), range(args.clients)))
            rss, peak = memory_mb(server.pid)
            print(f"after {args.clients} x GET /:          RSS {rss:7.0f} MB  peak {peak:7.0f} MB  "
                  f"(page {sizes[0] / 1e3:,.0f} kB)")
            with ThreadPoolExecutor(args.clients) as pool:
                counts = list(pool.map(lambda _: read_all(url), range(args.clients)))
            rss, peak = memory_mb(server.pid)
            print(f"after {args.clients} x every record:   RSS {rss:7.0f} MB  peak {peak:7.0f} MB  "
                  f"({counts[0]} records each)")
        finally:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
