"""One JSON schema per `llm` node: the prompt's format instruction, the answer's validation, and constrained decoding.

The schemas keep to the subset that every constrained decoder named in docs/configuration.md compiles (vLLM's and
xgrammar's JSON-schema grammars): object, array, string, integer, boolean, null, enum, anyOf, min/max items and
lengths. `maxLength` bounds the free text so that a constrained answer always fits its token budget.
"""

from __future__ import annotations

import json
from typing import Any

ROOT_CAUSE_CHARS, HINT_CHARS, REASON_CHARS = 300, 400, 200


def node_schema(node: str, taxonomy: dict[str, str], n_attempts: int) -> dict[str, Any]:
    """The JSON schema of `node`'s answer for a group of `n_attempts` attempts of a task with `taxonomy`."""
    text = lambda n: {"type": "string", "minLength": 1, "maxLength": n}  # noqa: E731
    properties = {
        "error_classifier": {"classes": {"type": "array", "items": {"enum": sorted(taxonomy)},
                                         "minItems": n_attempts, "maxItems": n_attempts}},
        "root_cause_analyst": {"root_cause": text(ROOT_CAUSE_CHARS),
                               "first_error_step": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "hint_composer": {"hint": text(HINT_CHARS), "tier": {"enum": [1, 2, 3]}},
        # A verdict written as a word, as unconstrained small models do, still counts (leakage_node._verdict).
        "leakage_checker": {"leaked": {"anyOf": [{"type": "boolean"}, {"enum": ["true", "false", "yes", "no"]}]},
                            "reason": text(REASON_CHARS)},
    }[node]
    return {"title": node, "type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def token_budget(schema: dict[str, Any]) -> int:
    """Tokens an answer of `schema` may need, generously: about 3 characters a token for text (BPE tokenizers
    average 3.5-4 on English prose), each enum value's own length, a few tokens of punctuation per key."""
    if "enum" in schema:
        return 2 + max(len(json.dumps(v)) for v in schema["enum"])
    if "anyOf" in schema:
        return max(token_budget(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "object":
        return 2 + sum(4 + len(k) // 3 + token_budget(s) for k, s in schema["properties"].items())
    if kind == "array":
        return 2 + schema.get("maxItems", 8) * (1 + token_budget(schema["items"]))
    if kind == "string":
        return 2 + schema.get("maxLength", 300) // 3
    return 4  # a number, a boolean, null


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def violations(value: Any, schema: dict[str, Any], where: str = "answer") -> list[str]:
    """Why `value` does not match `schema` (the subset above), one message per violation; [] if it matches."""
    if "enum" in schema:
        return [] if any(value == v and type(value) is type(v) for v in schema["enum"]) else [
            f"{where} is {json.dumps(value)[:60]}, not one of {schema['enum']}"]
    if "anyOf" in schema:
        return [] if any(not violations(value, s, where) for s in schema["anyOf"]) else [
            f"{where} is {json.dumps(value)[:60]}, which matches none of {[s.get('type') for s in schema['anyOf']]}"]
    kind = schema["type"]
    if not (isinstance(value, int) and not isinstance(value, bool) if kind == "integer"
            else isinstance(value, _TYPES[kind])):
        return [f"{where} must be {kind}, got {type(value).__name__}"]
    out = []
    if kind == "object":
        out += [f"{where} lacks '{k}'" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            out += [f"{where} has unknown key '{k}'" for k in value if k not in schema["properties"]]
        for k, s in schema["properties"].items():
            if k in value:
                out += violations(value[k], s, f"{where}.{k}")
    elif kind == "array":
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            out.append(f"{where} has {len(value)} items, needs {schema.get('minItems', 0)}-{schema.get('maxItems')}")
        for i, item in enumerate(value):
            out += violations(item, schema["items"], f"{where}[{i}]")
    elif kind == "string" and not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
        out.append(f"{where} has {len(value)} characters, needs {schema.get('minLength', 0)}-{schema.get('maxLength')}")
    return out


def fit_schema(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """`schema` with its text fields' `maxLength` cut until an answer fits `max_tokens` (`llm.max_tokens` below
    the node's own budget), so that a constrained answer closes its JSON instead of being cut mid-string."""
    schema = json.loads(json.dumps(schema))
    strings = [s for s in schema["properties"].values() if s.get("type") == "string"]
    while strings and token_budget(schema) > max_tokens and any(s["maxLength"] > 8 for s in strings):
        for s in strings:
            s["maxLength"] = max(8, s["maxLength"] * 3 // 4)
    return schema
