"""Journals for the journal's tests: streams of journaled events, and a real journal file.

`event_stream` makes what a table journals over a session: basic-strategy rounds (cards and
shuffles from the shoe, wagers and actions as requests, as a dealer console sends them),
with the daemon's other events mixed in where a seeded generator says (the reader's link
lost and back, a restart, frames lost, each doubt resumed by the dealer, the daemon's own
notice, the same settings journaled again, an unreadable card entered at the console, a
refused request).

`real_journal` plays rounds at a real pit (daemon, mosquitto, emulated shoe) and archives
the first of them (`archive_due` with a clock three days ahead): a journal made by the
daemon's own code, with an archive and a live part, for tests that copy and edit it.

`dated_journal` journals such a session through the daemon's own journal and replay, each
round on the day a test gives (days that go back, as a clock stepped back would have dated
them in a journal written before the journal's time was held), every message delivered.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from daemon.history.archiving import archive_due
from daemon.history.audit import JournalReader
from daemon.journal import Journal, JournalEvent
from daemon.journal.archive import Archive
from daemon.journal.chain import body_text
from daemon.table.records import event_body
from daemon.table.runner import TableRunner
from daemon.testing import Mosquitto
from daemon.testing.recorder import until
from daemon.wire.console import console_request
from daemon.wire.requests import request_record
from daemon.wire.topics import Topics
from drivers.driver import Disconnected, Reconnected
from drivers.events import CardDrawn, CardUnreadable, NewShoe, SequenceGap
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle
from rules.games import GAMES
from rules.player import Dealer
from tests.daemon.pit import play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from datetime import date
    from pathlib import Path

    from daemon.journal import EventKind
    from rules.config import TableConfig

Record = tuple["EventKind", dict[str, Any]]
# The console of these streams has seen every message before each request it sends (its
# requests never cross a card, and it sees the table back after a restart): a `seen`
# beyond any table's numbering says so.
CAUGHT_UP = 2**31

# Any JSON a body may hold: text of every plane, numbers of every kind but NaN (which is not
# equal to itself), nested.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _request(command: str, body: dict[str, Any]) -> Record:
    payload = json.dumps({**body, "seen": CAUGHT_UP}).encode()
    return "request", request_record(command, payload)


def event_stream(config: TableConfig, seed: int, rounds: int) -> list[Record]:
    """What a table journals over `rounds` rounds of play, with the daemon's other events."""
    rng = random.Random(seed)  # noqa: S311 - a test's table
    rules = GAMES[config.game]
    seats = rng.sample(range(1, config.seats + 1), rng.randint(1, min(3, config.seats)))
    plan = {s: {r.kind: config.limits[r.kind].minimum for r in rules.wagers} for s in seats}
    dealer = Dealer(TableEngine(config), random.Random(seed), reshuffle_at=0.9)  # noqa: S311 - a test's shoe
    stream: list[Record] = [("config", {"table": config.to_mapping()}), ("start", {"contract": 2})]
    frame = 0
    unread: list[str] = []  # unreadable cards the console has not entered yet
    for _ in range(rounds):
        for event in dealer.play(plan).events:
            frame += 1
            is_card = isinstance(event, DealCard) and not event.burned
            if unread and not (is_card and rng.random() < 0.5):
                # The console enters them (docs/mqtt.md, `card`); the cards the shoe read
                # meanwhile were held, and now follow in order.
                stream.extend(_request("card", {"card": code}) for code in unread)
                unread.clear()
            if isinstance(event, Shuffle):
                stream.append(("shoe", event_body(NewShoe())))
            elif is_card and rng.random() < 0.04:
                assert isinstance(event, DealCard)
                stream.append(("shoe", event_body(CardUnreadable(frame))))
                unread.append(str(event.card))
            elif isinstance(event, DealCard):
                code = str(event.card)
                drawn = CardDrawn(code[:-1], code[-1], frame, burned=event.burned)  # type: ignore[arg-type]
                stream.append(("shoe", event_body(drawn)))
            else:
                stream.append(_request(*console_request(event)))
            stream.extend(_disturbance(rng, config))
        stream.extend(_request("card", {"card": code}) for code in unread)
        unread.clear()
    return stream


