"""Every relative link in README.md and docs/ resolves: the file exists and, where the link names an anchor, a heading
of that file has it (GitHub's anchors: the heading's text, lower-cased, without punctuation, spaces as hyphens, a
repeated one numbered). A moved section breaks a link silently on GitHub; this says which."""

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"\n]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, where a bracket is code, not a link."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors by its text
    text = "".join(c for c in text.lower() if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(page.read_text()):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading[1])
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links() -> list[str]:
    broken = []
    for page in PAGES:
        for line in prose_lines(page.read_text()):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                file = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(ROOT)}: ({target})"
                if not file.exists():
                    broken.append(f"{where}: no file {path}")
                elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                    broken.append(f"{where}: no heading with anchor #{anchor} in {file.relative_to(ROOT)}")
    return broken


def test_slug_follows_github():
    assert slug("`mentor demo`: three arms, measured") == "mentor-demo-three-arms-measured"
    assert slug("### `hint_choice: learning` is refused".lstrip("# ")) == "hint_choice-learning-is-refused"
    assert slug("Trained: 3 arms × 3 seeds") == "trained-3-arms--3-seeds"
    assert slug("The 1.5B mentor (`make setup-qwen-1.5b`)") == "the-15b-mentor-make-setup-qwen-15b"


def test_repeated_headings_are_numbered(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Tests\n\n```\n# not a heading\n```\n\n## Tests\n\n### Tests\n")
    assert anchors(page) == {"tests", "tests-1", "tests-2"}


def test_every_relative_link_in_the_docs_resolves():
    assert len(PAGES) > 10, PAGES
    assert broken_links() == []
