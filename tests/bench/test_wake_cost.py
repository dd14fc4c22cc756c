"""The wake-up bench as a user runs it (docs/performance.md, "Goal 3: what a wake-up costs"):
every line it prints is a measurement against its baseline, and the journal's line is the
daemon's own journal committing to a real file."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

COMMAND = [sys.executable, "-m", "bench.wake_cost", "--wakes", "20", "--commits", "20"]
_RATIO = re.compile(r"= (\d+(?:\.\d+)?) (?:and (\d+(?:\.\d+)?) )?x ")


def test_each_wake_up_is_measured_against_the_same_work_without_one(tmp_path: Path) -> None:
    done = subprocess.run(  # noqa: S603 - our own module
        [*COMMAND, "--dir", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    header, *lines = done.stdout.splitlines()
    assert "CPUs" in header, header
    assert [line.split(",")[0].split(" after")[0] for line in lines] == [
        "asyncio",
        "asyncio",
        "a round trip to another thread",
        "sum(range(1000)) right",
        "a journal commit (sync full)",
    ], lines
    for line in lines:
        ratio = _RATIO.search(line)
        assert ratio is not None, line
        assert all(float(r) > 0 for r in ratio.groups() if r is not None), line
