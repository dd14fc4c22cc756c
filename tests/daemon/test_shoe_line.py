"""What a table is told of its shoe's line (daemon.table.shoe_line), and how the daemon queues
what its shoe says (daemon.service): bounded, the shoe waiting for room where it keeps its frames,
dropped and told where it keeps nothing, and noise told once, in the stream's order.

The daemon here is the real one, its journal a real file, run step by step: the shoe's driver
is played by putting its events in the way the daemon's own reader task does
(`DriverInbox.put`), and the table's consumer by taking its items.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from typing import TYPE_CHECKING, Any

from daemon.configuration.service_config import load_config
from daemon.parts.driver_inbox import DriverInbox
from daemon.parts.items import OverflowItem, RequestItem, ShoeItem
from daemon.service import Daemon
from daemon.table.shoe_line import LineNotice, ShoeLine
from drivers.events import CardDrawn, LockChanged
from drivers.noise import LineNoise, LineNoiseBegan, LineQuiet
from drivers.transports import SerialSettings, transport_factory
from tests.drivers.test_driver import HELLO, driver_for, reference
from tests.drivers.test_transports import Pty

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from daemon.parts.items import ServedTable

CONFIG = """\
[mqtt]
host = "127.0.0.1"

[journal]
state_directory = "{state}"
sync = "normal"

