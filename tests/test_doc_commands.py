"""Every `shoe2mqtt` command line the README and docs/ show in a code block is one the
parser accepts, and every benchmark they show (`uv run python -m bench.…`) exists and takes
the options shown: a flag renamed or removed fails here, not for the engineer who copies it.

The commands that matter most are also run as a user types them, by the tests of each
command (the demo, emulate beside listen, run beside watch, check-config, journal, replay);
this test is the net under all the others, so that no documented line drifts.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from daemon.cli.main import build_parser

ROOT: Final = Path(__file__).parents[1]
DOCUMENTS: Final = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
# What a person types before the command: a prompt, sudo, or the project's runner.
_COMMAND: Final = re.compile(r"^\s*(?:\$ )?(?:sudo )?(?:uv run )?shoe2mqtt(?P<args>(?: \S.*)?)$")
_FENCE: Final = "```"


def _documented_commands() -> list[tuple[str, str]]:
    """(where, command line) for each line of a fenced block that runs `shoe2mqtt`."""
    found = []
    for document in DOCUMENTS:
        inside = False
        lines = document.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if line.lstrip().startswith(_FENCE):
                inside = not inside
                continue
            match = _COMMAND.match(line) if inside else None
            if match is not None and not _is_output(match["args"]):
                found.append((f"{document.relative_to(ROOT)}:{number}", match["args"]))
    return found


def _is_output(args: str) -> bool:
    """A line of printed output that begins with the program's name (`shoe2mqtt replay: …`,
    `shoe2mqtt sync=full, …`), not a command."""
    first = args.split(maxsplit=1)[0] if args.strip() else ""
    return first.endswith((":", ","))


def _argv(args: str) -> list[str]:
    """The words a shell would pass: a trailing comment, a pipe or a background `&` ends
    the command; `[--table bj-1]` marks an option the reader may leave out (kept, unbracketed)."""
    words = []
    for word in shlex.split(args, comments=True):
        if word in {"|", "&", "&&", ">", "2>&1"}:
            break
        words.append(word.strip("[]"))
    return [w for w in words if w]


COMMANDS: Final = _documented_commands()


def test_the_docs_show_the_commands_this_test_reads() -> None:
    """The extraction itself: it must find the README's and the docs' command lines."""
    commands = [argv for _, argv in COMMANDS]
    assert len(COMMANDS) >= 20, COMMANDS
    assert any(c.startswith(" run --config") for c in commands)
    assert any(c.startswith(" journal verify") for c in commands)
    assert any(c.startswith(" emulate --protocol") for c in commands)


@pytest.mark.parametrize(("where", "args"), COMMANDS, ids=[where for where, _ in COMMANDS])
def test_a_documented_command_is_one_the_parser_accepts(where: str, args: str) -> None:
    argv = _argv(args)
    errors = io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(argv)
        except SystemExit as exit_:  # --version and --help end the parse with 0
            code = exit_.code
    assert code == 0, f"{where}: shoe2mqtt {args.strip()}\n{errors.getvalue()}"


# `uv run python -m bench.e2e.latency --settlements 3000`, `uv run python bench/chaos.py …`,
# in a code block or between backticks in the prose.
_BENCH: Final = re.compile(
    r"uv run python (?P<target>-m bench[\w.]*|bench/[\w/]+\.py)(?P<args>[^`\n]*)"
)


def _documented_benchmarks() -> dict[str, set[str]]:
    """Each benchmark the docs show, with every option they show it with."""
    found: dict[str, set[str]] = {}
    for document in DOCUMENTS:
        for match in _BENCH.finditer(document.read_text(encoding="utf-8")):
            options = found.setdefault(match["target"], set())
            options.update(re.findall(r"(?<![\w-])--[a-z][\w-]*", match["args"]))
    return found


BENCHMARKS: Final = _documented_benchmarks()


def test_the_docs_show_the_benchmarks_this_test_reads() -> None:
    assert "-m bench.e2e.latency" in BENCHMARKS
    assert "bench/chaos.py" in BENCHMARKS


@pytest.mark.parametrize("target", sorted(BENCHMARKS))
def test_a_documented_benchmark_runs_with_the_options_shown(target: str) -> None:
    helped = subprocess.run(  # noqa: S603 - our own benchmark's --help
        [sys.executable, *target.split(), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert helped.returncode == 0, helped.stderr
    missing = {option for option in BENCHMARKS[target] if option not in helped.stdout}
    assert not missing, f"{target} has no {sorted(missing)}:\n{helped.stdout}"
