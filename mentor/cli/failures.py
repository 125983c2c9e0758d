"""`mentor failures --source SOURCE -o FILE`: write a `mentor diagnose` / `mentor eval` failures file.

Sources:
  lab     the lab policy's own failures on the hard level (mentor/lab/hard_failures.py): --n held-out hard problems
          (seed --seed), 8 samples each at T=1; each reference holds hint1..hint3, three static hint libraries.
  policy  a chat policy's own failures on an easy arithmetic family or HumanEval (`--family humaneval`: the first
          --n problems, the code task; mentor/data/policy_failures.py), sampled as `mentor eval` samples; an
          arithmetic reference holds the knowledge, plan and partial tiers that pass the leak check.
  champ   CHAMP's annotated wrong model solutions (mentor/data/champ.py), each attempt with its annotated first
          wrong step.

lab and policy keep the collapsed groups (`--all`: every group). The file is written whole at the end."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mentor.types import InputError

POLICY_DEFAULT = "HuggingFaceTB/SmolLM2-135M-Instruct"
HUMANEVAL = "humaneval"  # the --family of the code task
# --max-new-tokens left out: enough for an arithmetic answer, or for a whole HumanEval function (the length at which
# Qwen2.5-Coder-0.5B's responses were measured, docs/evaluation.md).
MAX_NEW_TOKENS = {"arithmetic": 48, HUMANEVAL: 384}
# Each source's options and their defaults; an option another source takes is refused with the sources that take it.
OPTIONS = {
    "lab": {"policy": None, "n": 500, "seed": 0, "all": False, "threads": 1},
    "policy": {"policy": POLICY_DEFAULT, "family": "sum", "n": 16, "seed": 0, "samples": 8, "temperature": 1.0,
               "max_new_tokens": None, "all": False, "threads": 1, "engine": "hf", "problems": None},
    "champ": {"champ": None, "limit": None},
}
AT_LEAST_1 = ("n", "samples", "max_new_tokens", "limit", "threads")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def is_given(value) -> bool:
    return value is not None and value is not False  # `--n 0` is given (and refused), `--all` left out is not


def source_options(args: argparse.Namespace) -> dict:
    """The chosen source's options, its defaults filled in; InputError for an option it does not take or a count
    under 1."""
    given = {name for names in OPTIONS.values() for name in names if is_given(getattr(args, name))}
    takes = OPTIONS[args.source]
    for name in sorted(given - set(takes)):
        others = " or ".join(f"--source {s}" for s, names in OPTIONS.items() if name in names)
        raise InputError(f"{flag(name)} is not an option of --source {args.source}; it is one of {others}")
    options = {name: getattr(args, name) if is_given(getattr(args, name)) else default
               for name, default in takes.items()}
    for name in AT_LEAST_1:
        if options.get(name) is not None and options[name] < 1:
            raise InputError(f"{flag(name)} {options[name]}: must be at least 1")
    if not options.get("temperature", 0) >= 0:  # NaN too
        raise InputError(f"--temperature {options['temperature']}: must be >= 0")
    return options


def lab_rows(o: dict) -> tuple[list[dict], str]:
    from mentor.lab.hard_failures import lab_failure_rows
    from mentor.models.checkpoint import COMMITTED_POLICY

    policy = Path(o["policy"] or COMMITTED_POLICY)
    if not (policy / "config.json").is_file():  # before transformers reads it as a hub id
        raise InputError(f"--policy {policy}: not a lab policy directory (no config.json in it); give a directory the "
                         f"lab saved, or leave --policy out for the committed one")
    rows = lab_failure_rows(policy, o["n"], o["seed"], keep_all=o["all"], num_threads=o["threads"])
    return rows, f"wrote {len(rows)} groups of {o['n']} problems to {{out}}"


def policy_rows(o: dict) -> tuple[list[dict], str]:
    from mentor.data.easy_arithmetic import make_rows
    from mentor.data.policy_failures import TIERS, humaneval_failure_rows, policy_failure_rows
    from mentor.policy import torch_threads

    code = o["family"] == HUMANEVAL
    if o["problems"] and not code:
        raise InputError(f"--problems {o['problems']}: chooses HumanEval problems; it needs --family {HUMANEVAL}")
    tokens = o["max_new_tokens"] or MAX_NEW_TOKENS[HUMANEVAL if code else "arithmetic"]
    with torch_threads(o["threads"]):
        if code:
            rows, counts = humaneval_failure_rows(o["policy"], o["n"], o["samples"], o["temperature"], tokens,
                                                  o["seed"], o["all"], o["engine"], problem_ids(o["problems"]))
        else:
            rows, counts = policy_failure_rows(o["policy"], make_rows(o["family"], o["n"], o["seed"]),
                                               o["samples"], o["temperature"], tokens, o["seed"], o["all"], o["engine"])
    if code:
        return rows, (f"humaneval: {counts['collapsed']} of {counts['problems']} groups collapsed ({o['samples']} "
                      f"samples, T={o['temperature']}, {tokens} new tokens), pass@1 {counts['passed']}/"
                      f"{counts['responses']} = {counts['passed'] / max(1, counts['responses']):.3f}; wrote "
                      f"{counts['kept']} groups to {{out}}")
    left_out = ", ".join(f"{t} {counts[f'leaked_{t}']}" for t in TIERS)
    return rows, (f"{o['family']}: {counts['collapsed']} of {counts['problems']} groups collapsed; wrote "
                  f"{counts['kept']} groups to {{out}}; tiers left out as leaks: {left_out}")


def problem_ids(path: str | None) -> list[str] | None:
    """The problem ids a `--problems` file lists, one a line (blank lines and `#` comments skipped); None: all."""
    if path is None:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--problems {path}: cannot be read ({e}); give a text file of problem ids, one a line"
                         ) from None
    ids = [line.split("#", 1)[0].strip() for line in lines]
    ids = [i for i in ids if i]
    if not ids:
        raise InputError(f"--problems {path}: lists no problem id; write one a line, e.g. HumanEval/10")
    return ids


def champ_rows(o: dict) -> tuple[list[dict], str]:
    from mentor.data.champ import annotated_failure_rows

    rows, counts = annotated_failure_rows(o["champ"])
    rows = rows[:o["limit"]]
    return rows, (f"wrote {len(rows)} groups to {{out}}: of CHAMP's {counts['annotated']} annotated model solutions, "
                  f"{counts['no_mistake']} are marked correct and {counts['right_answer']} marked wrong have an "
                  f"answer the verifier accepts; both left out")


SOURCES = {"lab": lab_rows, "policy": policy_rows, "champ": champ_rows}


def cmd_failures(args) -> int:
    from mentor.output import check_output, write_atomically

    options = source_options(args)
    out = Path(args.output)
    check_output(out, inputs=[Path(options[name]) for name in ("champ", "problems") if options.get(name)])  # before
    # any problem is sampled or read; never over a file this run reads
    rows, done = SOURCES[args.source](options)
    write_atomically(out, (json.dumps(r) + "\n" for r in rows))
    print(done.format(out=out))
    return 0


def add_failures_command(sub) -> None:
    from mentor.data.easy_arithmetic import FAMILIES
    from mentor.evaluation.vllm_engine import ENGINES

    p = sub.add_parser("failures", help="write a failures file: the lab policy's, a chat policy's or CHAMP's",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", required=True, choices=tuple(SOURCES), help="where the failed groups come from")
    p.add_argument("-o", "--output", required=True, help="the .jsonl file to write")
    p.add_argument("--policy", help="lab: a lab policy directory (default: the committed one); policy: a hub id or "
                                    f"save_pretrained directory, as `mentor eval --policy` (default: {POLICY_DEFAULT})")
    p.add_argument("--family", choices=(*FAMILIES, HUMANEVAL),
                   help="policy: the problem family (default sum; humaneval: the code task)")
    p.add_argument("--n", type=int, help="lab: held-out hard problems (default 500); policy: problems (default 16; "
                                         "humaneval: the first N of its 164)")
    p.add_argument("--seed", type=int, help="lab, policy: problem and sampling seed (default 0; humaneval: sampling)")
    p.add_argument("--samples", type=int, help="policy: attempts per problem, G (default 8)")
    p.add_argument("--temperature", type=float, help="policy: sampling temperature (default 1.0)")
    p.add_argument("--max-new-tokens", type=int, help="policy: (default 48; humaneval: 384)")
    p.add_argument("--all", action="store_true", help="lab, policy: keep the groups that are not collapsed too")
    p.add_argument("--threads", type=int, help="lab, policy: torch threads (default 1)")
    p.add_argument("--engine", choices=ENGINES, help="policy: what samples the policy, as `mentor eval "
                                                            "--engine` (default hf)")
    p.add_argument("--problems", help="policy, humaneval: only the problems this file lists (one id a line, e.g. "
                                      "HumanEval/10; `#` comments), of the first --n, in HumanEval's order")
    p.add_argument("--champ", help="champ: CHAMP's v0.json (default: the copy champ-dataset ships)")
    p.add_argument("--limit", type=int, help="champ: keep the first N groups (file order: CHAMP's problem order)")
    p.set_defaults(func=cmd_failures)
