"""The table-memory bench as a user runs it: what a table keeps per round, measured by
tracemalloc.

In a process of its own, as the bench is run: its figures are the same bytes every run only
there. Inside the suite's worker they moved with what the worker ran before (a Triple Attack
round measured 179 bytes kept after other tests, 138 in a fresh process), and a test that
passes or fails with the tests before it holds nothing."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

COMMAND = [
    sys.executable, "-m", "bench.table_memory", "--rounds", "120", "--games", "triple_attack",
    "--top", "2",
]  # fmt: skip


@pytest.fixture(scope="module")
def printed() -> list[str]:
    """The bench's lines, run once for this module's tests."""
    done = subprocess.run(  # noqa: S603 - our own module
        COMMAND, capture_output=True, text=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def _line(printed: list[str], start: str) -> str:
    [line] = [line for line in printed if line.startswith(start)]
    return line


def test_a_table_keeps_a_few_hundred_bytes_a_round_most_of_it_the_surveillances(
    printed: list[str],
) -> None:
    """A floor's daemon grows by this until each table's 600 rounds are kept: 422 bytes a
    Triple Attack round before the rounds were kept small, 210 after, 112 packed (138 with
    what was added since)."""
    first = _line(printed, "triple_attack ")
    kept = int(re.search(r"(\d+) bytes a round kept", first)[1])  # type: ignore[index]
    assert 0 < kept < 160, first
    places = printed[printed.index(first) + 1 :][:2]
    assert "kept_rounds.py" in places[0], places  # the surveillance's, packed


def test_a_seven_seat_table_at_its_bound_is_weighed_and_checkpointed(printed: list[str]) -> None:
    line = _line(printed, "seven seats, 600 rounds: ")
    held = int(re.search(r"(\d+) KiB held", line)[1])  # type: ignore[index]
    # 313 KiB before the rounds were kept small, 100 before packed; 81 KiB packed: every
    # table of a floor after the first, which also makes the tables they all share (106).
    assert held < 90, line


def test_a_shift_at_its_bound_keeps_its_rounds_as_text_and_publishes_them_at_once(
    printed: list[str],
) -> None:
    """500 rounds of a shift's history held as the JSON they are published as: 489 KiB and
    2.4 ms a payload when each round was a dict encoded again at every round's end."""
    line = _line(printed, "a shift's 500 last rounds: ")
    held = int(re.search(r"(\d+) KiB held", line)[1])  # type: ignore[index]
    assert held < 300, line  # its time is the bench's to print, not a test's to hold


def test_a_floors_answers_kept_for_a_redelivery_share_their_text(printed: list[str]) -> None:
    """256 tables' 64 answers each, as a restart restores them: 9.0 KiB a table when each
    answer's text was its own, 5.4 with the same text kept once."""
    line = _line(printed, "a floor's answers kept for a redelivery, 256 tables x 64: ")
    a_table = float(re.search(r"([\d.]+) KiB a table", line)[1])  # type: ignore[index]
    assert a_table < 7, line
