"""The cost of `mentor/reliance` in the step: with `reliance_every: 2`, the median step that computes it over the
median step that does not, in the same runs, so that both see the same load (benchmarks/step_overhead.py's runs,
each in a fresh process, the mentor attached with its default config otherwise).

The reward pays every hinted row and nothing else, so every group collapses, every row spliced in is a correct hinted
row, and reliance scores the most rows a step can hold: the whole batch (its worst case).

    .venv/bin/python benchmarks/reliance_cost.py [--policy lab|smollm2] [--steps N] [--rounds 2]
"""

from __future__ import annotations

import statistics
import tempfile

from step_overhead import in_fresh_process, parse_args


def main() -> None:
    args, steps = parse_args(__doc__, "identical")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [in_fresh_process(args.policy, True, steps, f"{tmp}/{r}", {"reliance_every": 2}, True)
                for r in range(args.rounds)]
    timed = [(t, r) for run in runs for t, r in zip(run["step_s"], run["reliance_s"])]
    on, off = [t for t, r in timed if r > 0], [t for t, r in timed if r == 0]
    reliance_s = statistics.median(r for _, r in timed if r > 0)
    share = statistics.mean(run["collapsed"] for run in runs)
    print(f"policy {args.policy}; collapsed share {share:.2f}; median step {1000 * statistics.median(off):.0f} ms "
          f"without the reliance passes, {1000 * statistics.median(on):.0f} ms with them ({len(off)} + {len(on)} "
          f"steps of {len(runs)} runs)")
    print(f"ratio with/without {statistics.median(on) / statistics.median(off):.3f}; the passes (mentor/reliance_s) "
          f"{reliance_s / statistics.median(on):.1%} of the step that makes them")


if __name__ == "__main__":
    main()
