"""The goals command and the link bench as a user types them, briefly: each prints its lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(tmp_path: Path, *arguments: str) -> str:
    done = subprocess.run(  # noqa: S603 - our own module
        [sys.executable, "-m", *arguments], capture_output=True, text=True, timeout=80,
        check=False, env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []  # the workspace is gone
    return done.stdout


def test_goals_print_one_line_each_with_its_verdict(tmp_path: Path) -> None:
    out = _run(
        tmp_path, "bench.e2e.goals", "--goals", "1", "3", "--shoes", "2", "--pace", "4",
        "--seconds", "3", "--tcp",
    )  # fmt: skip
    lines = [line for line in out.splitlines() if line.startswith("goal ")]
    assert [line.split()[1] for line in lines] == ["1", "3"], out
    assert 'goal 1  sync = "full": card->settlement p99' in lines[0]
    assert "durable relay (fdatasync)" in lines[0]
    assert "goal 3  CPU per card at 8 cards/s: daemon" in lines[1]
    # PASS, MISS by n x, or MISS (overload): a daemon that fell behind on a loaded machine.
    assert all(line.endswith(("PASS", "x", "MISS (overload)")) for line in lines), lines


def test_the_link_bench_compares_two_links(tmp_path: Path) -> None:
    link = str(Path(__file__).parents[2] / "daemon" / "mqtt" / "link.py")
    out = _run(
        tmp_path, "bench.link_publish", "--rate", "200", "--seconds", "1", "--repeat", "1",
        "--compare", link,
    )  # fmt: skip
    assert "this link: median" in out
    assert "compared link: median" in out
    assert "this link / compared link:" in out
