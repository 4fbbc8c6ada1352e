"""The README's links work in a fresh clone: every relative link names a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")
CODE_PATH = re.compile(r"`(\.\./[^`\s]+)`")


def test_every_relative_link_in_the_docs_resolves_inside_the_clone() -> None:
    """A link to ../shared/... (outside the repository) or to a missing file is a dead link."""
    dead = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        targets = [m.group(1).split("#")[0] for m in LINK.finditer(text)]
        targets += [m.group(1) for m in CODE_PATH.finditer(text)]
        for target in filter(None, targets):
            path = (doc.parent / target).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                dead.append(f"{doc.relative_to(ROOT)}: {target}")
    assert dead == []
