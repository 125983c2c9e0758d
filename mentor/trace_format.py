"""The one format of a trace record: `TraceRecord`, its one writer (`trace_record`) and its one decoder
(`decoded_record`); and the compact form of its node records.

A trace record is one intervention: the failed group as the mentor got it (problem, reference, attempts, earlier
hints), what the mentor did (an Intervention's fields), and, in training, the exact prompt the policy was sent with
the hint placed, its re-attempts and whether they earned reward. The in-step hook writes it into the trace store,
`mentor diagnose -o` and `mentor eval --interventions` as JSONL lines (mentor/traces/jsonl.py); the trace store,
`mentor diagnose`'s reader of a run (mentor/command_files.py) and the viewer read it. Records of earlier versions lack
fields this one writes; `decoded_record` gives them the current shape, and the viewer's script (viewer.js,
`traceRecord`) does the same, both checked on tests/data/trace_records.json.

Each node's input is the graph state so far, so storing it whole repeated every earlier output in every later node
(a 1 MB draft became a 20 MB record). A record therefore stores only what a node added:
- `input`: the input keys no earlier node's output gave it;
- `inherited`: for each other input key, the earlier node(s) that wrote it (the latest writer, or every writer of
  an accumulating list such as `leaked_drafts`);
- `output`: the node's output, with each long string that repeats one of its input values as `{"$input": key}`,
  and a group it writes back cut to what the trace record lacks.

`encoded` writes that form (mentor/runtime/runner.py), `node_io` rebuilds each whole input and output
(mentor.traces.node_io); the viewer's script (mentor/traces/assets/viewer.js, `nodeIO`) rebuilds it the same way,
checked against this module on tests/data/node_records.json.

This module sits at the top of the package, not in mentor/traces/, because the runtime writes the format and may not
import the traces, which import the runtime (the viewer draws a graph with it); the hook writes it too, and its
callback stores the records in mentor.traces. It imports only mentor.types, which imports nothing of the package, so
every side may import it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from mentor.types import FailedGroup, Intervention

TRACE_FILE = "mentor/traces.sqlite"  # a run directory's trace store, under its output_dir


def trace_path(run_dir: str | Path) -> Path:
    """The trace file of a run directory (a trainer's output_dir), or the file itself if given."""
    path = Path(run_dir)
    return path if path.suffix == ".sqlite" or path.is_file() else path / TRACE_FILE


LONG_TEXT = 256  # chars: an output string at least this long that repeats an input value is stored as a reference
BOOKKEEPING = ("group", "backend", "fallbacks", "prompts", "replies")  # input channels a node record leaves out


class TraceRecord(TypedDict, total=False):
    """One intervention's trace record, as JSON. Only `problem_id` is always there: a record the store could not
    keep whole is a stub of `problem_id`, `group`, `round` and `error`."""

    # The failed group, as the mentor got it (mentor.types.FailedGroup's fields).
    problem_id: str
    task: str
    prompt: str  # the problem's text (a conversational prompt's last user turn)
    reference: dict[str, Any]  # what the task judges and hints from; {} where a record of an earlier version lacks it
    attempts: list[dict[str, Any]]  # each {"completion", "reward"}; reward None: the row was unscorable
    previous_hints: list[dict[str, Any]]  # each {"tier", "hint"}, oldest first
    # What the mentor did (mentor.types.Intervention's fields).
    diagnosis: dict[str, Any]
    hint: str | None
    tier: int
    withheld: bool
    leak: dict[str, Any]
    latency_s: dict[str, float]
    backend: dict[str, str]
    fallbacks: list[str]
    error: str | None
    nodes: list[dict[str, Any]]  # the compact node records (`encoded`)
    # The exact text the policy was sent with the hint placed (the chat template applied, a prefix appended; under
    # `mode: next_attempt`, the text its next sampling is sent): None without a hint, where no policy saw it
    # (`mentor diagnose`), or in a record of an earlier version.
    hinted_prompt: str | None
    # In training: where the group was and what the hinted re-attempt did.
    step: int
    group: int  # the group's index in the step's generation batch
    round: int
    reattempt: list[dict[str, Any]]  # each {"completion", "reward"}; [] without an in-step re-attempt
    recovered: bool | None  # a re-attempt earned reward; None where the record's source makes none (JSONL files)
    strategy: str
    placement: str
    strip_hint: bool
    train_prefix: bool
    # Under `hint_choice: learning`: each hint tried, {"hint", "source", "p", "reliance", "score", "chosen"}.
    candidates: list[dict[str, Any]]
    # Under SDPOTrainer (mentor/trl/sdpo_hook.py): the exact text the self-teacher was conditioned on, its reprompt
    # holding the hint as feedback, decoded from the ids TRL built (special tokens kept); None without a hint (the
    # group has no teacher), outside SDPO, or in a record of an earlier version.
    teacher_prompt: str | None


# The `backend.hint_source` of a record whose group was not failed but all passed, and which `redraw_all_pass`
# replaced by a fresh row's group (mentor/trl/hook.py): no graph ran, and `replacement` holds what came instead.
ALL_PASS_SOURCE = "all_pass"


# The `backend.hint_source` of an intervention `hint_memory` served: its problem's remembered hint, no graph run; the
# record's `memory` names the step and problem the hint came from.
MEMORY_SOURCE = "memory"


def is_all_pass(record: dict[str, Any]) -> bool:
    """Whether a trace record is an all-pass group's re-draw (`ALL_PASS_SOURCE`), not a failed group's."""
    return (record.get("backend") or {}).get("hint_source") == ALL_PASS_SOURCE


def trace_record(group: FailedGroup, intervention: Intervention, attempts: list[dict[str, Any]] | None = None,
                 hinted_prompt: str | None = None, training: dict[str, Any] | None = None) -> TraceRecord:
    """The trace record of `intervention` on `group`: the one writer of the format.

    Args:
        group: the failed group the mentor got.
        intervention: what it did.
        attempts: the attempts as scored, each {"completion", "reward"} (a reward None where the row was
            unscorable, which the group's Attempt holds as 0.0); default: the group's.
        hinted_prompt: the exact text the policy was sent with the hint placed, where one was.
        training: the training fields (step, group, round, reattempt, recovered, strategy, placement, strip_hint,
            train_prefix); without them `recovered` is None, as no re-attempt was made.

    >>> from mentor.types import Attempt
    >>> record = trace_record(FailedGroup("p1", "arithmetic", "Q: 17+25=? A:", {"answer": "42"},
    ...                                   [Attempt(" 32")]), Intervention("p1", "arithmetic", hint="add the tens"))
    >>> record["reference"], record["attempts"], record["hint"], record["recovered"]
    ({'answer': '42'}, [{'completion': ' 32', 'reward': 0.0}], 'add the tens', None)
    """
    if attempts is None:
        attempts = [{"completion": a.completion, "reward": a.reward} for a in group.attempts]
    record: TraceRecord = {**intervention.to_dict(), "prompt": group.prompt, "reference": dict(group.reference),
                           "attempts": attempts, "previous_hints": list(group.previous_hints),
                           "hinted_prompt": hinted_prompt, "teacher_prompt": None, "recovered": None}
    record.update(training or {})  # under SDPOTrainer, `teacher_prompt` among them
    return record


def decoded_record(raw: dict[str, Any]) -> TraceRecord:
    """A stored trace record in the current shape. Records of earlier versions lack `reference` and
    `previous_hints` (then read from the group the error classifier wrote back into its node record, {} and []
    where no node did), `hinted_prompt` and `teacher_prompt` (None: not recorded) and, in a JSONL file, `recovered`
    (None); what they hold is kept as it is. The viewer's script decodes a record the same way (viewer.js,
    `traceRecord`).

    >>> old = {"problem_id": "p1", "prompt": "Q: 17+25=? A:", "attempts": [],
    ...        "nodes": [{"node": "error_classifier", "output": {"group": {"reference": {"answer": "42"}}}}]}
    >>> record = decoded_record(old)
    >>> record["reference"], record["previous_hints"], record["hinted_prompt"], record["recovered"]
    ({'answer': '42'}, [], None, None)
    >>> decoded_record(record) == record
    True
    """
    record: TraceRecord = dict(raw)  # type: ignore[assignment]
    if "reference" not in record:
        written = next((n["output"]["group"] for n in record.get("nodes") or []
                        if isinstance(n, dict) and isinstance(n.get("output"), dict)
                        and isinstance(n["output"].get("group"), dict)), {})
        record["reference"] = written.get("reference") if isinstance(written.get("reference"), dict) else {}
        record.setdefault("previous_hints", written.get("previous_hints") or [])
    record.setdefault("previous_hints", [])
    record.setdefault("hinted_prompt", None)
    record.setdefault("teacher_prompt", None)
    record.setdefault("recovered", None)
    return record


def node_view(node_input: Any) -> dict[str, Any]:
    """A node's input, less the group (the trace keeps it once) and the bookkeeping channels."""
    return {k: v for k, v in (node_input or {}).items() if k not in BOOKKEEPING}


def encoded(view: dict[str, Any], outputs: list[dict[str, Any]], output: dict[str, Any]) -> dict[str, Any]:
    """The `input`, `inherited` and `output` fields of a node record: the node saw `view` (node_view) after the
    earlier nodes returned `outputs`, and returned `output`.

    >>> classifier = {"classes": ["carry"]}
    >>> encoded({"tier": 1, "classes": ["carry"]}, [classifier], {"draft": "add the tens"})
    {'input': {'tier': 1}, 'inherited': {'classes': [0]}, 'output': {'draft': 'add the tens'}}
    """
    own, inherited = own_input(view, outputs)
    return {"input": own, "inherited": inherited, "output": refer(node_output(output), view)}


def own_input(view: dict[str, Any], outputs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """What a node's input holds that no earlier node's output gave it, and, for each key it did get, the earlier
    nodes it came from: the latest writer, or every writer of an accumulating list (`leaked_drafts`)."""
    own, inherited = {}, {}
    for key, value in view.items():
        sources = [j for j, out in enumerate(outputs) if key in out]
        if sources and outputs[sources[-1]][key] == value:
            inherited[key] = [sources[-1]]
        elif (sources and isinstance(value, list) and all(isinstance(outputs[j][key], list) for j in sources)
              and value == [item for j in sources for item in outputs[j][key]]):
            inherited[key] = sources
        else:
            own[key] = value
    return own, inherited


def refer(value: Any, view: dict[str, Any]) -> Any:
    """The output with each long string that repeats one of the node's input values (the checker's accepted
    `hint` and rejected `leaked_drafts[i].draft` are its input `draft`) as `{"$input": key}`.

    >>> draft = "x" * LONG_TEXT
    >>> refer({"hint": draft, "withheld": False}, {"draft": draft})
    {'hint': {'$input': 'draft'}, 'withheld': False}
    """
    texts = {v: k for k, v in view.items() if isinstance(v, str) and len(v) >= LONG_TEXT}

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return {"$input": texts[v]} if v in texts else v
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(value) if texts else value


def node_output(output: dict[str, Any]) -> dict[str, Any]:
    """A node's output; a group it writes back (the classifier adds the verifier's feedback) keeps only what a
    trace record lacks (the record holds problem_id, task, prompt and each attempt's completion and reward)."""
    group = output.get("group")
    if not isinstance(group, dict):
        return output
    rest = {k: v for k, v in group.items() if k not in ("problem_id", "task", "prompt", "attempts")}
    attempts = [{k: v for k, v in a.items() if k not in ("completion", "reward")} if isinstance(a, dict) else a
                for a in group.get("attempts") or []]
    return {**output, "group": {**rest, "attempts": attempts}}


def node_io(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each node record with its whole `input` and `output`, as the node saw and returned them.

    >>> nodes = [{"input": {"tier": 1}, "output": {"draft": "d"}},
    ...          {"input": {}, "inherited": {"draft": [0]}, "output": {"hint": {"$input": "draft"}}}]
    >>> [(n["input"], n["output"]) for n in node_io(nodes)][1]
    ({'draft': 'd'}, {'hint': 'd'})
    """
    def deref(value: Any, inputs: dict[str, Any]) -> Any:
        if isinstance(value, dict):
            if list(value) == ["$input"]:
                return inputs.get(value["$input"])
            return {k: deref(v, inputs) for k, v in value.items()}
        return [deref(v, inputs) for v in value] if isinstance(value, list) else value

    full: list[dict[str, Any]] = []
    for node in nodes:
        inputs = dict(node.get("input") or {})
        for key, sources in (node.get("inherited") or {}).items():
            values = [(full[j]["output"] or {}).get(key) if j < len(full) else None for j in sources]
            inputs[key] = values[0] if len(values) == 1 else [item for v in values for item in v or []]
        full.append({**node, "input": inputs, "output": deref(node.get("output"), inputs)})
    return full
