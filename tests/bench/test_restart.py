"""The restart bench as a user runs it, briefly: a warm journal, the daemon started on it,
every table's shift counted again and published."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

# A time or memory figure: measured alone, not beside the parallel run (scripts/test).
pytestmark = pytest.mark.serial

if TYPE_CHECKING:
    from pathlib import Path


def test_a_restart_on_a_warm_journal_counts_every_tables_shift_and_prints_its_cost(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "bench.e2e.restart", "--tables", "3", "--rounds", "15"]
    done = subprocess.run(  # noqa: S603 - our own module
        command, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "warm journal: 3 tables x 15 rounds in" in out
    assert re.search(r"every table's numbers [\d.]+ s after start \(3 of 3 tables\)", out), out
    assert re.search(r"daemon RSS [\d.]+ MiB at READY=1, peak [\d.]+, at the end [\d.]+", out)
    assert list(tmp_path.iterdir()) == []  # the workspace is gone
