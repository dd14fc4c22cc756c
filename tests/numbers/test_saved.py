"""The shift's numbers saved beside the table's state every few rounds, and a restart that
counts on from them: the numbers come out byte for byte as a replay of the whole shift
counts them, while replaying only the events since the save; numbers it cannot take back
(another format, another shift, a journal of before) are counted from the shift's start."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.journal import JOURNAL_FILE, prepare_state_directory
from daemon.journal.rows import TableRecord
from daemon.journal.store import Journal
from daemon.numbers.daemon_side import SAVE_EVERY, StatsHub
from daemon.numbers.live import ShiftStats
from daemon.numbers.periods import Shifts
from daemon.numbers.saved import restore, saved
from daemon.numbers.settings import NumbersConfig
from daemon.simulator.tables import DEMO_TABLES
from daemon.table.log_lines import journal_line, table_line
from daemon.table.runner import TableRunner
from daemon.testing.floor import JournaledTable, Pace, journal_events
from daemon.wire.topics import Topics
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.journal.rows import JournalEvent
    from daemon.mqtt.outbox import OutboundMessage

START = datetime(2026, 11, 28, tzinfo=UTC)
NOW = START + timedelta(hours=23)  # within the shift that began at 18:00
NUMBERS = NumbersConfig(shifts=("06:00", "18:00"))


def _hub(journal: Journal | None, table_id: str) -> StatsHub:
    published: list[OutboundMessage] = []
    save = None if journal is None else journal.note_shift_numbers
    return StatsHub([table_id], NUMBERS, Topics(), published.append, save=save)


@dataclasses.dataclass(frozen=True)
class Cut:
    """A shift dealt up to a moment: the table, its state then, what is left to deal, and
    the live numbers' payload then."""

    config: TableConfig
    runner: TableRunner
    rest: list[JournalEvent]
    live: bytes


async def _dealt(state: Path, game: Game, seed: int, cut: float, *, hours: int = 3) -> Cut:
    """A shift of `hours` dealt by a daemon that saved its numbers (every `SAVE_EVERY`
    rounds), up to `cut` of its events."""
    config = TableConfig.from_mapping(dict(DEMO_TABLES[game]))
    events = list(
        journal_events(config, START, 1, seed, Pace(rounds_per_hour=60, opens=18, hours=hours))
    )
    dealt = int(len(events) * cut)
    prepare_state_directory(state)
    journal = Journal(state / JOURNAL_FILE, sync="normal")
    await journal.open()
    try:
        hub = _hub(journal, config.table_id)
        hub.count_from_here(config.table_id)
        table = JournaledTable.new(journal, config.table_id, events[0])
        for at in range(0, dealt, 300):
            await table.deal(events[at : min(at + 300, dealt)], hub)
        await journal.flush()
    finally:
        await journal.close()
    live = hub.tables[config.table_id].stats.payload()
    return Cut(config, table.runner, events[dealt:], live)


async def _rebuilt(state: Path, table_id: str) -> tuple[bytes, bool, int]:
    """A restart's rebuild: the payload, whether it counted on from saved numbers, and how
    many events it replayed."""
    hub = _hub(None, table_id)
    journal = Journal(state / JOURNAL_FILE)
    await journal.open()
    try:
        await hub.rebuild(journal, now=lambda: NOW)
    finally:
        await journal.close()
    replay = hub.rebuilt[table_id]
    return hub.tables[table_id].stats.payload(), replay.resumed, replay.replayed


def _forget_saved(state: Path, column: str | None = None, text: str = "") -> None:
    """The journal without its saved numbers (`column`: with that column's text instead)."""
    db = sqlite3.connect(state / JOURNAL_FILE)
    with db:
        if column is None:
            db.execute("DELETE FROM shift_numbers")
        else:
            changed = db.execute(f"UPDATE shift_numbers SET {column} = ?", (text,))  # noqa: S608 - a test's own column
            assert changed.rowcount == 1  # numbers were saved: there is something to refuse
    db.close()


@pytest.mark.parametrize(
    ("game", "seed", "cut"),
    [(Game.BLACKJACK, 1, 0.9), (Game.DOUBLE_ATTACK, 2, 0.77), (Game.TRIPLE_ATTACK, 3, 0.83)],
)
async def test_a_restart_counts_on_from_the_saved_numbers_to_the_same_bytes(
    tmp_path: Path, game: Game, seed: int, cut: float
) -> None:
    """Cut at a random moment of a shift (a crash): the restart's numbers are the live
    numbers at the cut, to the byte, and are a replay of the whole shift's, while it
    replayed at most the events of `SAVE_EVERY` rounds."""
    cut_at = await _dealt(tmp_path, game, seed, cut)
    table_id = cut_at.config.table_id
    payload, resumed, replayed = await _rebuilt(tmp_path, table_id)
    assert resumed
    assert payload == cut_at.live
    # A round is some 20-40 events here: `SAVE_EVERY` rounds and the one open at the cut.
    assert 0 < replayed <= (SAVE_EVERY + 1) * 60
    _forget_saved(tmp_path)
    whole, resumed, replayed_whole = await _rebuilt(tmp_path, table_id)
    assert not resumed
    assert whole == cut_at.live
    assert replayed_whole > 10 * replayed


