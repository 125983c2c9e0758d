"""The compact format of a trace record's node records: written by the runtime, read back by the trace store.

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

This module sits at the top of the package, not in mentor/traces/, because the runtime writes the format and
imports point one way, tasks -> runtime -> trl -> traces: the runtime may not import the traces. It imports
nothing of the package, so both sides may import it.
"""

from __future__ import annotations

from typing import Any

LONG_TEXT = 256  # chars: an output string at least this long that repeats an input value is stored as a reference
BOOKKEEPING = ("group", "backend", "fallbacks", "prompts")  # input channels a node record leaves out


def node_view(node_input: Any) -> dict[str, Any]:
    """A node's input, less the group (the trace keeps it once) and the bookkeeping channels."""
    return {k: v for k, v in (node_input or {}).items() if k not in BOOKKEEPING}


def encoded(view: dict[str, Any], outputs: list[dict[str, Any]], output: dict[str, Any]) -> dict[str, Any]:
    """The `input`, `inherited` and `output` fields of a node record: the node saw `view` (node_view) after the
    earlier nodes returned `outputs`, and returned `output`."""
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
    `hint` and rejected `leaked_drafts[i].draft` are its input `draft`) as `{"$input": key}`."""
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
    """Each node record with its whole `input` and `output`, as the node saw and returned them."""
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
