"""The README's links work in a fresh clone: every relative link names a file of the repository,
and every ``#anchor`` names a heading of the page it points to."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)\s]+)\)")
CODE_PATH = re.compile(r"`(\.\./[^`\s]+)`")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings: lower case, punctuation dropped, spaces
    to hyphens (code blocks hold no headings)."""
    text = FENCED.sub("", page.read_text(encoding="utf-8"))
    slugs = set()
    for title in HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        slugs.add(slug)
    return slugs


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


def test_every_anchor_in_the_docs_names_a_heading_of_its_page() -> None:
    """`[x](finance.md#commands)` and `[x](#tests)` lead to a heading, not to the top of a page."""
    dead = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            file, _, anchor = target.partition("#")
            page = (doc.parent / file).resolve() if file else doc
            if anchor and page.suffix == ".md" and page.exists() and anchor not in anchors(page):
                dead.append(f"{doc.relative_to(ROOT)}: {target}")
    assert dead == []


def layout_paths(readme: str) -> list[str]:
    """The paths the README's Layout section lists, each the first word of an indented line."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^    (\S+)", section, re.MULTILINE)


def test_the_readme_layout_lists_every_package_of_recon_and_only_real_paths() -> None:
    """The Layout section matches the tree: each listed path exists, each package is listed."""
    listed = layout_paths((ROOT / "README.md").read_text(encoding="utf-8"))
    missing = [path for path in listed if not any(ROOT.glob(path.rstrip("/")))]
    packages = sorted(
        f"recon/{init.parent.name}/" for init in (ROOT / "recon").glob("*/__init__.py")
    )
    assert missing == []
    assert [package for package in packages if package not in listed] == []
