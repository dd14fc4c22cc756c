"""Days of play at a table, as its journal records them: for the numbers' tests and bench.

`table_events` deals rounds with the real shoe model and basic strategy (`rules.player.Dealer`)
and yields them as the journal holds them: the shoe's cards, shuffles and cut card, and the
console's requests (a `dealer` request at each change of dealer), each with the time it came,
at a set pace of rounds an hour. Seats come and go and stakes vary, seeded. `table_lines`
applies them through the replay every tool shares and yields the round log's lines exactly as
the archive writes them (`archive_lines`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from daemon.history.archiving import archive_due
from daemon.journal import JOURNAL_FILE, prepare_state_directory
from daemon.journal.archive import ARCHIVE_DIRECTORY_NAME, Archive
from daemon.journal.chain import GENESIS, body_text, link_hash
from daemon.journal.rows import JournalEvent, TableRecord
from daemon.journal.store import Journal
from daemon.numbers.daemon_side import StatsHub
from daemon.table.log_lines import archive_lines, table_line
from daemon.table.records import event_body
from daemon.table.runner import TableRunner
from daemon.wire.console import console_request
from daemon.wire.requests import request_record
from daemon.wire.topics import Topics
from drivers.events import CardDrawn, CutCardReached, NewShoe
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle
from rules.games import GAMES
from rules.player import Dealer

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from pathlib import Path

    from daemon.numbers.settings import NumbersConfig
    from rules.config import TableConfig

EPOCH = "f" * 32


@dataclass(frozen=True, slots=True)
class Pace:
    """How the table is played: rounds an hour, hours a day from `opens`, dealers' shifts."""

    rounds_per_hour: int = 60
    opens: int = 8  # local hour the table opens
    hours: int = 16  # hours it stays open each day
    dealer_minutes: int = 60  # a dealer deals this long, then the next comes in
    dealers: tuple[str, ...] = ("ana", "ben", "carla", "dev")
    seat_chance: float = 0.6  # each seat is played a round with this chance
    bonus_chance: float = 0.8  # a played seat also makes the bonus wagers
    # Each request numbered by its console (`transaction`), as a dealer's console numbers
    # them: the table then keeps its latest answers for a redelivery (daemon/table/redelivery.py).
    transactions: bool = False


