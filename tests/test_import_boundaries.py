"""The folders are the architecture, and imports point one way: daemon → drivers, rules.

`rules/` is the regulations and nothing else: it imports the standard library only, so it
can be read, tested and audited without the rest. `drivers/` knows shoes and bytes, never
the rules or the service. Every import statement is read (top level, inside functions and
under TYPE_CHECKING alike), because a lazy import crosses a boundary just as well.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_packages(path: Path) -> set[str]:
    """The top-level package of every module `path` imports (relative imports are its own)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def crossings(package: str, allowed: set[str]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in sorted(imported_packages(path) - allowed)
    ]


STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def test_rules_import_only_the_standard_library() -> None:
    assert crossings("rules", STDLIB | {"rules"}) == []


def test_drivers_import_neither_the_daemon_nor_the_rules() -> None:
    third_party = {"serial", "serial_asyncio_fast", "usb", "structlog"}
    assert crossings("drivers", STDLIB | third_party | {"drivers"}) == []


def test_benchmarks_share_with_the_tests_only_what_daemon_testing_offers() -> None:
    """bench/ runs from a checkout as scripts; what it shares with the suite is the
    development-only harness (daemon.testing), never a test module."""
    importing = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "bench").rglob("*.py"))
        if "tests" in imported_packages(path)
    ]
    assert importing == []


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, by its full name (`from a.b import c` names `a.b`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


# The journal is storage: what came in, durable, and what a start needs to read back. It
# knows neither the table that applies its records (daemon.table.runner) nor the broker,
# the wire contract or the rules, so it can be read, tested and replaced without them.
JOURNAL_MAY_IMPORT = ("daemon.journal", "daemon.system")


def test_the_journal_imports_nothing_of_the_application() -> None:
    third_party = {"structlog"}
    reaching = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "daemon" / "journal").rglob("*.py"))
        for name in sorted(imported_modules(path))
        if name.split(".")[0] not in STDLIB | third_party
        and not any(
            name == allowed or name.startswith(f"{allowed}.") for allowed in JOURNAL_MAY_IMPORT
        )
    ]
    assert reaching == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import json\nfrom rules.cards import Card\n", {"json", "rules"}),
        ("def f():\n    import daemon.journal\n", {"daemon"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import aiomqtt\n",
         {"typing", "aiomqtt"}),
        ("from . import sibling\nfrom .codecs import base\n", set()),
    ],
)  # fmt: skip
def test_every_kind_of_import_statement_is_seen(
    tmp_path: Path, source: str, expected: set[str]
) -> None:
    module = tmp_path / "module.py"
    module.write_text(source, encoding="utf-8")
    assert imported_packages(module) == expected


def test_a_crossing_is_named_with_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.py").write_text("import aiomqtt\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert crossings("rules", STDLIB | {"rules"}) == ["rules/bad.py imports aiomqtt"]
