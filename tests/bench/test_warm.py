"""A warm start: each table's journal ends with its next shoe announced, and the run's shoes
deal that shoe's cards without announcing it again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from bench.e2e.harness import table_mapping
from bench.e2e.load import CardStep
from bench.e2e.shoes import FedShoeModel
from bench.e2e.warm import warm_hour, warm_journal, warm_numbers
from daemon.journal import JOURNAL_FILE, database, schema
from daemon.journal.rows import TableRecord
from daemon.numbers.periods import Shifts
from daemon.table.records import read
from daemon.table.redelivery import KEPT
from daemon.table.runner import TableRunner
from daemon.wire.topics import Topics
from drivers.emulator.shoe_model import Drawn, Shuffled
from rules.cards import Card
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path


def _step(number: int, card: str, *, shuffled: bool) -> CardStep:
    return CardStep("t", number, 0.0, Card.parse(card), False, shuffled, [])


def test_a_shoe_already_announced_is_not_announced_again() -> None:
    model = FedShoeModel(announced=True)
    for number, (card, shuffled) in enumerate([("AS", True), ("KH", False), ("2C", True)]):
        model.feed(_step(number, card, shuffled=shuffled))
    steps = []
    while (step := model.next_step()) is not None:
        steps.append(step)
    assert [type(step) for step in steps] == [Drawn, Drawn, Shuffled, Drawn]
    fresh = FedShoeModel()
    fresh.feed(_step(0, "AS", shuffled=True))
    assert isinstance(fresh.next_step(), Shuffled)


async def test_each_tables_warm_journal_ends_with_a_new_shoe(tmp_path: Path) -> None:
    configs = [
        TableConfig.from_mapping(table_mapping(game, f"{game.value}-1"))
        for game in (Game.BLACKJACK, Game.TRIPLE_ATTACK)
    ]
    last = await warm_journal(tmp_path, configs, rounds=12, contract=4, now=datetime.now(UTC))
    assert sorted(last) == sorted(c.table_id for c in configs)
    db = schema.connect(tmp_path / JOURNAL_FILE, read_only=True)
    try:
        for config in configs:
            events = list(database.iter_events(db, config.table_id, after=0))
            assert events[-1].kind == "shoe"
            assert events[-1].body["event"] == "NewShoe"
            assert events[-2].at < events[-1].at  # after the hour's last round
            assert sum(e.body.get("event") == "NewShoe" for e in events) > 1
    finally:
        db.close()


async def test_the_warm_tables_keep_their_consoles_answers_for_a_redelivery(tmp_path: Path) -> None:
    """The run's consoles number their requests, so the warm journal's do too: a table the
    daemon restores from its last checkpoint keeps its latest answers (not an empty memory it
    would fill in the run's first minutes), and answers the last request, delivered again,
    as it did, changing nothing."""
    config = TableConfig.from_mapping(table_mapping(Game.DOUBLE_ATTACK, "double-attack-1"))
    await warm_journal(tmp_path, [config], rounds=12, contract=4, now=datetime.now(UTC))
    db = schema.connect(tmp_path / JOURNAL_FILE, read_only=True)
    try:
        n = database.start_checkpoint_n(db, config.table_id)
        assert n is not None
        checkpoint = database.read_checkpoint(db, config.table_id, n)
        events = list(database.iter_events(db, config.table_id, after=0))
    finally:
        db.close()
    table = TableRecord(config.table_id, protocol="reference")
    runner = TableRunner.begin(table, Topics(), "f" * 32, checkpoint=checkpoint, first_config=None)
    for event in events[n:]:
        runner.apply_stored(event)
    assert len(runner.service.answered.state()) == KEPT
    last = next(e for e in reversed(events) if e.kind == "request")
    assert json.loads(last.body["payload"])["transaction"]
    state = runner.checkpoint().state
    again = runner.apply(events[-1].n + 1, events[-1].at, read(last.kind, last.body))
    assert again.recorded == []
    assert [b'"duplicate":true' in m.payload for m in again.messages] == [True]
    after = runner.checkpoint().state["service"]
    assert after.pop("next_seq") == state["service"].pop("next_seq") + 1  # the answer itself
    assert after == state["service"]


@pytest.mark.parametrize("minute", [0, 10, 59])
def test_the_warm_rounds_and_the_run_lie_in_one_shift_at_any_hour(minute: int) -> None:
    """With the daemon's default shifts, a run begun in a shift's first hour dealt its warm
    rounds in the shift before: its numbers empty, no table's published until its round."""
    for hour in range(24):
        now = datetime(2026, 12, 3, hour, minute, 30, tzinfo=UTC)
        numbers = warm_numbers(now)
        shifts = Shifts.parse(numbers.shifts, numbers.timezone)
        began = shifts.current_shift_start(now)
        assert began == warm_hour(now), (now, numbers.shifts)
        assert shifts.current_shift_start(now + timedelta(hours=6)) == began  # the run's hours
