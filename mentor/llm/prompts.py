"""The prompt files of `llm` nodes: finding a node's prompt, and checking every file of a prompts folder when a
runtime loads, so that a typo in a placeholder is an error naming the file rather than a quiet fallback to `rules`."""

from __future__ import annotations

import string
import warnings
from functools import lru_cache
from pathlib import Path

from langchain_core.prompts import ChatPromptTemplate

from mentor.types import InputError

# The `{name}` values every node prompt may use: mentor.runtime.nodes.prompt_variables gives them all, and the
# request adds `json_schema` (prompts/README.md says what each holds).
PROMPT_FIELDS = ("task", "problem", "reference", "attempts", "taxonomy", "diagnosis", "tier", "previous_hints",
                 "feedback", "hint", "json_schema")


def prompt_paths(prompts_dir: str | Path, task: str, node: str) -> tuple[Path, Path]:
    """Where `node`'s prompt may be, the task's own first: `<prompts_dir>/<task>/<node>.md`, `<prompts_dir>/<node>.md`."""
    return Path(prompts_dir) / task / f"{node}.md", Path(prompts_dir) / f"{node}.md"


def load_prompt(prompts_dir: str, task: str, node: str) -> ChatPromptTemplate:
    """The prompt of `node`: `<prompts_dir>/<task>/<node>.md` if present, else `<prompts_dir>/<node>.md`. Read at
    each call, so an edit made while the process runs (a notebook) is what the next call sends."""
    for path in prompt_paths(prompts_dir, task, node):
        if path.exists():
            return prompt_template(read_prompt(path))
    raise InputError(f"no prompt for node '{node}' in '{prompts_dir}': add {node}.md there, or set prompts_dir")


@lru_cache(maxsize=64)
def prompt_template(text: str) -> ChatPromptTemplate:
    """The chat template of a prompt file's text, parsed once per text."""
    return ChatPromptTemplate.from_messages([("human", text)])


def prompt_files(prompts_dir: str | Path, nodes: list[str]) -> list[Path]:
    """The prompt files of `nodes` in a prompts folder: `<node>.md` and every task's `<task>/<node>.md`, sorted."""
    folder = Path(prompts_dir)
    names = {f"{node}.md" for node in nodes}
    files = [p for p in folder.glob("*.md") if p.name in names]
    files += [p for p in folder.glob("*/*.md") if p.name in names]
    return sorted(files)


def read_prompt(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"prompt file {path} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None


def placeholders(path: Path, text: str) -> list[str]:
    """The `{name}` placeholders of a prompt file's text; InputError, naming the file, if it is not a valid
    `str.format` template (an unclosed `{`, a lone `}`)."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError as e:
        raise InputError(f"prompt file {path} is not a valid template ({e}); write a literal brace as {{{{ or }}}}, "
                         f"and placeholders as {{name}}") from None
    return [field.split(".")[0].split("[")[0] for field in fields]


def check_prompts(prompts_dir: str, backends: dict[str, str]) -> list[Path]:
    """Checks the prompt files of the nodes in `backends` (node -> `rules` or `llm`); returns them.

    Refuses (InputError) a file with a placeholder no node supplies, naming the file, the placeholder and the
    fields that exist; a folder that is not one, or an `llm` node with no prompt in it."""
    folder = Path(prompts_dir)
    if not folder.is_dir():
        raise InputError(f"prompts_dir: {prompts_dir} is not a folder; give the folder that holds <node>.md files, "
                         f"or drop the key for the installed prompts")
    files = prompt_files(folder, list(backends))
    for path in files:
        unknown = sorted({f for f in placeholders(path, read_prompt(path)) if f not in PROMPT_FIELDS})
        if unknown:
            raise InputError(f"prompt file {path}: unknown placeholder(s) {', '.join('{' + f + '}' for f in unknown)}"
                             f"; the fields are {', '.join('{' + f + '}' for f in PROMPT_FIELDS)} (write a literal "
                             f"brace as {{{{ or }}}})")
    for node, backend in backends.items():
        if backend == "llm" and not any(p.name == f"{node}.md" for p in files):
            raise InputError(f"nodes.{node}: llm, but prompts_dir {prompts_dir} has no {node}.md (nor any "
                             f"<task>/{node}.md); add one, or copy the installed prompts with `mentor graph copy`")
    return files


def prompt_texts(folder: Path) -> dict[str, bytes]:
    """Each prompt file under `folder` (its `.md` files, in task folders too), by path relative to it."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*.md")}


def warn_unread_prompts(prompts_dir: str, default_dir: str, backends: dict[str, str]) -> None:
    """Warns when a prompts_dir whose files differ from the default's (edited prompts) is set while every node runs
    `rules`, which reads none. An unedited copy (`mentor graph copy`'s own) is not warned about."""
    folder, default = Path(prompts_dir), Path(default_dir)
    if "llm" in backends.values() or folder.resolve() == default.resolve():
        return
    if prompt_texts(folder) != prompt_texts(default):
        warnings.warn(f"prompts_dir: {prompts_dir} holds edited prompts, but every node runs `rules`, and only `llm` "
                      f"nodes read prompts, so its files change nothing. Set `nodes: {{hint_composer: llm}}` (and "
                      f"`llm:`) for the nodes whose prompts you edit", UserWarning, stacklevel=3)