@pytest.mark.parametrize("seed", [4, 5])
async def test_what_the_table_applies_while_it_counts_on_from_saved_numbers_is_counted_once(
    tmp_path: Path, seed: int
) -> None:
    """The restart counts on from the saved numbers while the table deals the rest of the
    shift in bursts: the live numbers at the end equal a replay of the whole shift."""
    cut = await _dealt(tmp_path, Game.DOUBLE_ATTACK, seed, 0.6)
    config = cut.config
    rng = random.Random(seed)  # noqa: S311 - the bursts' sizes and pauses
    journal = Journal(tmp_path / JOURNAL_FILE, sync="normal")
    await journal.open()
    try:
        hub = _hub(journal, config.table_id)
        table = JournaledTable(journal, config.table_id, cut.runner)  # as recovered
        rebuilding = asyncio.create_task(hub.rebuild(journal, now=lambda: NOW), name="rebuild")
        await table.deal_in_bursts(cut.rest, hub, rng)
        await rebuilding
        await journal.flush()
    finally:
        await journal.close()
    assert hub.rebuilt[config.table_id].resumed
    live = hub.tables[config.table_id].stats.payload()
    _forget_saved(tmp_path)
    whole, resumed, _ = await _rebuilt(tmp_path, config.table_id)
    assert not resumed
    assert live == whole


@pytest.mark.parametrize(
    ("column", "text"),
    [
        ("numbers", '{"format":99}'),
        ("numbers", '{"format":1,"shift":"2026-11-28 18:00"}'),
        ("numbers", "[]"),
        ("state", '{"format":999}'),
    ],
    ids=["another format", "fields missing", "not an object", "a state it cannot take"],
)
async def test_saved_numbers_it_cannot_take_back_are_counted_from_the_shifts_start(
    tmp_path: Path, column: str, text: str
) -> None:
    # An hour: 48 rounds to the cut, saved five times. What is refused is the saved text, not
    # its size.
    cut = await _dealt(tmp_path, Game.DOUBLE_ATTACK, 6, 0.8, hours=1)
    _forget_saved(tmp_path, column, text)
    payload, resumed, _ = await _rebuilt(tmp_path, cut.config.table_id)
    assert not resumed
    assert payload == cut.live


async def test_another_shifts_saved_numbers_are_not_taken(tmp_path: Path) -> None:
    """Numbers saved in the shift before: the restart counts the new shift from its start
    (nothing of the old shift's rounds in it)."""
    config = (await _dealt(tmp_path, Game.BLACKJACK, 7, 0.5)).config  # dealt 18:00-19:30
    hub = _hub(None, config.table_id)
    journal = Journal(tmp_path / JOURNAL_FILE)
    await journal.open()
    try:  # the next morning's shift: no round of it yet
        await hub.rebuild(journal, now=lambda: START + timedelta(days=1, hours=7))
    finally:
        await journal.close()
    assert not hub.rebuilt[config.table_id].resumed
    assert hub.tables[config.table_id].stats.numbers.rounds == 0


async def test_a_journal_written_before_the_numbers_were_saved_is_counted_whole_and_then_saves(
    tmp_path: Path,
) -> None:
    """A schema 2 file without the `shift_numbers` table: read-only, the rebuild counts the
    shift from its start; opened by the daemon, the table is made for the next save."""
    cut = await _dealt(tmp_path, Game.BLACKJACK, 8, 0.7, hours=1)
    config = cut.config
    db = sqlite3.connect(tmp_path / JOURNAL_FILE)
    db.execute("DROP TABLE shift_numbers")
    db.close()
    hub = _hub(None, config.table_id)
    journal = Journal(tmp_path / JOURNAL_FILE)
    await journal.open()  # made again here, empty
    try:
        await hub.rebuild(journal, now=lambda: NOW)
        tables = await journal.read(
            lambda db: db.execute("SELECT count(*) FROM shift_numbers").fetchone()
        )
    finally:
        await journal.close()
    assert tables == (0,)
    assert not hub.rebuilt[config.table_id].resumed
    assert hub.tables[config.table_id].stats.payload() == cut.live


@settings(max_examples=8, deadline=None)
@given(
    game=st.sampled_from(list(Game)),
    seed=st.integers(0, 2**16),
    cut=st.floats(0.05, 0.95),
)
def test_numbers_saved_at_any_rounds_end_and_restored_count_on_as_if_never_saved(
    game: Game, seed: int, cut: float
) -> None:
    """A shift's events fed to the numbers; at a round's end drawn at random they are saved,
    through JSON, into a fresh `ShiftStats`, and both are fed the rest: the oracle, fed
    without the save, publishes the same bytes at every round's end after."""
    config = TableConfig.from_mapping(dict(DEMO_TABLES[game]))
    events = list(
        journal_events(config, START, 1, seed, Pace(rounds_per_hour=40, opens=18, hours=1))
    )
    replay = TableRunner.begin(
        TableRecord(config.table_id, protocol="reference"), Topics(), "e" * 32,
        checkpoint=None, first_config=events[0].body["table"],
    )  # fmt: skip
    shifts = Shifts.parse(NUMBERS.shifts)
    oracle = ShiftStats(config.table_id, shifts)
    restored: ShiftStats | None = None
    settings = None
    ends = 0
    for event in events:
        applied = replay.apply_stored(event)
        if replay.service.config is not settings:  # as the daemon tells its numbers
            settings = replay.service.config
            for stats in filter(None, (oracle, restored)):
                stats.feed_lines([table_line(settings)])
        request = journal_line(event, applied.owner) if event.kind == "request" else None
        counted = oracle.feed(request, applied.messages)
        if restored is not None and restored.feed(request, applied.messages):
            assert restored.payload() == oracle.payload()
        if counted and restored is None and (ends := ends + 1) >= cut * 40:
            data = saved(oracle)
            assert data is not None
            restored = ShiftStats(config.table_id, shifts)
            restore(restored, json.loads(json.dumps(data)))
            assert restored.payload() == oracle.payload()
    assert restored is not None
    assert restored.payload() == oracle.payload()
    assert restored.numbers.to_mapping() == oracle.numbers.to_mapping()
