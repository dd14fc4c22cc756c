"""The `shoe2mqtt` command as a user types it: the installed script, run as a process."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).parents[2]
SHOE2MQTT = Path(sys.executable).parent / "shoe2mqtt"  # the script pyproject.toml installs


def shoe2mqtt(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the project's own script, fixed arguments
        [SHOE2MQTT, *words], capture_output=True, text=True, timeout=60, check=False
    )


def test_version_prints_the_version_the_package_was_built_with() -> None:
    with (REPO / "pyproject.toml").open("rb") as pyproject:
        expected = tomllib.load(pyproject)["project"]["version"]
    result = shoe2mqtt("--version")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"shoe2mqtt {expected}\n"


def test_the_demo_command_plays_the_rounds_asked_for_and_says_so() -> None:
    """README: `./scripts/demo --rounds 5`, which runs `shoe2mqtt demo`; here one quick round."""
    result = shoe2mqtt("demo", "--rounds", "1", "--step-delay", "0", "--seed", "3", "--no-view")
    assert result.returncode == 0, result.stderr
    # JSON Lines and nothing else: each settlement whole on its own line, as published, so
    # `| jq` reads every line; what the demo says of itself is on standard error.
    settlements = [json.loads(line) for line in result.stdout.splitlines()]
    assert settlements
    assert {s["type"] for s in settlements} == {"settlement"}
    assert re.search(r"^pit display: http://127\.0\.0\.1:\d+/ ", result.stderr, re.MULTILINE)
    summary = result.stderr[result.stderr.index("demo finished: ") :].splitlines()[0]
    assert all(f"{table}: 1 round," in summary for table in ("bj-1", "da-1", "ta-1"))


def _sixty_rounds(tmp_path: Path) -> Path:
    """Sixty rounds of an example, each from a new shoe: more output than a pipe holds."""
    header, *events = (REPO / "examples/triple-attack-dealer-22.jsonl").read_text().splitlines()
    path = tmp_path / "sixty-rounds.jsonl"
    path.write_text("\n".join([header, *events * 60]) + "\n", encoding="utf-8")
    return path


def test_output_piped_into_head_ends_quietly(tmp_path: Path) -> None:
    """`shoe2mqtt replay … | head -c 1`: the reader leaving is not an error of ours (it was a
    traceback in every command that prints, and here a replay blaming its input file for
    the closed pipe). Sixty rounds print more than a pipe holds, so it writes on after
    `head` has gone."""
    typed = shlex.join([str(SHOE2MQTT), "replay", "--all", str(_sixty_rounds(tmp_path))])
    result = subprocess.run(  # noqa: S603 - our own command in a shell pipeline, as typed
        ["/bin/bash", "-c", f"set -o pipefail; {typed} | head -c 1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert len(result.stdout) == 1
