"""The journal's records and their one codec: the text each record is journaled as is the text
the journal held before the records were typed, byte for byte, and every journaled body
reads back as the record the live table applied."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from daemon.journal import Journal
from daemon.journal.chain import body_text
from daemon.table.records import (
    ConfigRecord,
    LinkRecord,
    NoticeRecord,
    RequestRecord,
    ShoeRecord,
    StartRecord,
    TimerRecord,
    decode,
    encode,
)
from drivers.driver import Connecting, Disconnected
from drivers.events import CardDrawn, NewShoe, SequenceGap, VendorMessage
from rules.games import Game
from tests.daemon.journals import event_stream
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from daemon.table.records import JournalRecord

FIXTURE = Path(__file__).parent / "fixtures" / "schema1-journal.sqlite3"

# Each text as the daemon journaled it before its records were typed (the dict it built,
# through body_text): the oracle is the journal's format, not the codec under test.
WRITTEN_BEFORE: list[tuple[JournalRecord, str]] = [
    (
        ShoeRecord(CardDrawn("10", "H", 7)),
        '{"burned":false,"event":"CardDrawn","origin":"dealt","rank":"10","seq":7,"suit":"H"}',
    ),
    (
        ShoeRecord(VendorMessage("GR", b"\x00\xffA", 3)),
        '{"code":"GR","data":"00ff41","event":"VendorMessage","seq":3}',
    ),
    (ShoeRecord(SequenceGap(1, 3)), '{"event":"SequenceGap","expected":1,"got":3}'),
    (ShoeRecord(NewShoe()), '{"event":"NewShoe","seq":null}'),
    (
        LinkRecord(Disconnected("/dev/shoe", "unplugged", 5, 0.5)),
        (
            '{"endpoint":"/dev/shoe","errno":5,"event":"Disconnected","reason":"unplugged",'
            '"retry_in":0.5}'
        ),
    ),
    (
        RequestRecord("wager", b'{"seat":1,"x":"\xe9"}'),
        '{"command":"wager","payload":"{\\"seat\\":1,\\"x\\":\\"\\u00e9\\"}"}',
    ),
    (
        RequestRecord("status", b"{}", outbox_full=True),
        '{"command":"status","outbox_full":true,"payload":"{}"}',
    ),
    (StartRecord("enq", "pit-a", 2), '{"contract":2,"node":"pit-a","protocol":"enq"}'),
    (StartRecord(), "{}"),  # a start journaled before it named anything
    (StartRecord("enq"), '{"protocol":"enq"}'),
    (TimerRecord("declaration", 4, 2.5), '{"key":4,"seconds":2.5,"timer":"declaration"}'),
    (NoticeRecord("table_claimed", "m"), '{"kind":"table_claimed","message":"m"}'),
    (
        NoticeRecord("table_claimed", "m", hold=True),
        '{"hold":true,"kind":"table_claimed","message":"m"}',
    ),
]


@pytest.mark.parametrize(("record", "text"), WRITTEN_BEFORE)
def test_a_record_is_journaled_as_the_journal_held_it_before(
    record: JournalRecord, text: str
) -> None:
    assert encode(record) == text
    assert decode(record.kind, json.loads(text)) == record


@pytest.mark.parametrize("game", list(Game))
def test_new_settings_read_back_as_the_settings_applied(game: Game) -> None:
    record = ConfigRecord(make_config(game.value))
    assert decode("config", json.loads(encode(record))) == record


def test_everything_a_session_journals_reads_back_to_its_own_text() -> None:
    stream = event_stream(make_config(Game.BLACKJACK.value), seed=7, rounds=6)
    stream.append(("link", LinkRecord(Connecting("/dev/shoe", 1)).body()))
    for kind, body in stream:
        text = body_text(body)
        assert encode(decode(kind, json.loads(text))) == text, text


def test_an_old_journal_reads_back(tmp_path: Path) -> None:
    """A journal the daemon wrote in its first schema: every body decodes; a shoe's event
    journaled before it had a field reads back with the field's default, and is written with
    it from then on (the stored text is never written again)."""
    path = tmp_path / "journal.sqlite3"
    shutil.copy(FIXTURE, path)

    async def upgrade() -> None:
        journal = Journal(path)
        await journal.open()
        await journal.close()

    asyncio.run(upgrade())
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT kind, body FROM events ORDER BY id").fetchall()
    assert {kind for kind, _ in rows} == {"config", "start", "shoe", "link", "request"}
    for kind, text in rows:
        record = decode(kind, json.loads(text))
        again = encode(record)
        assert decode(kind, json.loads(again)) == record
        if kind != "shoe":
            assert again == text, text


@pytest.mark.parametrize(
    ("kind", "body"),
    [("shoe", {"event": "NoSuchEvent"}), ("request", {"payload": "{}"}), ("nothing", {})],
)
def test_a_body_this_version_cannot_read_is_an_error(kind: str, body: dict[str, object]) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        decode(kind, body)
