"""No import cycle among the project's modules, and the display and the commands stay out of
the table's internals (docs/architecture.md, "Layers").

A cycle is read from every import statement but those under `TYPE_CHECKING` (annotations
only: nothing runs them), lazy ones inside functions included: a cycle hidden in a function
is still two modules that cannot be understood one without the other. `from package import
module` imports the module, not the package's `__init__`.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("daemon", "drivers", "rules")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path) -> dict[str, Path]:
    return {
        module_name(path, root): path
        for package in PACKAGES
        for path in sorted((root / package).rglob("*.py"))
    }


def _runtime_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs: not those in an `if TYPE_CHECKING:` block."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules `name` (at `path`) imports when it runs."""
    wanted: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            wanted.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, *([node.module] if node.module else [])])
        submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
        wanted.update(submodules or {base})
        if len(submodules) < len(node.names):
            wanted.add(base)
    found: set[str] = set()
    for imported in wanted:
        module = imported
        while module and module not in modules:
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = project_modules(root)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@functools.cache
def project_graph() -> dict[str, set[str]]:
    return import_graph(ROOT)


def test_no_module_of_the_project_imports_itself_through_others() -> None:
    assert cycles(project_graph()) == []


# What the pit display may use of the daemon: the wire contract, the MQTT client and its
# settings, the configuration file's reader and its one problem collector (with what the
# display's section shares with the console's), the host's plumbing, the web server's parts
# it shares with the dealer console. Never the table, the journal or the service: it is a
# subscriber like any other.
DISPLAY_MAY_IMPORT = (
    "daemon.display",
    "daemon.web",
    "daemon.wire",
    "daemon.mqtt",
    "daemon.configuration.file",
    "daemon.configuration.problems",
    "daemon.configuration.served_page",
    "daemon.system",
    "daemon.version",
)
# The commands build the daemon from its composition root (daemon.service) and read the
# journal, but never reach into a table's or a part's internals.
COMMANDS_MAY_NOT_IMPORT = ("daemon.table.", "daemon.parts.")


def test_the_display_uses_only_the_wire_contract_and_the_broker() -> None:
    graph = project_graph()
    reaching = {
        f"{name} imports {other}"
        for name, imported in graph.items()
        if name.startswith("daemon.display")
        for other in imported
        if other.startswith("daemon")
        and other != "daemon"
        and not other.startswith(DISPLAY_MAY_IMPORT)
    }
    assert sorted(reaching) == []


def test_the_web_parts_the_display_and_the_console_share_import_neither() -> None:
    """daemon/web/ is below both: it imports nothing of the daemon but its own modules."""
    reaching = {
        f"{name} imports {other}"
        for name, imported in project_graph().items()
        if name.startswith("daemon.web")
        for other in imported
        if other.startswith("daemon") and not other.startswith("daemon.web")
    }
    assert sorted(reaching) == []


def test_the_commands_stay_out_of_the_tables_and_the_daemons_parts() -> None:
    reaching = {
        f"{name} imports {other}"
        for name, imported in project_graph().items()
        if name.startswith("daemon.cli")
        for other in imported
        if other.startswith(COMMANDS_MAY_NOT_IMPORT)
    }
    assert sorted(reaching) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"a.py": "import rules.b\n", "b.py": "from rules import a\n"}, [["rules.a", "rules.b"]]),
        ({"a.py": "def f():\n    from rules.b import x\n", "b.py": "import rules.a\n"},
         [["rules.a", "rules.b"]]),
        ({"a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import rules.b\n",
          "b.py": "import rules.a\n"}, []),
        ({"__init__.py": "from rules.a import x\n", "a.py": "from rules import b\n",
          "b.py": "X = 1\n"}, []),
        ({"a.py": "from . import b\n", "b.py": "from .a import x\n"}, [["rules.a", "rules.b"]]),
    ],
)  # fmt: skip
def test_a_cycle_is_found_however_it_is_written(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    (tmp_path / "rules").mkdir()
    for name, text in files.items():
        (tmp_path / "rules" / name).write_text(text, encoding="utf-8")
    assert cycles(import_graph(tmp_path)) == expected
