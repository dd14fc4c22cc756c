"""The open-loop benchmark as a user runs it, briefly: real mosquitto, the daemon, a durable
relay, shoes over TCP; every settlement checked against `shoe2mqtt replay`."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

# A time or memory figure: measured alone, not beside the parallel run (scripts/test).
pytestmark = pytest.mark.serial

if TYPE_CHECKING:
    from pathlib import Path


def test_a_short_open_loop_run_is_correct_and_prints_its_figures(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "bench.e2e.openloop", "--shoes", "2", "--pace", "4",
        "--seconds", "4", "--warmup", "0", "--tcp", "--baselines", "full",
        "--drain", "20",
    ]  # fmt: skip
    done = subprocess.run(  # noqa: S603 - our own module
        command, capture_output=True, text=True, timeout=80, check=False,
        env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "over tcp" in out
    assert "shoe2mqtt card->settlement: p50" in out
    assert "durable relay (fdatasync) card->receipt: p50" in out
    assert "the expected equal to `shoe2mqtt replay` of the round logs" in out
    assert "verdict: ok" in out
    assert list(tmp_path.iterdir()) == []  # the workspace is gone


def test_a_warm_start_deals_on_from_the_rounds_journaled_before(tmp_path: Path) -> None:
    """`--warm-rounds`: each table's journal holds 30 rounds before the daemon starts; the
    daemon numbers its rounds on from them, and every settlement still equals the replay's."""
    command = [
        sys.executable, "-m", "bench.e2e.openloop", "--shoes", "2", "--pace", "4",
        "--seconds", "4", "--warmup", "0", "--tcp", "--baselines", "--drain", "20",
        "--warm-rounds", "30",
    ]  # fmt: skip
    done = subprocess.run(  # noqa: S603 - our own module
        command, capture_output=True, text=True, timeout=80, check=False,
        env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "-- warm journal: 60 rounds in" in out
    assert "30 rounds a table journaled before" in out
    [settled] = [line for line in out.splitlines() if line.strip().startswith("settlements:")]
    expected, received = (int(settled.split()[i].replace(",", "")) for i in (1, 3))
    assert expected == received > 0
    assert "verdict: ok" in out
