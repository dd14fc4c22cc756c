"""The archive backlog benchmark as a user runs it, briefly: a journal of two days due, the
daemon started over it, the table asked for its status while the archiver works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def test_a_short_backlog_is_archived_and_the_figures_printed(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "bench.archive_backlog", "--days", "2", "--cards-per-day", "100",
        "--requests", "5",
    ]  # fmt: skip
    done = subprocess.run(  # noqa: S603 - our own module
        command, capture_output=True, text=True, timeout=80, check=False,
        env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"^start to READY=1: \d+\.\d\d s$", out, re.MULTILINE)
    assert re.search(r"^archive: 2 files, READY=1 to the last: \d+\.\d s$", out, re.MULTILINE)
    assert re.search(r"^status while archiving: (p50 .* over \d|no samples)", out, re.MULTILINE)
    assert "status after: p50" in out
    assert list(tmp_path.iterdir()) == []  # the workspace is gone