def _disturbance(rng: random.Random, config: TableConfig) -> list[Record]:
    """Now and then, something else the daemon journals (each with its chance per event)."""
    # A shoe that keeps nothing holds the cards after the link was lost: the dealer resumes.
    lost: list[Record] = [
        ("link", event_body(Disconnected("/dev/shoe", "unplugged", 5, 0.5))),
        ("link", event_body(Reconnected("/dev/shoe", 2.5, 3))),
        _request("resume", {}),
    ]
    # A shoe that keeps nothing holds the cards at a restart; so does a gap: the dealer resumes.
    restart: list[Record] = [
        ("start", {"protocol": rng.choice(["reference", "enq"]), "contract": 2}),
        _request("resume", {}),
    ]
    gap: list[Record] = [
        ("shoe", event_body(SequenceGap(expected=1, got=3))),
        _request("resume", {}),
    ]
    notice: list[Record] = [("notice", {"kind": "outbox_filling", "message": "80 messages wait"})]
    settings: list[Record] = [("config", {"table": config.to_mapping()})]
    refused: list[Record] = [_request("wager", {"seat": 99, "kind": "x", "amount": "1"})]
    draw = rng.random()
    for chance, records in (
        (0.02, lost), (0.03, restart), (0.035, gap), (0.045, notice), (0.055, settings),
        (0.065, refused),
    ):  # fmt: skip
        if draw < chance:
            return records
    return []


@dataclass(frozen=True)
class RealJournal:
    """A state directory the daemon wrote: rounds 1 and 2 archived, round 3 live; and what
    `journal show` and `export` printed of round 1 while it was still in the database."""

    state: Path
    archive: Path
    table: str
    shown: list[dict[str, Any]]
    exported: list[dict[str, Any]]


def real_journal(directory: Path) -> RealJournal:
    """Play three rounds at a real pit, archiving the first two; a few seconds."""
    return asyncio.run(_real_journal(directory))


async def _real_journal(directory: Path) -> RealJournal:
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    state = directory / "state"
    # The same round again in the same shoe: no shuffle, no burn card.
    assert [e["type"] for e in events[:2]] == ["shuffle", "card"]
    round_again = events[2:]
    again = shoe_script(round_again)
    with Mosquitto(directory / "mosquitto", log_all=False) as broker:
        async with running_pit(
            table, f"{shoe_script(events)} {again}", broker, state_directory=state
        ) as pit:
            await play(pit, events)
            await play(pit, round_again)
            # Only rounds whose every message reached the broker are archived: the pit stops
            # once the broker has them all, however slow the machine is.
            await until(lambda: len(pit.daemon.outbox) == 0)
        reader = JournalReader(state / "journal.sqlite3", Archive(state / "archive"))
        first = reader.find(table["id"], 1)
        shown, exported = reader.show(first), reader.export(first)
        reader.close()
        journal = Journal(state / "journal.sqlite3")
        await journal.open()
        await archive_due(
            journal,
            Archive(state / "archive"),
            1,
            Topics(),
            now=datetime.now(UTC) + timedelta(days=3),
        )
        await journal.close()
        async with running_pit(table, again, broker, state_directory=state) as pit:
            await play(pit, round_again)
    return RealJournal(state, state / "archive", table["id"], shown, exported)


async def dated_journal(
    path: Path, config: TableConfig, days: list[date], *, seed: int = 7, rounds_from: int = 0
) -> int:
    """Journal rounds of play at `path` (opened, or created), round `i` dated `days[i]`
    (events a second apart from noon), checkpoints at each round's end as the daemon takes
    them, every message delivered: the rounds `rounds_from` on of a seeded session (a later
    call goes on where an earlier one, with `rounds_from` rounds, stopped). Returns the
    table's last event number."""
    journal = Journal(path)
    await journal.open()
    table = config.table_id
    history = await journal.history(table)
    replay = TableRunner.begin(
        history.table, Topics(), journal.epoch, checkpoint=history.checkpoint,
        first_config=history.first_config or config.to_mapping(),
    )  # fmt: skip
    for event in history.events:
        replay.apply_stored(event)
    records = event_stream(config, seed, rounds_from + len(days))[history.table.last_n :]
    ended = 0
    for second, (kind, record) in enumerate(records, start=1):
        if ended >= len(days):
            break
        text = body_text(record)
        at = f"{days[ended].isoformat()}T12:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
        n = await journal.append_event(table, kind, text, at)
        applied = replay.apply_stored(JournalEvent(table, n, kind, json.loads(text), at))
        if applied.ended is not None:
            journal.note_checkpoint(replay.checkpoint(), applied.ended)
            ended += 1
    journal.note_delivered(table, replay.service.envelopes.next_seq - 1)
    await journal.flush()
    await journal.close()
    return replay.n
