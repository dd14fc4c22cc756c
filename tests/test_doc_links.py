"""Every link the README and docs/ make inside the repository leads somewhere: the file is
there, and a `#section` names one of its headings as GitHub makes their anchors. A heading
renamed (a contract's version in its title) fails here, not for the reader who follows it.

The anchors are made as GitHub's slugger makes them from a heading's text: its inline
markup (code, emphasis, links, entities) rendered away, lower case, every character but
letters, digits, `_`, `-` and spaces dropped, spaces as hyphens, and a repeat given the
first free `-1`, `-2`, ... (Python's `\\w` stands for the slugger's letters and digits:
they part only over a few symbols, such as `²`, that no heading here uses)."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any, Final

import pytest

from tests.test_doc_commands import _FENCE, DOCUMENTS, ROOT  # the same documents

if TYPE_CHECKING:
    from pathlib import Path

# A link's text may run over a wrapped line; its target may carry a title ("...").
_LINK: Final = re.compile(r"\[(?:[^\]\\]|\\.)*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING: Final = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
_CODE: Final = re.compile(r"`[^`\n]*`")


def _prose(text: str) -> str:
    """The document with its fenced code blocks blanked (their lines kept, to count by)."""
    lines, inside = [], False
    for line in text.splitlines():
        fence = line.lstrip().startswith(_FENCE)
        inside ^= fence
        lines.append("" if inside or fence else line)
    return "\n".join(lines)


def _rendered(title: str) -> str:
    """A heading's text as the page shows it: code without its backticks, a link's text,
    emphasis without its markers, entities as their characters."""
    text = re.sub(r"`([^`]*)`", r"\1", title)
    text = re.sub(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])", r"\1", text)
    text = re.sub(r"(?<!\w)([*_]{1,3})(\S(?:.*?\S)?)\1(?!\w)", r"\2", text)
    return html.unescape(text)


def anchors(document: Path) -> set[str]:
    """The anchors GitHub gives the document's headings (see the module's docstring)."""
    taken: dict[str, int] = {}
    for line in _prose(document.read_text(encoding="utf-8")).splitlines():
        heading = _HEADING.match(line)
        if heading is None:
            continue
        base = re.sub(r"[^\w\- ]", "", _rendered(heading["title"]).lower()).replace(" ", "-")
        slug = base
        while slug in taken:
            taken[base] += 1
            slug = f"{base}-{taken[base]}"
        taken[slug] = 0
    return set(taken)


def _found() -> list[tuple[Path, str, str]]:
    """(document, target, where) of each link to something inside the repository."""
    found = []
    for document in DOCUMENTS:
        prose = _prose(document.read_text(encoding="utf-8"))
        blanked = _CODE.sub(lambda code: " " * len(code[0]), prose)  # `[a](b)` shown as code
        for link in _LINK.finditer(blanked):
            target = link["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                continue
            line = prose.count("\n", 0, link.start()) + 1
            found.append((document, target, f"{document.relative_to(ROOT)}:{line}"))
    return found


def _links() -> list[Any]:
    return [pytest.param(doc, target, id=f"{where} {target}") for doc, target, where in _found()]


@pytest.mark.parametrize(("document", "target"), _links())
def test_a_link_in_the_docs_leads_somewhere(document: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    assert linked.exists(), f"{target}: no {path} in the repository"
    if anchor and linked.suffix == ".md":
        assert anchor in anchors(linked), f"{target}: no heading makes #{anchor}"


def test_the_anchors_are_made_as_github_makes_them(tmp_path: Path) -> None:
    document = tmp_path / "a.md"
    document.write_text(
        "# The dealer console's contract (version 3)\n"
        "## `shoe2mqtt run` and [watch](b.md)\n"
        "```\n# not a heading\n```\n"
        "## Changes\n### Changes\n## Changes-1\n"
        "## What _one_ card costs &amp; **why**\n"
        "## keep_days and snake_case\n",
        encoding="utf-8",
    )
    assert anchors(document) == {
        "the-dealer-consoles-contract-version-3",
        "shoe2mqtt-run-and-watch",
        "changes",
        "changes-1",
        "changes-1-1",
        "what-one-card-costs--why",
        "keep_days-and-snake_case",
    }


def test_a_link_wrapped_over_two_lines_is_found_and_one_shown_as_code_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = tmp_path / "a.md"
    document.write_text(
        "See [one message an\ninput](#nowhere) and `[shown](as-code.md)`.\n"
        '```\n[in a block](no.md)\n```\n[titled](a.md "a title")\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.DOCUMENTS", (document,))
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert _found() == [(document, "#nowhere", "a.md:1"), (document, "a.md", "a.md:6")]
