"""A journal written by shoe2mqtt before its schema 2 (schema 1) is upgraded in place on the
daemon's first start, and the tables go on where they stopped.

The file is tests/daemon/fixtures/schema1-journal.sqlite3, written by that code (its README
says how): bj-1 (reference protocol) and ta-1 (ENQ) each played a round; bj-1 then opened a
second round, and the two messages of its last card were never delivered.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiomqtt

from daemon.configuration.service_config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.history.archiving import Archived, archive_due
from daemon.history.audit import JournalReader
from daemon.journal import SCHEMA_VERSION, Journal
from daemon.journal.archive import Archive
from daemon.mqtt.settings import MqttSettings
from daemon.service import Daemon
from daemon.system.notify import Notifier
from daemon.testing import MessageLog
from daemon.wire.topics import Topics, has_envelope
from drivers.emulator import EmulatedShoe, EmulatorSettings
from drivers.transports import SerialSettings
from rules.config import TableConfig
from tests.daemon.pit import BASE, read_example, serving

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from daemon.testing import Mosquitto

FIXTURE = Path(__file__).parent / "fixtures" / "schema1-journal.sqlite3"


def _rows(path: Path, query: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(query).fetchall()


@contextlib.asynccontextmanager
async def _daemon(
    state: Path, broker: Mosquitto, script: str
) -> AsyncIterator[tuple[MessageLog, EmulatedShoe, aiomqtt.Client]]:
    """The fixture's two tables served from `state`; a recorder on everything (and its
    client, to send requests), bj-1's shoe."""
    bj, _, _ = read_example("blackjack-queen-of-hearts.jsonl")
    ta, _, _ = read_example("triple-attack-dealer-22.jsonl")
    async with contextlib.AsyncExitStack() as stack:
        bj_shoe = await stack.enter_async_context(
            EmulatedShoe(EmulatorSettings(protocol="reference", script=script))
        )
        ta_shoe = await stack.enter_async_context(
            EmulatedShoe(EmulatorSettings(protocol="enq", script="2D"))
        )
        client = await stack.enter_async_context(
            aiomqtt.Client(broker.host, broker.port, identifier="upgrade-recorder")
        )
        await client.subscribe(f"{BASE}/#", qos=1)
        config = ServiceConfig(
            path=Path("<test>"),
            mqtt=MqttSettings(host=broker.host, port=broker.port, node="upgrade"),
            tables=(
                TableSetup(
                    TableConfig.from_mapping(bj),
                    ShoeConfig("reference", SerialSettings(port=bj_shoe.path)),
                ),
                TableSetup(
                    TableConfig.from_mapping(ta),
                    ShoeConfig("enq", SerialSettings(port=ta_shoe.path)),
                ),
            ),
            state_directory=state,
            logging=LoggingConfig(format="json", level="warning"),
        )
        recorder = MessageLog()
        async with serving(
            Daemon(config, notifier=Notifier()), recorder, client, [bj_shoe, ta_shoe]
        ):
            yield recorder, bj_shoe, client


async def _archive_now(state: Path) -> list[Archived]:
    """Archive as the daemon does, three days from now, with keep_days = 1."""
    journal = Journal(state / "journal.sqlite3")
    await journal.open()
    three_days_on = datetime.now(UTC) + timedelta(days=3)
    written = await archive_due(journal, Archive(state / "archive"), 1, Topics(), now=three_days_on)
    await journal.close()
    return written


def _assert_upgraded_and_kept(state: Path, events_before: list[tuple[Any, ...]]) -> None:
    """The journal is at today's schema, with every event it had, in order, as it was."""
    journal = state / "journal.sqlite3"
    assert _rows(journal, "SELECT value FROM meta WHERE key = 'schema'") == [(str(SCHEMA_VERSION),)]
    # Every event is kept, in order, as it was (bodies in the one canonical form).
    kept = _rows(journal, "SELECT table_id, kind, body, at FROM events ORDER BY id")
    assert [(t, k, json.loads(b), a) for t, k, b, a in kept[: len(events_before)]] == [
        (t, k, json.loads(b), a) for t, k, b, a in events_before
    ]
    assert _rows(journal, "SELECT count(*) FROM legacy_outbox") == [(0,)]
    reader = JournalReader(journal, Archive(state / "archive"))
    try:
        assert all(verdict.ok for verdict in reader.verify()), reader.verify()
        listed = [(r.entry.table_id, r.entry.round_id, r.open) for r in reader.rounds()]
        assert listed == [("bj-1", 1, False), ("bj-1", 2, True), ("ta-1", 1, False)]
        assert reader.find("bj-1", 1).entry.settlements == 3
    finally:
        reader.close()


async def test_a_schema_1_journal_is_upgraded_in_place_and_its_tables_go_on(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    journal = state / "journal.sqlite3"
    shutil.copy(FIXTURE, journal)
    events_before = _rows(journal, "SELECT table_id, kind, body, at FROM events ORDER BY id")
    waiting = [bytes(p) for (p,) in _rows(journal, "SELECT payload FROM outbox ORDER BY id")]
    assert [json.loads(p)["seq"] for p in waiting] == [77, 78]

    async with _daemon(state, mosquitto, "5C") as (pit, shoe, client):
        # What schema 1 had sealed and not delivered goes out first, byte for byte.
        first = await pit.wait(
            lambda m: m.topic.startswith(f"{BASE}/bj-1/") and has_envelope(m.topic)
        )
        later = await pit.wait(lambda m: m.payload == waiting[1])
        assert first.payload == waiting[0]
        # Then the table goes on, its numbers from 79: the start's retained state first.
        started = await pit.wait(lambda m: m.topic == f"{BASE}/bj-1/state")
        assert started.body["seq"] == 79
        # Another shoe on the line in the middle of round 2 (the old one's emulator is gone):
        # what it had not handed over is lost, so the round holds its cards (decision D3).
        notice = await pit.wait(lambda m: m.topic == f"{BASE}/bj-1/notice/reader_restarted")
        assert notice.body["round"] == 2
        mark = pit.mark()
        await shoe.next_card()
        await pit.wait(
            lambda m: m.topic == f"{BASE}/bj-1/round" and m.body["cards_held"] == 1, after=mark
        )
        await client.publish(f"{BASE}/bj-1/request/resume", b'{"transaction": "r"}', qos=1)
        dealt = await pit.wait(lambda m: m.topic == f"{BASE}/bj-1/event/card_dealt", after=mark)
        assert pit.messages.index(later) < pit.messages.index(dealt)
        assert dealt.body["seq"] > notice.body["seq"]
        assert dealt.body["to"] == "dealer"
    _assert_upgraded_and_kept(state, events_before)

    # The next start sends nothing old again.
    async with _daemon(state, mosquitto, "6C") as (pit, _, _):
        await pit.wait(lambda m: m.topic == f"{BASE}/bj-1/notice/reader_restarted")
        assert not any(m.payload in waiting for m in pit.messages)

    # The history from before the upgrade leaves the database for the archive like any other.
    assert {f.table for f in await _archive_now(state)} == {"bj-1", "ta-1"}
    reader = JournalReader(journal, Archive(state / "archive"))
    try:
        assert all(verdict.ok for verdict in reader.verify()), reader.verify()
        assert reader.find("bj-1", 1).file is not None
        assert reader.find("ta-1", 1).file is not None
    finally:
        reader.close()
