"""docs/rules.md maps every regulation subsection to its tests; this keeps the map honest."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
ROW = re.compile(r"^\| (?P<subsection>\d+\.\d+\([a-z]\)[0-9a-z.]*) \|.*\| (?P<tests>[^|]*) \|$")

# Every subsection of the three binding texts, and the two they lean on.
SUBSECTIONS = [
    *(f"2.24({letter})" for letter in "abcdefghi"),
    "2.24(e)1.i",
    "2.24(e)1.ii",
    "2.24(e)2",
    "2.24(g)1",
    "2.24(g)2",
    "2.24(g)3",
    "2.2(a)2",
    "2.6(j)",
    *(f"26.6({letter})" for letter in "abcde"),
    "26.6(b)1",
    "26.6(b)2",
    "26.6(d)1",
    "26.6(d)2",
    "26.6(d)3",
    "26.6(d)3i",
    "26.6(d)3ii",
    *(f"36.5({letter})" for letter in "abcdefghij"),
]


def _doc_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in (ROOT / "docs" / "rules.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows[match["subsection"]] = re.findall(r"`(test_[0-9a-z_]+)`", match["tests"])
    return rows


def _test_names() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")
        )
    return names


def test_every_subsection_has_a_row_with_tests() -> None:
    rows = _doc_rows()
    missing = [s for s in SUBSECTIONS if not rows.get(s)]
    assert missing == [], f"docs/rules.md has no row (or no test) for {missing}"


def test_every_test_prefix_in_the_doc_matches_a_test() -> None:
    names = _test_names()
    unmatched = [
        (subsection, prefix)
        for subsection, prefixes in _doc_rows().items()
        for prefix in prefixes
        if not any(name.startswith(prefix) for name in names)
    ]
    assert unmatched == [], f"docs/rules.md names tests that do not exist: {unmatched}"