def _plan(config: TableConfig, rng: random.Random, pace: Pace) -> dict[int, dict[Any, int]]:
    rules = GAMES[config.game]
    plan: dict[int, dict[Any, int]] = {}
    for seat in range(1, config.seats + 1):
        if rng.random() >= pace.seat_chance:
            continue
        wagers: dict[Any, int] = {}
        for index, rule in enumerate(rules.wagers):
            limit = config.limits[rule.kind]
            if index and rng.random() >= pace.bonus_chance:
                continue
            steps = max((limit.maximum - limit.minimum) // 500, 0)
            amount = limit.minimum + 500 * rng.randint(0, min(steps, 4))
            first = next(iter(wagers.values()), amount)
            # A bonus may not exceed the first wager (13:69F-26.6(b)); an attack equals it.
            wagers[rule.kind] = first if rule.equal_to_requirement else min(amount, first)
        plan[seat] = wagers
    return plan or {1: {rule.kind: config.limits[rule.kind].minimum for rule in rules.wagers}}


def table_events(
    config: TableConfig, start: datetime, days: int, seed: int, pace: Pace = Pace()
) -> Iterator[tuple[str, dict[str, Any], datetime]]:
    """(kind, body, time) of every event the journal would hold, day after day."""
    rng = random.Random(seed)  # noqa: S311 - a simulation's seats and stakes
    dealer = Dealer(TableEngine(config), random.Random(seed + 1))  # noqa: S311 - its shoe
    frame = sent = 0
    step = timedelta(hours=1) / pace.rounds_per_hour
    for day in range(days):
        opens = start.replace(hour=pace.opens, minute=0, second=0, microsecond=0)
        opens += timedelta(days=day)
        now, named = opens, None
        for index in range(pace.rounds_per_hour * pace.hours):
            at = opens + index * step
            who = pace.dealers[int((at - opens) / timedelta(minutes=pace.dealer_minutes))
                               % len(pace.dealers)]  # fmt: skip
            if who != named:
                named, sent = who, sent + 1
                yield "request", _request(config, pace, sent, "dealer", {"dealer": who}), at
            played = dealer.play(_plan(config, rng, pace)).events
            tick = step / (len(played) + 2)
            now = at
            for event in played:
                now += tick
                if isinstance(event, DealCard | Shuffle):
                    frame += 1
                    yield "shoe", _shoe_body(event, frame), now
                else:
                    sent += 1
                    yield "request", _request(config, pace, sent, *console_request(event)), now
            shoe = dealer.shoe
            if shoe is not None and shoe.remaining < dealer.reshuffle_below:
                frame += 1
                yield "shoe", event_body(CutCardReached(frame % 65536)), now + tick


def _shoe_body(event: DealCard | Shuffle, frame: int) -> dict[str, Any]:
    if isinstance(event, Shuffle):
        return event_body(NewShoe(frame % 65536))
    code = str(event.card)
    drawn = CardDrawn(code[:-1], code[-1], frame % 65536, burned=event.burned)  # type: ignore[arg-type]
    return event_body(drawn)


def _request(
    config: TableConfig, pace: Pace, sent: int, command: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The `sent`-th request as the journal keeps it, numbered if its console numbers them
    (its own prefix: a console that deals on after a restart numbers from 1 again, under
    another name)."""
    numbered = {"transaction": f"{config.table_id}-journaled-{sent}"} if pace.transactions else {}
    return request_record(command, json.dumps({**numbered, **body}).encode())


class JournaledTable:
    """A table as the daemon journals and applies its events (daemon/parts/commits.py): a
    batch journaled, then each event applied and told to the numbers' `hub` if there is
    one, a checkpoint at each round's end (told to the hub too: it may save its numbers),
    and every message delivered."""

    def __init__(self, journal: Journal, table_id: str, runner: TableRunner) -> None:
        self.journal = journal
        self.table_id = table_id
        self.runner = runner

    @classmethod
    def new(cls, journal: Journal, table_id: str, first: JournalEvent) -> JournaledTable:
        """A table whose first event (its `config`) is `first`."""
        runner = TableRunner.begin(
            TableRecord(table_id, protocol="reference"), Topics(), journal.epoch,
            checkpoint=None, first_config=first.body["table"],
        )  # fmt: skip
        return cls(journal, table_id, runner)

    async def deal(self, events: Sequence[JournalEvent], hub: StatsHub | None = None) -> None:
        numbered = await self.journal.append_events(
            self.table_id, [(e.kind, body_text(e.body), e.at) for e in events]
        )
        runner = self.runner
        for event, n in zip(events, numbered, strict=True):
            applied = runner.apply_stored(dataclasses.replace(event, n=n, hash=""))
            if hub is not None:
                hub.applied(self.table_id, applied, runner.service.config)
            if applied.ended is not None:
                checkpoint = runner.checkpoint()
                self.journal.note_checkpoint(checkpoint, applied.ended)
                if hub is not None:
                    hub.checkpointed(self.table_id, checkpoint)
        self.journal.note_delivered(self.table_id, runner.service.envelopes.next_seq - 1)

    async def deal_in_bursts(
        self, events: Iterable[JournalEvent], hub: StatsHub | None, rng: random.Random
    ) -> None:
        """`events` dealt in bursts of 1 to 40, a random pause of up to 20 ms after each: a
        table dealing on while something else (a restart's rebuild) runs beside it."""
        stream = iter(events)
        while burst := list(itertools.islice(stream, rng.randint(1, 40))):
            await self.deal(burst, hub)
            await asyncio.sleep(rng.random() * 0.02)


async def _write_table(
    journal: Journal, config: TableConfig, events: Iterator[JournalEvent], hub: StatsHub | None
) -> tuple[int, str]:
    """One table's events into the journal as the daemon journals them (with its numbers
    counted and saved when `hub` is given); returns its last round number and the time of
    its last event."""
    first = next(events)
    table = JournaledTable.new(journal, config.table_id, first)
    batch = [first, *itertools.islice(events, 2000)]
    last = first
    while batch:
        await table.deal(batch, hub)
        last, batch = batch[-1], list(itertools.islice(events, 2000))
    return table.runner.service.engine.next_round_id - 1, last.at


async def _announce_new_shoe(journal: Journal, table_id: str, after: str) -> None:
    """A new shoe announced a second after `after`, none of its cards dealt."""
    moment = datetime.fromisoformat(after) + timedelta(seconds=1)
    shuffle = body_text(event_body(NewShoe(0)))
    at = moment.isoformat(timespec="milliseconds")
    await journal.append_events(table_id, [("shoe", shuffle, at)])


def journal_events(
    config: TableConfig,
    start: datetime,
    days: int,
    seed: int,
    pace: Pace = Pace(),
    *,
    contract: int | None = None,
) -> Iterator[JournalEvent]:
    """The events as the journal numbers and chains them (a `config` event first, naming the
    console `contract` if given, as the daemon journals a new table's)."""
    previous = GENESIS
    opened = start.replace(hour=pace.opens) - timedelta(days=1)
    named = {} if contract is None else {"contract": contract}
    first = [("config", {"table": config.to_mapping(), **named}, opened)]
    events = itertools.chain(first, table_events(config, start, days, seed, pace))
    for n, (kind, body, at) in enumerate(events, start=1):
        stamp = at.isoformat(timespec="milliseconds")
        digest = link_hash(previous, config.table_id, n, kind, stamp, body_text(body))
        yield JournalEvent(config.table_id, n, kind, body, stamp, digest)  # type: ignore[arg-type]
        previous = digest


def table_lines(
    config: TableConfig, start: datetime, days: int, seed: int, pace: Pace = Pace()
) -> Iterator[dict[str, Any]]:
    """The round log the archive would write for those days, line by line."""
    events = journal_events(config, start, days, seed, pace)
    first = next(events)
    replay = TableRunner.begin(
        TableRecord(config.table_id, protocol="reference"), Topics(), EPOCH,
        checkpoint=None, first_config=first.body["table"], record_rules=True,
    )  # fmt: skip
    yield table_line(replay.service.config)
    yield from archive_lines(first, replay.apply_stored(first))
    for event in events:
        yield from archive_lines(event, replay.apply_stored(event))


async def write_journal(  # noqa: PLR0913 - keywords only, each a shape of the journal
    state: Path,
    configs: list[TableConfig],
    start: datetime,
    days: int,
    pace: Pace = Pace(),
    *,
    keep_days: int | None = None,
    contract: int | None = None,
    new_shoe: bool = False,
    numbers: NumbersConfig | None = None,
) -> dict[str, int]:
    """A state directory's journal of `days` days of `configs`' tables, written by the
    journal's own store (events, checkpoints at each round's end, every message delivered);
    with `keep_days`, the days older than that archived by the journal's own archiver, as
    the daemon's archive task leaves them at the end of the last day; its tables under the
    console `contract` if given; with `new_shoe`, each table's journal ends with a new shoe
    announced and none of its cards dealt (the daemon applies it when it starts); with
    `numbers`, each table's shift numbers counted and saved as the daemon saves them (so a
    restart counts on from them, daemon/numbers/saved.py). Returns each table's last round
    number."""
    prepare_state_directory(state)
    last_round: dict[str, int] = {}
    journal = Journal(state / JOURNAL_FILE, sync="normal")
    await journal.open()
    hub = None
    if numbers is not None:
        hub = StatsHub([c.table_id for c in configs], numbers, Topics(), lambda _: None,
                       save=journal.note_shift_numbers)  # fmt: skip
    try:
        for index, config in enumerate(configs):
            events = journal_events(config, start, days, seed=index, pace=pace, contract=contract)
            if hub is not None:
                hub.count_from_here(config.table_id)
            last_round[config.table_id], at = await _write_table(journal, config, events, hub)
            if new_shoe:
                await _announce_new_shoe(journal, config.table_id, at)
        await journal.flush()
        if keep_days is not None:
            now = start + timedelta(days=days)
            await archive_due(journal, Archive(state / ARCHIVE_DIRECTORY_NAME), keep_days,
                              Topics(), now=now)  # fmt: skip
    finally:
        await journal.close()
    return last_round
