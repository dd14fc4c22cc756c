"""The live numbers: `<table>/stats` from a real daemon at a real broker, and a restart's
rebuild of the shift from a real journal, each held to what a report counts."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sqlite3
import threading
import tracemalloc
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest

from daemon.history.audit import JournalReader
from daemon.journal import JOURNAL_FILE, database
from daemon.journal.archive import Archive
from daemon.journal.store import Journal
from daemon.mqtt.outbox import MemoryOutbox, OutboundMessage
from daemon.numbers import daemon_side, live, sources
from daemon.numbers.daemon_side import StatsHub
from daemon.numbers.periods import Grouped, Shifts
from daemon.numbers.records import RoundRecord
from daemon.numbers.settings import NumbersConfig
from daemon.simulator.tables import DEMO_TABLES
from daemon.table.log_lines import journal_line, table_line
from daemon.table.runner import TableRunner
from daemon.testing import until
from daemon.testing.floor import Pace, write_journal
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT
from daemon.wire.topics import Topics
from rules.analysis import band as band_module
from rules.config import TableConfig
from rules.games import Game
from tests.daemon.pit import play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto


@pytest.mark.parametrize("contract", [STATE_CONTRACT, ROUND_CONTRACT])
async def test_a_round_at_the_table_publishes_its_shift_stats_retained(
    mosquitto: Mosquitto, subscribe: Any, contract: int
) -> None:
    """A display that connects after the round gets the shift's numbers at once, with the
    dealer a `dealer` request named; under either console contract (contract 4's round
    messages carry the round's events)."""
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    topic = f"shoe2mqtt/{table['id']}/stats"
    async with running_pit(table, shoe_script(events), mosquitto, contract=contract) as pit:
        refused = await pit.request("dealer", dealer="", badge=7)
        named = await pit.request("dealer", dealer=" ana ")
        await play(pit, events)
        async with subscribe(topic) as display:
            first = await display.next_on(topic)
    assert first.retain is True
    stats = json.loads(first.payload)
    assert stats["table"] == table["id"]
    numbers = stats["numbers"]
    assert numbers["rounds"] == 1
    settled = [s for s in pit.settlements() if s["result"] != "void"]
    [money] = numbers["wagers"]
    assert money["wager"] == "twenty_point_bonus"
    assert money["handle_cents"] == sum(int(Decimal(s["stake"]) * 100) for s in settled)
    assert money["players_won_cents"] == sum(int(Decimal(s["won"]) * 100) for s in settled)
    assert abs(money["theoretical_hold"] - 0.247089) < 1e-6  # paytable A, six decks
    assert [r["round"] for r in stats["history"]] == sorted({s["round"] for s in settled})
    assert refused["error"]["code"] == "malformed_request"
    assert named["status"] == "ok"
    assert named["data"] == {"dealer": "ana"}
    assert [r["dealer"] for r in stats["history"]] == ["ana"]


async def test_a_restart_rebuilds_the_shift_as_a_report_counts_it(tmp_path: Path) -> None:
    """Two days written by the journal's own store; the hub rebuilds the last shift of the
    second day (20:30 to the end) as `report --by shift` counts it."""
    start = datetime(2026, 11, 28, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    pace = Pace(rounds_per_hour=30, opens=19, hours=3)
    await write_journal(tmp_path, [config], start, 2, pace)
    numbers = NumbersConfig(shifts=("06:00", "20:30"))
    published: list[OutboundMessage] = []
    counted: list[tuple[str, dict[str, Any]]] = []
    hub = StatsHub(
        ["bj-1"], numbers, Topics(), published.append, lambda t, n: counted.append((t, n))
    )
    journal = Journal(tmp_path / JOURNAL_FILE)
    await journal.open()
    band_module._band_of.cache_clear()
    try:
        await hub.rebuild(journal, now=lambda: start + timedelta(days=1, hours=21, minutes=30))
    finally:
        await journal.close()
    # 45 round ends, each a band of new stakes: solved, and none kept for a report to find.
    assert band_module._band_of.cache_info().currsize == 0
    reader = JournalReader(tmp_path / JOURNAL_FILE, Archive(tmp_path / "archive"))
    try:
        grouped = Grouped("shift", Shifts.parse(numbers.shifts))
        for record in sources.records(reader):
            grouped.add(record)
    finally:
        reader.close()
    expected = next(g for g in grouped.numbers() if g.key["shift"] == "2026-11-29 20:30")
    assert expected.rounds == 45  # 20:30 to 22:00 at 30 an hour
    [(table, state)] = counted
    assert table == "bj-1"
    assert state == expected.to_mapping()
    [message] = published
    assert message.topic == "shoe2mqtt/bj-1/stats"
    assert message.retain
    # Each round of the history encoded once, at its end: the payload is still the state's
    # JSON to the byte, its history the shift's 45 rounds in order.
    stats = hub.tables["bj-1"].stats
    assert message.payload == json.dumps(stats.state(), separators=(",", ":")).encode()
    history = json.loads(message.payload)["history"]
    assert len(history) == 45
    assert [r["round"] for r in history] == sorted(r["round"] for r in history)
    assert all(set(r["holds"]) == {"twenty_point_bonus"} for r in history)


async def test_a_restart_late_in_a_busy_shift_rebuilds_it_off_the_loop_one_event_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shift of 120 Triple Attack rounds: each round is counted, and its bands solved, off
    the event loop, and the replay holds one event at a time. Before, the whole shift's
    messages were decoded and held at once (140 MiB for 300 rounds, against 0.6 now; 550 MiB
    of a daemon's resident memory for four such tables) and counted on the event loop. At
    120 rounds the peak is 0.5 MiB and the defect's would be some 56 MiB, seven times the
    bound; 300 rounds under tracemalloc took 26 s of a suite that must stay under ten
    minutes, 120 take 9."""
    start = datetime(2026, 11, 28, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.TRIPLE_ATTACK]))
    await write_journal(tmp_path, [config], start, 1, Pace(rounds_per_hour=120, opens=19, hours=1))
    hub = StatsHub(["ta-1"], NumbersConfig(shifts=("06:00", "18:00")), Topics(), lambda _: None)
    counted_on: set[int] = set()
    take = live.ShiftStats.take

    def noting_take(stats: live.ShiftStats, records: Any) -> bool:
        counted_on.add(threading.get_ident())
        return take(stats, records)

    monkeypatch.setattr(live.ShiftStats, "take", noting_take)
    journal = Journal(tmp_path / JOURNAL_FILE)
    await journal.open()
    tracemalloc.start()
    try:
        await hub.rebuild(journal, now=lambda: start + timedelta(hours=21))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await journal.close()
    assert hub.tables["ta-1"].stats.numbers.rounds == 120
    assert counted_on
    assert threading.main_thread().ident not in counted_on
    assert peak < 8 * 2**20, f"the rebuild held {peak / 2**20:.0f} MiB at its peak"


async def test_a_broker_that_lost_the_stats_is_told_them_again_from_the_shift_not_a_copy(
    tmp_path: Path,
) -> None:
    """The outbox keeps no copy of `<table>/stats` (some 150 KiB a table at a shift's end):
    when a broker that lost its retained messages must be told again, the hub makes the state
    again, byte for byte what it published; a table that never published is not told."""
    start = datetime(2026, 11, 28, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    await write_journal(tmp_path, [config], start, 1, Pace(rounds_per_hour=30, opens=8, hours=3))
    outbox = MemoryOutbox()

    def publish(message: OutboundMessage) -> None:
        outbox.put(message)

    hub = StatsHub(["bj-1", "bj-9"], NumbersConfig(), Topics(), publish)
    outbox.remade_by(hub)
    other = OutboundMessage("shoe2mqtt/bj-1/journal", b'{"state":"ok"}', retain=True)
    outbox.put(other)
    journal = Journal(tmp_path / JOURNAL_FILE)
    await journal.open()
    try:
        await hub.rebuild(journal, now=lambda: start + timedelta(hours=11))
    finally:
        await journal.close()
    published = [outbox.pending_at(i).message for i in range(len(outbox))]
    assert [m.topic for m in published] == ["shoe2mqtt/bj-1/journal", "shoe2mqtt/bj-1/stats"]
    assert outbox.retained() == []  # nothing acknowledged: everything goes out anyway
    while (queued := outbox.peek()) is not None:
        outbox.ack(queued.message_id)
    told = outbox.retained()
    assert told == [other, published[1]]
    assert told[0] is other  # kept
    assert told[1] is not published[1]  # made again


async def test_the_closed_days_are_published_as_a_report_counts_them(tmp_path: Path) -> None:
    """Three days written by the journal's own store, the first archived; on the third the
    hub publishes the two closed days (not today), each as `report --by day` counts it, and
    counts a day again only when a round of a new day closes it."""
    start = datetime(2026, 11, 27, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    await write_journal(tmp_path, [config], start, 3, Pace(8, opens=19, hours=1), keep_days=1)
    numbers = NumbersConfig()
    published: list[OutboundMessage] = []
    hub = StatsHub(["bj-1", "bj-9"], numbers, Topics(), published.append)
    now = start + timedelta(days=2, hours=23)
    days = hub.keep_days(tmp_path / JOURNAL_FILE, tmp_path / "archive", lambda: now)
    task = asyncio.create_task(days, name="days")
    try:
        # The days are counted by a process of its own (Python and DuckDB to start, the
        # archive to read): 1.4 s alone, over 10 s on a CI machine running four workers.
        await until(lambda: len(published) == 2, within=60)
        hub._day_closed.set()  # a round closed a day, but today is still the 29th: nothing new
        await asyncio.sleep(0.1)
        assert len(published) == 2
    finally:
        task.cancel()
        await asyncio.wait([task])
    reader = JournalReader(tmp_path / JOURNAL_FILE, Archive(tmp_path / "archive"))
    try:
        grouped = Grouped("day", Shifts.parse(numbers.shifts))
        for record in sources.records(reader):
            grouped.add(record)
        archived = reader.archive_files("bj-1")
    finally:
        reader.close()
    expected = [g.to_mapping() for g in grouped.numbers() if g.key["day"] < "2026-11-29"]
    assert [d["day"] for d in expected] == ["2026-11-27", "2026-11-28"]
    assert archived  # the closed days are read from the archive too
    by_topic = {m.topic: json.loads(m.payload) for m in published}
    assert all(m.retain for m in published)
    assert by_topic["shoe2mqtt/bj-1/days"]["days"] == expected
    assert by_topic["shoe2mqtt/bj-9/days"]["days"] == []  # a table the journal has not met


async def test_a_table_that_journaled_nothing_before_today_is_told_its_days_without_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new table PC: the journal's first event is today's, nothing is archived. Every
    table is told its (no) closed days at once, and no counting process is started for it
    (half a second of a core at each start); a table that dealt yesterday still is."""
    start = datetime(2026, 11, 27, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    # Its configuration is journaled on the 26th at 19:00, its rounds on the 27th.
    await write_journal(tmp_path, [config], start, 1, Pace(8, opens=19, hours=1))
    jobs: list[dict[str, Any]] = []

    async def counting(job: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        jobs.append(job)
        return {table: [] for table in job["tables"]}

    monkeypatch.setattr(daemon_side, "count_apart", counting)

    async def told(now: datetime) -> dict[str, Any]:
        published: list[OutboundMessage] = []
        hub = StatsHub(["bj-1", "bj-9"], NumbersConfig(), Topics(), published.append)
        days = hub.keep_days(tmp_path / JOURNAL_FILE, tmp_path / "archive", lambda: now)
        task = asyncio.create_task(days, name="days")
        try:
            await until(lambda: len(published) == 2, within=30)
        finally:
            task.cancel()
            await asyncio.wait([task])
        return {m.topic: json.loads(m.payload)["days"] for m in published}

    none: dict[str, Any] = {"shoe2mqtt/bj-1/days": [], "shoe2mqtt/bj-9/days": []}
    assert await told(start - timedelta(hours=4)) == none  # the 26th, 20:00: its first day
    assert jobs == []
    assert await told(start + timedelta(hours=23)) == none  # the 27th: the 26th is closed
    assert [sorted(job["tables"]) for job in jobs] == [["bj-1"]]


async def test_the_history_keeps_the_shifts_last_rounds_and_starts_again_with_a_shift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two days of one table fed as the journal holds them, the history bounded at 10: each
    new shift starts it again, and the state holds the last 10 rounds of the last shift."""
    monkeypatch.setattr(live, "HISTORY", 10)
    start = datetime(2026, 11, 28, tzinfo=UTC)
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    await write_journal(tmp_path, [config], start, 2, Pace(rounds_per_hour=30, opens=19, hours=3))
    reader = JournalReader(tmp_path / JOURNAL_FILE, Archive(tmp_path / "archive"))
    try:
        records = list(sources.records(reader))
    finally:
        reader.close()
    shifts = Shifts.parse(("06:00", "20:30"))
    stats = live.ShiftStats("bj-1", shifts)
    assert stats.take(records)
    rounds = [r for r in records if isinstance(r, RoundRecord)]
    last_shift = [r for r in rounds if shifts.shift_label(r.started) == stats.shift]
    assert 10 < len(last_shift) < len(rounds)
    state = stats.state()
    assert [r["round"] for r in state["history"]] == [r.round_id for r in last_shift[-10:]]
    assert stats.payload() == json.dumps(state, separators=(",", ":")).encode()


async def test_a_restarted_daemon_counts_on_from_the_numbers_it_saved(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    """A real daemon deals two rounds and stops; started again on its journal, it takes its
    shift's numbers back from the row it saved at the first round's end (saved again only
    `SAVE_EVERY` rounds later), replays only what came after it, and has the same numbers;
    then counts the next round on top."""
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    state = tmp_path / "state"
    round_again = events[2:]  # the same round again in the same shoe: no shuffle, no burn
    again = shoe_script(round_again)
    shifts = Shifts.parse()
    shift = shifts.shift_label(datetime.now(UTC))
    async with running_pit(
        table, f"{shoe_script(events)} {again}", mosquitto, state_directory=state
    ) as pit:
        await play(pit, events)
        await play(pit, round_again)
        before = pit.daemon.stats.tables[table["id"]].stats
        assert before.numbers.rounds == 2
        payload = before.payload()
        await until(lambda: len(pit.daemon.outbox) == 0)
    with contextlib.closing(sqlite3.connect(state / JOURNAL_FILE)) as db:
        [(saved_n,)] = db.execute("SELECT n FROM shift_numbers").fetchall()
        [(last_n,)] = db.execute("SELECT last_n FROM tables").fetchall()
    async with running_pit(table, again, mosquitto, state_directory=state) as pit:
        await until(lambda: table["id"] in pit.daemon.stats.rebuilt)
        if shifts.shift_label(datetime.now(UTC)) != shift:
            pytest.skip("a new shift began between the two runs: its numbers start afresh")
        rebuilt = pit.daemon.stats.rebuilt[table["id"]]
        assert rebuilt.resumed
        # The second round's events, and what the start journaled before the rebuild read.
        assert last_n - saved_n <= rebuilt.replayed <= last_n - saved_n + 5 < last_n
        assert pit.daemon.stats.tables[table["id"]].stats.payload() == payload
        await play(pit, round_again)
        after = pit.daemon.stats.tables[table["id"]].stats
        assert after.numbers.rounds == 3
        assert [r["round"] for r in after.state()["history"]] == [1, 2, 3]


@pytest.mark.parametrize("contract", [STATE_CONTRACT, ROUND_CONTRACT])
async def test_a_message_s_body_counts_as_its_decoded_payload(
    tmp_path: Path, contract: int
) -> None:
    """The table hands the numbers each message's body as it sealed it, so they need not
    decode what was just encoded; a message known by its bytes alone is decoded. Four
    hours of a table (120 rounds, seven shoes, four dealers), replayed and counted both
    ways, count alike: the decoded payload is the oracle."""
    config = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    start = datetime(2026, 11, 28, tzinfo=UTC)
    pace = Pace(rounds_per_hour=30, hours=4)
    await write_journal(tmp_path, [config], start, 1, pace, contract=contract)
    db = sqlite3.connect(tmp_path / JOURNAL_FILE)
    try:
        runner = TableRunner.begin(
            database.read_table(db, "bj-1"), Topics(), database.read_epoch(db),
            checkpoint=None, first_config=database.first_config(db, "bj-1"),
        )  # fmt: skip
        events = database.read_events(db, "bj-1")
    finally:
        db.close()
    shifts = Shifts.parse(("06:00",))
    by_body, by_bytes = live.ShiftStats("bj-1", shifts), live.ShiftStats("bj-1", shifts)
    counted: list[tuple[bool, bool]] = []
    bodies, settings = 0, None
    for event in events:
        applied = runner.apply_stored(event)
        if runner.service.config is not settings:  # the paytable and shoe, as the hub does
            settings = runner.service.config
            for stats in (by_body, by_bytes):
                stats.feed_lines([table_line(settings)])
        request = journal_line(event, applied.owner) if event.kind == "request" else None
        bodies += sum(m.body is not None for m in applied.messages)
        bytes_only = [dataclasses.replace(m, body=None) for m in applied.messages]
        from_body = by_body.feed(request, applied.messages)
        counted.append((from_body, by_bytes.feed(request, bytes_only)))
    assert bodies > 0
    assert all(a == b for a, b in counted)
    assert sum(a for a, _ in counted) > 10  # rounds counted
    assert by_body.state() == by_bytes.state()
    assert by_body.payload() == by_bytes.payload()


@pytest.mark.parametrize("doubt", ["absent", None, "cards_crossed"])
@pytest.mark.parametrize("events", ["absent", [], [{"type": "card_dealt"}], [[1]]])
@pytest.mark.parametrize("nested", [False, True])
def test_a_round_message_is_passed_over_from_its_body_as_from_its_bytes(
    doubt: object,
    events: object,
    nested: bool,  # noqa: FBT001 - a parameter
) -> None:
    """A round message that flags nothing and carries no event counts for nothing, and is
    passed over unread: decided from its body as the bytes' rule decides it (the oracle:
    the regular expressions the numbers read payloads with)."""
    body: dict[str, Any] = {"type": "round_snapshot", "as_of": 7, "review": []}
    if doubt != "absent":
        body["doubt"] = doubt
    if events != "absent":
        body["events"] = events
    if nested:  # a response's own snapshot, with the same doubt at the same moment
        own = {"events": []} | ({} if doubt == "absent" else {"doubt": doubt})
        body["response"] = {"data": own}
    payload = json.dumps(body, separators=(",", ":")).encode()
    from_bytes = live._read("bj-1/round", payload) is None  # the two rules,
    assert live._quiet(body) is from_bytes  # held to each other
