"""One JSON schema per `llm` node: the prompt's format instruction, the answer's validation, and constrained decoding.

The schemas keep to the subset that every constrained decoder named in docs/configuration.md compiles (vLLM's and
xgrammar's JSON-schema grammars): object, array, string, integer, boolean, null, enum, anyOf, min/max items,
lengths and values. Every answer a schema allows is bounded in characters, and every token is at least one
character, so `token_budget` counts characters: a constrained answer of printable ASCII always closes within it.
The step number is bounded for that (an unbounded integer lets a decoder write digits to the cap). Free text is
bounded by `maxLength` alone: a character outside ASCII, or an escape, can take several tokens, and a `pattern`
holding text to ASCII would cost xgrammar about 130 ms a token at 300 characters (its bounded repetition), against
nothing for `maxLength`; such an answer cut at the cap is a counted fallback.
"""

from __future__ import annotations

import json
from typing import Any

ROOT_CAUSE_CHARS, HINT_CHARS, REASON_CHARS = 300, 400, 200
MAX_STEP = 999  # a reference solution's step or a line of code: three digits at most


def text_schema(max_chars: int) -> dict[str, Any]:
    """Free text of 1 to `max_chars` characters."""
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


def node_schema(node: str, taxonomy: dict[str, str], n_attempts: int) -> dict[str, Any]:
    """The JSON schema of `node`'s answer for a group of `n_attempts` attempts of a task with `taxonomy`."""
    properties = {
        "error_classifier": {"classes": {"type": "array", "items": {"enum": sorted(taxonomy)},
                                         "minItems": n_attempts, "maxItems": n_attempts}},
        "root_cause_analyst": {"root_cause": text_schema(ROOT_CAUSE_CHARS),
                               "first_error_step": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_STEP},
                                                              {"type": "null"}]}},
        "hint_composer": {"hint": text_schema(HINT_CHARS), "tier": {"enum": [1, 2, 3]}},
        # The reason first, so that a model writes why before its verdict (after it, a small one wrote "false").
        # A verdict written as a word, as unconstrained small models do, still means what it says (the leakage checker's _verdict, graphs/mentor/nodes.py).
        "leakage_checker": {"reason": text_schema(REASON_CHARS),
                            "leaked": {"anyOf": [{"type": "boolean"}, {"enum": ["true", "false", "yes", "no"]}]}},
    }[node]
    return {"title": node, "type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def token_budget(schema: dict[str, Any]) -> int:
    """The most tokens an answer of `schema` can take, plus its end-of-sequence token: the most characters it can
    have, written as the constrained decoders write JSON (no free whitespace, `", "` and `": "` between items),
    since every token is at least one character. A realistic answer takes a third of it or less."""
    return 1 + _max_chars(schema)


def _max_chars(schema: dict[str, Any]) -> int:
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if "anyOf" in schema:
        return max(_max_chars(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "object":
        items = [len(json.dumps(k)) + 2 + _max_chars(s) for k, s in schema["properties"].items()]
        return 2 + sum(items) + 2 * max(0, len(items) - 1)
    if kind == "array":
        n = schema["maxItems"]
        return 2 + n * _max_chars(schema["items"]) + 2 * max(0, n - 1)
    if kind == "string":
        return 2 + schema["maxLength"]
    if kind == "integer":
        return max(len(str(schema["minimum"])), len(str(schema["maximum"])))
    return {"boolean": 5, "null": 4}[kind]


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
    elif kind == "integer" and not schema.get("minimum", value) <= value <= schema.get("maximum", value):
        out.append(f"{where} is {value}, needs {schema.get('minimum')}-{schema.get('maximum')}")
    return out


def fit_schema(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """`schema` with its text fields cut (to 8 characters at least) until an answer fits `max_tokens`
    (`llm.max_tokens` below the node's own budget), so that a constrained answer closes its JSON instead of being
    cut mid-string. The request then asks for `token_budget` of the result, which stays above `max_tokens` only
    where the node's fixed keys alone need more."""
    schema = json.loads(json.dumps(schema))
    texts = [k for k, s in schema["properties"].items() if s.get("type") == "string"]
    while texts and token_budget(schema) > max_tokens and any(schema["properties"][k]["maxLength"] > 8 for k in texts):
        for k in texts:
            schema["properties"][k] = text_schema(max(8, schema["properties"][k]["maxLength"] * 3 // 4))
    return schema
