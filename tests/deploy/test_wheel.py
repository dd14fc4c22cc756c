"""The wheel ships the application and nothing of its test harness.

daemon/testing (a real mosquitto, openssl certificates with a fixed passphrase, socat, the
daemon as a process) is what this repository's tests and benchmarks share; it stays in the
checkout (pyproject.toml excludes it from the wheel), and no module the wheel ships imports
it, or an installed command would fail on an import its table PC cannot satisfy.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import zipfile
from typing import TYPE_CHECKING

import pytest

from tests.deploy.layout import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator

HARNESS = "daemon/testing/"


def _uv() -> str:
    """uv as scripts/test leaves it: on the PATH, or bootstrapped into .cache."""
    found = shutil.which("uv") or shutil.which("uv", path=str(REPO / ".cache/bootstrap/bin"))
    assert found is not None, "uv is neither on the PATH nor in .cache/bootstrap/bin"
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(  # noqa: S603 - uv building this checkout's wheel into a temporary directory
        [_uv(), "build", "--wheel", "--quiet", "--out-dir", str(out), str(REPO)],
        capture_output=True, text=True, timeout=300, check=True, cwd=REPO,
    )  # fmt: skip
    [built] = out.glob("shoe2mqtt-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def test_the_wheel_has_no_test_harness(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert [name for name in names if name.startswith(HARNESS)] == []
    assert [name for name in names if name.startswith(("tests/", "bench/"))] == []
    # and still the application: each package, its commands, its type information
    assert {
        "daemon/cli/main.py",
        "daemon/cli/demo.py",
        "daemon/simulator/console.py",  # the demo plays its tables with it
        "daemon/py.typed",
        "drivers/codecs/reference.py",
        "drivers/codecs/enq.py",
        "rules/config.py",
    } <= set(names)


def test_no_module_the_wheel_ships_imports_the_harness(wheel: zipfile.ZipFile) -> None:
    importing = [
        name
        for name in wheel.namelist()
        if name.endswith(".py") and _imports_harness(wheel.read(name).decode(), name)
    ]
    assert importing == []


def _imports_harness(source: str, name: str) -> bool:
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(m == "daemon.testing" or m.startswith("daemon.testing.") for m in modules):
            return True
    return False


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ("from daemon.testing import Mosquitto\n", True),
        ("def f():\n    import daemon.testing.broker\n", True),
        ("from daemon import testing\n", True),
        ("from daemon.cli import demo\nimport daemon.testbed\n", False),
    ],
)
def test_every_way_of_importing_the_harness_is_seen(source: str, *, imports: bool) -> None:
    assert _imports_harness(source, "module.py") is imports


def test_the_suite_imports_the_harness_from_the_checkout() -> None:
    """The editable install of the checkout still has it, for the tests and benchmarks."""
    import daemon.testing

    assert daemon.testing.__file__ is not None
    assert (REPO / HARNESS / "__init__.py").samefile(daemon.testing.__file__)
