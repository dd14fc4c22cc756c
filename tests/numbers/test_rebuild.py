"""A restart's rebuild of the shift's numbers while the table deals on: whatever the table
applies while the rebuild runs is counted once, and the numbers come out byte for byte as a
rebuild of the whole journal after the fact counts them."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from daemon.journal import JOURNAL_FILE, prepare_state_directory
from daemon.journal.store import Journal
from daemon.numbers.daemon_side import StatsHub
from daemon.numbers.settings import NumbersConfig
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import JournaledTable, Pace, journal_events
from daemon.wire.topics import Topics
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.mqtt.outbox import OutboundMessage

START = datetime(2026, 11, 28, tzinfo=UTC)
NOW = START + timedelta(hours=23)  # within the shift that began at 18:00
NUMBERS = NumbersConfig(shifts=("06:00", "18:00"))


async def _rebuilt_payload(state: Path, table_id: str) -> bytes:
    published: list[OutboundMessage] = []
    hub = StatsHub([table_id], NUMBERS, Topics(), published.append)
    journal = Journal(state / JOURNAL_FILE)
    await journal.open()
    try:
        await hub.rebuild(journal, now=lambda: NOW)
    finally:
        await journal.close()
    return hub.tables[table_id].stats.payload()


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_what_the_table_applies_while_the_shift_is_rebuilt_is_counted_once(
    tmp_path: Path, seed: int
) -> None:
    """Two thirds of a shift in the journal when the daemon starts; the last third dealt
    while the rebuild runs, in bursts at random moments. The live hub's numbers equal a
    rebuild of the whole journal afterwards, to the byte."""
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.DOUBLE_ATTACK]))
    events = list(
        journal_events(config, START, 1, seed, Pace(rounds_per_hour=60, opens=18, hours=3))
    )
    before, during = events[: len(events) * 2 // 3], events[len(events) * 2 // 3 :]
    state = tmp_path / "state"
    prepare_state_directory(state)
    journal = Journal(state / JOURNAL_FILE, sync="normal")
    await journal.open()
    rng = random.Random(seed)  # noqa: S311 - the bursts' sizes and pauses
    try:
        live = JournaledTable.new(journal, config.table_id, events[0])
        await live.deal(before, None)
        await journal.flush()
        published: list[OutboundMessage] = []
        hub = StatsHub([config.table_id], NUMBERS, Topics(), published.append)
        rebuilding = asyncio.create_task(hub.rebuild(journal, now=lambda: NOW), name="rebuild")
        await live.deal_in_bursts(during, hub, rng)
        await rebuilding
        await journal.flush()
    finally:
        await journal.close()
    stats = hub.tables[config.table_id].stats
    assert stats.numbers.rounds > 0
    assert stats.payload() == await _rebuilt_payload(state, config.table_id)
    assert published
    assert published[-1].payload == stats.payload()
