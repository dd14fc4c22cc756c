"""Every link the README and docs/ make inside the repository leads somewhere: the file is
there, and a `#section` names one of its headings as GitHub makes their anchors. A heading
renamed (a contract's version in its title) fails here, not for the reader who follows it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).parents[1]
DOCUMENTS: Final = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_LINK: Final = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_HEADING: Final = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
_FENCE: Final = "```"


def _prose(text: str) -> list[tuple[int, str]]:
    """The document's lines outside fenced code blocks, with their numbers."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(_FENCE):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def anchors(document: Path) -> set[str]:
    """The anchors GitHub gives the document's headings: lower case, inline markup and
    punctuation dropped (word characters, hyphens and spaces kept), spaces as hyphens, and a
    repeated heading numbered (`-1`, `-2`)."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose(document.read_text(encoding="utf-8")):
        heading = _HEADING.match(line)
        if heading is None:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading["title"])  # a link's text
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _links() -> list[tuple[str, Path, str]]:
    """(where, document, target) of each link to something inside the repository."""
    found = []
    for document in DOCUMENTS:
        for number, line in _prose(document.read_text(encoding="utf-8")):
            for link in _LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = link["target"]
                if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    found.append((f"{document.relative_to(ROOT)}:{number}", document, target))
    return found


@pytest.mark.parametrize(("where", "document", "target"), _links(), ids=str)
def test_a_link_in_the_docs_leads_somewhere(where: str, document: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    assert linked.exists(), f"{where}: {target}: no {path} in the repository"
    if anchor and linked.suffix == ".md":
        assert anchor in anchors(linked), f"{where}: {target}: no heading makes #{anchor}"


def test_the_anchors_are_made_as_github_makes_them(tmp_path: Path) -> None:
    document = tmp_path / "a.md"
    document.write_text(
        "# The dealer console's contract (version 3)\n"
        "## `shoe2mqtt run` and [watch](b.md)\n"
        "```\n# not a heading\n```\n"
        "## Changes\n### Changes\n",
        encoding="utf-8",
    )
    assert anchors(document) == {
        "the-dealer-consoles-contract-version-3",
        "shoe2mqtt-run-and-watch",
        "changes",
        "changes-1",
    }
