"""No function runs over sixty lines unless it reads better whole, and then it says why.

A long function is usually several steps that want names of their own; the few that are one
story told in order (a benchmark script, one parser's options) are listed below, each with
the sentence that keeps it whole. Every function and method is measured, nested ones too,
from its `def` (decorators excluded) to its last line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("daemon", "drivers", "rules", "tests", "bench", "scripts")
MAX_LINES = 60

# "path::qualified name" → why it reads better whole than split.
LONG_BUT_WHOLE: dict[str, str] = {}


def long_functions(path: Path, root: Path) -> list[tuple[str, int]]:
    """Every function in `path` longer than `MAX_LINES`, as ("path::qualified name", lines)."""
    relative = path.relative_to(root).as_posix()
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > MAX_LINES:
                    found.append((f"{relative}::{name}", lines))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "")
    return found


def sources(root: Path) -> list[Path]:
    return [
        path
        for folder in FOLDERS
        for path in sorted((root / folder).rglob("*.py"))
        if not {".venv", ".cache"} & set(path.relative_to(root).parts)
    ]


def test_no_function_is_over_sixty_lines_unless_it_says_why() -> None:
    too_long = [
        f"{name}: {lines} lines"
        for path in sources(ROOT)
        for name, lines in long_functions(path, ROOT)
        if name not in LONG_BUT_WHOLE
    ]
    assert not too_long, "split these, or say in LONG_BUT_WHOLE why each reads better whole:\n" + (
        "\n".join(too_long)
    )


def test_every_function_kept_whole_is_still_long() -> None:
    """An entry outlives its function once the function is split or gone: it goes too."""
    long_now = {name for path in sources(ROOT) for name, _ in long_functions(path, ROOT)}
    assert sorted(LONG_BUT_WHOLE.keys() - long_now) == []


def test_every_function_kept_whole_says_why() -> None:
    short = [name for name, reason in LONG_BUT_WHOLE.items() if len(reason.split()) < 5]
    assert short == []  # a sentence each, not a word


def test_methods_and_nested_functions_are_measured_by_their_qualified_name(
    tmp_path: Path,
) -> None:
    body = "".join(f"        x{n} = {n}\n" for n in range(MAX_LINES))
    (tmp_path / "daemon").mkdir()
    source = tmp_path / "daemon" / "long.py"
    source.write_text(
        f"class A:\n    def long(self):\n{body}\n"
        f"def outer():\n    def inner():\n{body}\n"
        "def short():\n    pass\n",
        encoding="utf-8",
    )
    assert long_functions(source, tmp_path) == [
        ("daemon/long.py::A.long", MAX_LINES + 1),
        ("daemon/long.py::outer", MAX_LINES + 2),
        ("daemon/long.py::outer.inner", MAX_LINES + 1),
    ]
