"""The table-memory bench: what a table keeps per round, measured by tracemalloc (the same
bytes every run, whatever the machine's load)."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

import structlog

from bench.table_memory import at_the_bound, floor_answers, per_round, shift_at_the_bound
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path


def test_a_table_keeps_a_few_hundred_bytes_a_round_most_of_it_the_surveillances() -> None:
    """A floor's daemon grows by this until each table's 600 rounds are kept: 422 bytes a
    Triple Attack round before the rounds were kept small, 210 after, 112 packed."""
    kept_config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    try:  # not captured: the logs a test captures are kept, and would count
        first, *places = per_round(Game.TRIPLE_ATTACK, 120, top=2)
    finally:
        structlog.configure(**kept_config)
    kept = int(re.search(r"(\d+) bytes a round kept", first)[1])  # type: ignore[index]
    assert 0 < kept < 160, first
    assert "kept_rounds.py" in places[0], places  # the surveillance's, packed


def test_a_seven_seat_table_at_its_bound_is_weighed_and_checkpointed() -> None:
    [line] = at_the_bound()
    assert line.startswith("seven seats, 600 rounds: ")
    held = int(re.search(r"(\d+) KiB held", line)[1])  # type: ignore[index]
    assert held < 100, line  # 313 KiB before the rounds were kept small, 100 before packed


def test_a_shift_at_its_bound_keeps_its_rounds_as_text_and_publishes_them_at_once(
    tmp_path: Path,
) -> None:
    """500 rounds of a shift's history held as the JSON they are published as: 489 KiB and
    2.4 ms a payload when each round was a dict encoded again at every round's end."""
    [line] = shift_at_the_bound(tmp_path)
    assert line.startswith("a shift's 500 last rounds: "), line
    held = int(re.search(r"(\d+) KiB held", line)[1])  # type: ignore[index]
    assert held < 300, line  # its time is the bench's to print, not a test's to hold


def test_a_floors_answers_kept_for_a_redelivery_share_their_text() -> None:
    """256 tables' 64 answers each, as a restart restores them: 9.0 KiB a table when each
    answer's text was its own, 5.4 with the same text kept once."""
    kept_config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    try:
        [line] = floor_answers()
    finally:
        structlog.configure(**kept_config)
    assert line.startswith("a floor's answers kept for a redelivery, 256 tables x 64: "), line
    a_table = float(re.search(r"([\d.]+) KiB a table", line)[1])  # type: ignore[index]
    assert a_table < 7, line
