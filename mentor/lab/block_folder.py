"""A blocked run's output folder (docs/lab.md, "The machinery, round 5"): the code version each block records, the
checks before its blocks are reused, and the lock that keeps a second run out of it.

- `code_version`: one content hash per part of the code that makes a block's result: `lab` (mentor/lab, with the
  committed policies), `hook` (mentor/trl), `graphs` and `prompts` (the shipped ones, wherever installed) and `core`
  (the rest of the package, but for `PRESENTATION`). Content, not a git commit: a wheel has no commit, and a commit
  changes with every edit to the docs while saying nothing of what changed.
- `check_folder`: a block file written under other settings is refused (a rerun must not overwrite it); one made by
  other code, or with no recorded version (written before blocks recorded it), is refused unless `allow_stale`,
  which warns and lists them. One made in another environment (mentor.lab.environment: other package versions or
  CPU kernels) is reused with a warning naming what differs: its arms ran side by side, so its paired differences
  stand, but a rerun here would not give its figures to the decimal.
- `folder_lock`: an exclusive flock on `<out>/.lock` for the whole run, released (and its file removed) however the
  run ends; the kernel drops it with the process, so a killed run leaves no stale lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mentor.lab.environment import differences
from mentor.types import InputError

PACKAGE = Path(__file__).resolve().parent.parent
PARTS = {"lab": "lab", "hook": "trl"}  # parts that are one folder of the package
PRESENTATION = ("cli", "traces/viewer", "traces/assets")  # argument dispatch and the trace viewer: show results only
SOURCE_SUFFIXES = (".py", ".json", ".md", ".jinja", ".safetensors")  # what the wheel ships that a run reads
LOCK_NAME = ".lock"


def tree_hash(root: Path, skip: list[Path]) -> str:
    """One hash over the source files under `root` but `skip`: each one's path relative to `root` and its content."""
    digest = hashlib.sha256()
    files = (p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts)
    for path in sorted(p for p in files if p.is_file() and not any(p.is_relative_to(s) for s in skip)):
        digest.update(f"{path.relative_to(root).as_posix()}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n"
                      .encode())
    return digest.hexdigest()[:16]


def code_version(package: Path = PACKAGE) -> dict[str, str]:
    """Each part's hash (module docstring). The graphs and prompts are the package's own folders where a wheel
    installs them, else the ones it loads (a checkout's top-level folders)."""
    from mentor.shipped import shipped_folder

    shipped = {name: package / name if (package / name).is_dir() else Path(shipped_folder(name))
               for name in ("graphs", "prompts")}
    parts = {name: tree_hash(package / folder, []) for name, folder in PARTS.items()}
    parts["core"] = tree_hash(package, [package / f for f in (*PARTS.values(), *PRESENTATION, *shipped)])
    return {**parts, **{name: tree_hash(folder, []) for name, folder in shipped.items()}}


def stale_parts(block: dict[str, Any], code: dict[str, str]) -> list[str] | None:
    """The parts whose hash differs from the block's (empty: made by this code); None: the block recorded none."""
    made_by = block.get("code")
    if not isinstance(made_by, dict):
        return None
    return [part for part, digest in code.items() if made_by.get(part) != digest]


def _names(found: dict[str, str]) -> str:
    """Block names grouped by why they were found: `p0-g0, p0-g1 (why); p1-g0 (why)`."""
    by_why: dict[str, list[str]] = {}
    for name, why in sorted(found.items()):
        by_why.setdefault(why, []).append(name)
    return "; ".join(f"{', '.join(names)} ({why})" for why, names in by_why.items())


def check_folder(out_dir: Path, key: str, code: dict[str, str], environment: dict[str, str],
                 allow_stale: bool) -> None:
    """Refuses the run (InputError) if `<out>/blocks` holds a block file of other settings than `key`, or one made
    by other code than `code` unless `allow_stale`, which warns and lists them; warns of the ones that recorded
    another `environment`. A file that is not a finished block is left to `finished_block`, which runs it again."""
    other_settings, stale, elsewhere = {}, {}, {}
    for path in sorted((out_dir / "blocks").glob("*.json")):
        try:
            block = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:  # JSONDecodeError, UnicodeDecodeError: cut short
            continue
        if not isinstance(block, dict):
            continue
        if block.get("settings_key") != key:
            other_settings[path.stem] = f"settings {block.get('settings_key')}"
            continue
        parts = stale_parts(block, code)
        if parts is None or parts:
            stale[path.stem] = "no recorded code version" if parts is None else f"changed: {', '.join(parts)}"
        made_on = block.get("environment")
        if isinstance(made_on, dict) and differences(made_on, environment):
            elsewhere[path.stem] = "; ".join(differences(made_on, environment))
    folder = out_dir / "blocks"
    if other_settings:
        raise InputError(f"{len(other_settings)} block file(s) in {folder} were written under other settings than "
                         f"this run's ({key}): {_names(other_settings)}; this run would overwrite them. Give another "
                         "--out, or delete those files to run them again under these settings")
    if elsewhere:
        print(f"warning: {len(elsewhere)} block(s) in {folder} ran in another environment than this run's, and are "
              f"reused: {_names(elsewhere)}. Each block's arms ran side by side, so its paired differences stand; "
              "a rerun here would not give its figures to the decimal", file=sys.stderr, flush=True)
    if not stale:
        return
    if not allow_stale:
        raise InputError(f"{folder} holds {len(stale)} block file(s) made by other code than this run's: "
                         f"{_names(stale)}. Reusing them would mix results of two versions of the code. Pass "
                         "--allow-stale-blocks to reuse them anyway (with a warning listing them), or give another "
                         "--out (or delete them) to run them again with this code")
    print(f"warning: reusing {len(stale)} block(s) made by other code than this run's in {folder}, as "
          f"--allow-stale-blocks asks: {_names(stale)}", file=sys.stderr, flush=True)


@contextmanager
def folder_lock(out_dir: Path):
    """Holds `<out>/.lock` exclusively for the run, or refuses it (InputError) if another run holds it."""
    path = out_dir / LOCK_NAME
    while True:
        f = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip()
            f.close()
            raise InputError(f"another run is writing to {out_dir}" + (f" (pid {holder})" if holder else "")
                             + f": wait for it to finish, or give another --out (its lock: {path})") from None
        try:  # the file we locked is still the lock (the holder removes it as it ends): else lock the new one
            if os.stat(path).st_ino == os.fstat(f.fileno()).st_ino:
                break
        except FileNotFoundError:
            pass
        f.close()
    try:
        f.truncate(0)
        f.write(str(os.getpid()))
        f.flush()
        yield
    finally:
        path.unlink(missing_ok=True)  # before the unlock: a run that opened it meanwhile sees it gone and retries
        f.close()
