"""Every link in the README and in docs/ resolves inside the repository: the file exists, and a
#heading names a heading of that file. The documentation never points outside the checkout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    return _LINK.findall(_CODE.sub("", _FENCE.sub("", text)))


def slugs(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", _FENCE.sub("", page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readme_and_docs_have_pages_and_links() -> None:
    assert (ROOT / "docs" / "dare-format.md") in PAGES
    assert len(links((ROOT / "README.md").read_text(encoding="utf-8"))) >= 10


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 300


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(page: Path) -> None:
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            broken.append(f"{target}: points outside the repository")
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.is_relative_to(ROOT) or not dest.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and (dest.suffix != ".md" or anchor not in slugs(dest)):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert broken == []


def test_the_link_check_catches_a_broken_link(tmp_path) -> None:
    assert links("see [a](docs/a.md) and `[b](not/a/link.md)`\n```\n[c](neither.md)\n```\n") == ["docs/a.md"]
    page = tmp_path / "p.md"
    page.write_text("# The CLI, in short\n")
    assert slugs(page) == {"the-cli-in-short"}