[[table]]
id = "bj-1"
game = "blackjack"
paytable = "A"
[table.limits.blackjack]
min = "10"
max = "1000"
[table.limits.twenty_point_bonus]
min = "5"
max = "100"
[table.shoe]
protocol = "{protocol}"
transport = "serial"
port = "/dev/ttyUSB0"
"""
NOISE = LineNoise("/dev/ttyUSB0", 2.5, 10_000, 9_000, 3, 40, 0, 39)


def card(code: str, seq: int) -> CardDrawn:
    return CardDrawn(code[:-1], code[-1], seq=seq)  # type: ignore[arg-type]  # valid codes


# ---------------------------------------------------------------- the rules, alone
def test_noise_is_a_doubt_only_where_the_shoe_keeps_nothing_and_cards_are_at_stake() -> None:
    enq, reference = ShoeLine(reliable=False), ShoeLine(reliable=True)
    assert reference.noise_began(at_stake=True, holding=False) is None
    assert reference.before_shoe_event(card("KH", 1), holding=False) is None
    assert enq.noise_began(at_stake=True, holding=True) is None  # held already
    assert enq.before_shoe_event(LockChanged(locked=True, seq=1), holding=False) is None
    doubt = enq.before_shoe_event(card("KH", 2), holding=False)
    assert doubt is not None
    assert (doubt.kind, doubt.hold) == ("line_noise", True)
    assert enq.before_shoe_event(card("QH", 3), holding=True) is None  # held from the doubt
    told = enq.noise_reported(NOISE)
    assert (told.kind, told.hold) == ("line_noise", False)
    assert "10,000 bytes read" in told.message
    assert "keeps nothing" in told.message
    assert enq.before_shoe_event(card("JH", 4), holding=False) is not None  # still noisy
    enq.noise_quiet()
    assert enq.before_shoe_event(card("JH", 4), holding=False) is None  # the noise is over
    assert "nothing is lost" in reference.noise_reported(NOISE).message


def test_noise_that_begins_while_cards_are_at_stake_is_a_doubt_at_once() -> None:
    enq = ShoeLine(reliable=False)
    assert enq.noise_began(at_stake=False, holding=False) is None
    began = enq.noise_began(at_stake=True, holding=False)
    assert began is not None
    assert began.hold


def test_an_overflow_is_told_once_where_it_began_with_what_it_cost() -> None:
    enq = ShoeLine(reliable=False)
    overflow = enq.refused(LockChanged(locked=True, seq=1))
    assert overflow is not None
    assert enq.refused(card("KH", 2)) is None  # the same place: counted there
    assert enq.refused(LockChanged(locked=False, seq=3)) is None
    told = enq.overflow_taken(overflow, at_stake=False)
    assert told == LineNotice(
        "reader_overflow",
        "the table could not take what its shoe sent as fast as it came: 3 events (1 of them "
        "cards) were dropped, and this shoe keeps nothing",
        hold=True,  # a card was among them
    )
    assert enq.overflowed == 3
    later = enq.refused(LockChanged(locked=True, seq=4))
    assert later is not None  # a place of its own
    assert later is not overflow
    assert not enq.overflow_taken(later, at_stake=False).hold
    assert enq.overflow_taken(later, at_stake=False) == enq.overflow_taken(later, at_stake=False)


# ---------------------------------------------------------------- the daemon, step by step
@contextlib.asynccontextmanager
async def started(tmp_path: Path, protocol: str) -> AsyncIterator[tuple[Daemon, ServedTable]]:
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(CONFIG.format(state=tmp_path / "state", protocol=protocol), encoding="utf-8")
    daemon = Daemon(load_config(path, environ={}))
    await daemon.recovery.start()
    table = daemon.tables["bj-1"]
    try:
        await take_all(daemon, table)  # its settings and its start
        yield daemon, table
    finally:
        await daemon.journal.close()


async def take_all(daemon: Daemon, table: ServedTable) -> None:
    while len(table.queue):
        await daemon.commits.take(table, table.queue.get_nowait())


def journaled(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    uri = f"file:{tmp_path / 'state' / 'journal.sqlite3'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as journal:
        rows = journal.execute("SELECT body FROM events WHERE kind = ? ORDER BY n", (kind,))
        return [json.loads(body) for (body,) in rows]


async def test_a_shoe_that_keeps_nothing_is_read_on_and_what_overflows_is_told(
    tmp_path: Path,
) -> None:
    async with started(tmp_path, "enq") as (daemon, table):
        inbox = DriverInbox(table, daemon.storage)
        capacity = table.queue.shoe_capacity
        for seq in range(capacity):
            await inbox.put(LockChanged(locked=bool(seq % 2), seq=seq))  # never waits
        await inbox.put(card("KH", 0))  # the inbox is full: dropped, counted, its place kept
        await inbox.put(LockChanged(locked=True, seq=1))
        assert len(table.queue) == capacity + 1
        assert isinstance(list(table.queue._items)[-1][1], OverflowItem)
        assert daemon._readings().overflowed == {"bj-1": 2}
        await take_all(daemon, table)
        assert table.service.doubt == "reader_overflow"  # a card was lost: held from here
        [notice] = journaled(tmp_path, "notice")
        assert notice["kind"] == "reader_overflow"
        assert notice["hold"] is True
        assert "2 events (1 of them cards) were dropped" in notice["message"]
        assert len(journaled(tmp_path, "shoe")) == capacity


async def test_a_shoe_that_keeps_its_frames_waits_for_room(tmp_path: Path) -> None:
    async with started(tmp_path, "reference") as (daemon, table):
        inbox = DriverInbox(table, daemon.storage)
        for seq in range(table.queue.shoe_capacity):
            await inbox.put(LockChanged(locked=True, seq=seq))

        async def one_more() -> None:
            await inbox.put(card("KH", 300))

        waiting = asyncio.create_task(one_more())
        await asyncio.sleep(0.01)
        assert not waiting.done()  # the driver reads no more: the shoe keeps the frame
        await daemon.commits.take(table, table.queue.get_nowait())
        await asyncio.wait_for(waiting, 1)
        assert daemon._readings().overflowed == {"bj-1": 0}


async def test_the_reader_task_pulls_no_more_while_the_inbox_is_full_and_closes_the_link(
    tmp_path: Path,
) -> None:
    """The daemon's reader task over a real pty: while the inbox has no room it pulls nothing,
    so the driver reads nothing; cancelled there (the daemon stopping), the link is closed."""
    with Pty() as pty:
        async with started(tmp_path, "reference") as (daemon, table):
            table.driver = driver_for(transport_factory(SerialSettings(pty.path)))
            reader = asyncio.create_task(DriverInbox(table, daemon.storage).read_shoe())
            async with asyncio.timeout(5):
                await pty.read(9)  # the greeting: the link is open
            for seq in range(table.queue.shoe_capacity - 2):  # Connecting, Connected are in
                assert table.queue.try_put(ShoeItem(LockChanged(locked=True, seq=seq)))
            pty.write(HELLO + reference("KH", 1))
            async with asyncio.timeout(5):
                while table.driver.line.bytes_read == 0:  # noqa: ASYNC110 - the driver has no event for a read
                    await asyncio.sleep(0.01)
            read = table.driver.line.bytes_read
            pty.write(reference("QH", 2))
            await asyncio.sleep(0.1)
            assert table.driver.line.bytes_read == read  # the identity waits for room
            assert table.driver.connected
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            assert not table.driver.connected


async def test_noise_costs_the_journal_a_notice_and_holds_cards_at_stake(tmp_path: Path) -> None:
    async with started(tmp_path, "enq") as (daemon, table):
        inbox = DriverInbox(table, daemon.storage)
        table.queue.offer(RequestItem("shuffle", b"{}"))  # a burn is due: cards at stake
        await take_all(daemon, table)
        await inbox.put(LineNoiseBegan("/dev/ttyUSB0"))
        await take_all(daemon, table)
        assert table.service.doubt == "line_noise"
        await inbox.put(card("KH", 1))  # held: no second doubt while the table holds its cards
        await inbox.put(NOISE)
        await inbox.put(LineQuiet("/dev/ttyUSB0"))
        await take_all(daemon, table)
        notices = journaled(tmp_path, "notice")
        assert [(n["kind"], n.get("hold", False)) for n in notices] == [
            ("line_noise", True),
            ("line_noise", False),
        ]
        assert table.service.cards_held == 1


async def test_noise_between_rounds_holds_the_first_card_that_comes_in_it(tmp_path: Path) -> None:
    async with started(tmp_path, "enq") as (daemon, table):
        inbox = DriverInbox(table, daemon.storage)
        await inbox.put(LineNoiseBegan("/dev/ttyUSB0"))
        await take_all(daemon, table)
        assert journaled(tmp_path, "notice") == []  # nothing at stake: nothing yet
        await inbox.put(card("KH", 1))
        await take_all(daemon, table)
        [notice] = journaled(tmp_path, "notice")
        assert (notice["kind"], notice["hold"]) == ("line_noise", True)
        assert table.service.doubt == "line_noise"
