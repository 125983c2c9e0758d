"""`mentor eval`'s arguments: the parser, and the counts, `--config` and `--fail-under` values checked."""

from __future__ import annotations

from pathlib import Path

from mentor.evaluation.policy import DEFAULT_MAX_NEW_TOKENS, LAB_MAX_NEW_TOKENS
from mentor.types import InputError


def parse_configs(specs: list[str] | None) -> dict[str, str | None]:
    """`--config NAME=CFG` values as {name: YAML path}; none given: {"mentor": None} (the default config).
    `NAME=default` is the default config (the installed graph and prompts, rules everywhere) under that name."""
    if not specs:
        return {"mentor": None}
    configs: dict[str, str | None] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--config {spec!r}: expected NAME=CFG, e.g. --config mine=configs/mine.yaml")
        if name == "none" or name in configs:
            raise InputError(f"--config {spec!r}: the name {name!r} is " +
                             ("the unhinted row's" if name == "none" else "given twice") + "; choose another")
        configs[name] = None if path == "default" and not Path(path).exists() else path
    return configs


def parse_fail_under(specs: list[str] | None, names: list[str]) -> dict[str, float]:
    """`--fail-under NAME=RATE` values as {name: rate}, each NAME a row of the report."""
    out = {}
    for spec in specs or []:
        name, sep, rate = spec.partition("=")
        try:
            value = float(rate)
        except ValueError:
            value = None
        if not sep or value is None or not 0 <= value <= 1:
            raise InputError(f"--fail-under {spec!r}: expected NAME=RATE with RATE in [0, 1], e.g. mentor=0.5")
        if name not in names:
            raise InputError(f"--fail-under {spec!r}: no row {name!r}; the rows are {names}")
        out[name] = value
    return out


def check_counts(args) -> None:
    """Refuses (InputError) a count under 1 before anything loads, as `mentor failures` does: `--threads 0` or
    `--max-new-tokens 0` would otherwise mean the default, and `--threads -2` fail in torch after the policy
    loaded. A count left out (None) keeps its default."""
    for flag, value in (("--samples", args.samples), ("--max-new-tokens", args.max_new_tokens),
                        ("--threads", args.threads)):
        if value is not None and value < 1:
            raise InputError(f"{flag} {value}: must be at least 1")


def add_arguments(p) -> None:
    """`mentor eval`'s arguments on its subparser `p`."""
    p.add_argument("failures", help="a `mentor diagnose` .jsonl file, a run directory or its traces.sqlite")
    p.add_argument("--policy", required=True, help="`lab`, a save_pretrained directory, or a hub id")
    p.add_argument("--config", action="append", metavar="NAME=CFG",
                   help="a mentor config YAML under a row name, or NAME=default for the default config "
                        "(repeatable; default: mentor = the default config)")
    p.add_argument("--samples", type=int, default=8, help="re-attempts per group, G (default 8)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: a run folder's, else 1; "
                                                     "0 is greedy)")
    p.add_argument("--max-new-tokens", type=int, help="response length cap, a prefix hint included "
                                                      "(default: a run folder's max_completion_length, else "
                                                      f"{LAB_MAX_NEW_TOKENS} for the lab policy, "
                                                      f"else {DEFAULT_MAX_NEW_TOKENS})")
    p.add_argument("--reward", action="append", metavar="MODULE:FUNCTION[=WEIGHT]",
                   help="score re-attempts with this reward function, as TRL calls it (repeatable; default: a run "
                        "folder's own rewards where they can be imported, else the task's verifier)")
    p.add_argument("--success-reward", action="append", metavar="NAME",
                   help="the reward(s) whose weighted sum says a re-attempt succeeded (default: the run's "
                        "success_reward, else every reward)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    from mentor.evaluation.vllm_engine import ENGINES

    p.add_argument("--engine", choices=ENGINES, default="hf",
                   help="what samples the policy: transformers' generate (hf, default) or vLLM's offline LLM (vllm; "
                        "docs/evaluation.md says where their draws differ)")
    p.add_argument("-o", "--output", required=True, help="REPORT.json to write")
    p.add_argument("--html", help="also write a self-contained HTML page")
    p.add_argument("--fail-under", action="append", metavar="NAME=RATE",
                   help="exit 1 when row NAME rescues less than RATE (0 to 1) of the groups (repeatable)")
    p.add_argument("--interventions", metavar="DIR", help="also write each config row's interventions (what its "
                                                            "graph did per group) to DIR/NAME.jsonl, as `mentor "
                                                            "diagnose -o` does; `mentor traces view` pages them")
    p.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    p.add_argument("--allow-node-errors", action="store_true",
                   help="exit 0 even when a group failed from an exception in a node (default: exit 1)")
    p.add_argument("--lookahead", type=int, default=0, metavar="K",
                   help="also the learning figure: the change in per-token log-probability of correct solutions "
                        "on held-out failures after K update steps on each row's rescued groups (default 0: off)")
    p.add_argument("--lookahead-lr", dest="lookahead_lr", type=float,
                   help="learning rate of the --lookahead steps (default 1e-6, TRL's GRPO default)")
