"""Closed rounds older than `keep_days` leave the live database for the archive, and are
still found there: listed, shown as published, exported, replayed, verified.

The journal is a real one (tests/daemon/journals.py): three rounds played at a real pit;
after two, the archive ran with a clock three days ahead (keep_days = 1), and the daemon
started again over what was left and played the third.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from daemon.history.archiving import Archived, archive_due
from daemon.history.audit import JournalReader
from daemon.journal import Journal
from daemon.journal.archive import Archive
from daemon.simulator.tables import DEMO_TABLES
from daemon.table.log_lines import checkpoint_of_line
from daemon.wire.topics import Topics
from rules.config import TableConfig
from rules.games import Game
from tests.daemon.commands import shoe2mqtt
from tests.daemon.journals import dated_journal

if TYPE_CHECKING:
    from pathlib import Path

    from tests.daemon.journals import RealJournal

ENVELOPE = ("schema", "id", "table", "seq", "ts", "review")


def test_archived_rounds_leave_the_database_and_are_found_in_the_archive(
    made_journal: RealJournal,
) -> None:
    state = made_journal.state
    with contextlib.closing(sqlite3.connect(state / "journal.sqlite3")) as db:
        archived_n, first_live = db.execute(
            "SELECT archived_n, (SELECT min(n) FROM events) FROM tables"
        ).fetchone()
        live_rounds = db.execute("SELECT round_id FROM rounds").fetchall()
    assert archived_n > 0
    assert first_live == archived_n + 1
    assert live_rounds == [(3,)]
    [day] = Archive(made_journal.archive).files()
    assert (day.first_n, day.last_n) == (1, archived_n)
    assert [r["round"] for r in day.rounds] == [1, 2]

    listed = shoe2mqtt("journal", "--state-directory", str(state), "list", process=True)
    assert listed.returncode == 0, listed.stderr
    rounds = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["round"], r["archive"]) for r in rounds] == [
        (1, day.file),
        (2, day.file),
        (3, None),
    ]
    # What `show` and `export` print of a round is the same before and after it moved.
    shown = shoe2mqtt("journal", "--state-directory", str(state), "show", "1", "--table", "bj-1")
    assert [json.loads(line) for line in shown.stdout.splitlines()] == made_journal.shown
    exported = shoe2mqtt(
        "journal", "--state-directory", str(state), "export", "1", "--table", "bj-1"
    )
    assert [json.loads(line) for line in exported.stdout.splitlines()] == made_journal.exported
    verified = shoe2mqtt("journal", "--state-directory", str(state), "verify")
    assert verified.returncode == 0, verified.stderr
    assert f"({archived_n} in 1 archive files)" in verified.stdout


def test_a_day_file_replays_to_the_settlements_it_says_were_published(
    made_journal: RealJournal, tmp_path: Path
) -> None:
    [day] = Archive(made_journal.archive).files()
    path = made_journal.archive / day.file
    with gzip.open(path, "rt", encoding="utf-8") as text:
        lines = [json.loads(line) for line in text]
    assert checkpoint_of_line("bj-1", lines[0]) is not None  # the table's state at its start
    published = [
        {k: v for k, v in line["message"].items() if k not in ENVELOPE}
        for line in lines
        if line["type"] == "published" and line["topic"].endswith("/settlement")
    ]
    replayed = shoe2mqtt("replay", str(path), process=True)  # as docs/events.md shows it
    assert replayed.returncode == 0, replayed.stderr
    settlements = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert [s for s in settlements if s["type"] == "settlement"] == published
    assert len(published) == 6
    # A reader that lost the archive still reads the live rounds.
    reader = JournalReader(made_journal.state / "journal.sqlite3", Archive(tmp_path / "none"))
    try:
        assert [r.entry.round_id for r in reader.rounds()] == [3]
        [verdict] = reader.verify()
        assert not verdict.ok
        missing = f"removed: events 1-{day.last_n} missing before it"
        assert str(verdict.problem).endswith(missing)
    finally:
        reader.close()


# ---------------------------------------------------------------- by event number, never over
TODAY = datetime.now(UTC).date()


def _config() -> TableConfig:
    return TableConfig.from_mapping(DEMO_TABLES[Game.BLACKJACK])


async def _archive(state: Path) -> list[Archived]:
    """Archive as the daemon does, keep_days = 1."""
    journal = Journal(state / "journal.sqlite3")
    await journal.open()
    try:
        return await archive_due(journal, Archive(state / "archive"), 1, Topics())
    finally:
        await journal.close()


def _placed(state: Path) -> tuple[list[int], list[int]]:
    """The numbers of the events in the archive's files (every journal line of every file the
    manifest names, in order) and in the live database."""
    archive = Archive(state / "archive")
    archived = [
        line["n"]
        for file in archive.files()
        for _, line in archive.lines(file)
        if line["type"] == "journal"
    ]
    with contextlib.closing(sqlite3.connect(state / "journal.sqlite3")) as db:
        live = [n for (n,) in db.execute("SELECT n FROM events ORDER BY n")]
    return archived, live


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_whole(state: Path, last_n: int, rounds: int) -> None:
    """Every event in exactly one place, in order; `journal verify` and `list` as typed."""
    archived, live = _placed(state)
    assert archived + live == list(range(1, last_n + 1))
    verified = shoe2mqtt("journal", "--state-directory", str(state), "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    listed = shoe2mqtt("journal", "--state-directory", str(state), "list")
    assert [json.loads(line)["round"] for line in listed.stdout.splitlines()] == list(
        range(1, rounds + 1)
    )


async def test_days_that_come_again_are_archived_in_the_order_of_their_events(
    tmp_path: Path,
) -> None:
    """A journal whose days went back (a clock stepped back, before the journal's time was
    held): each run of one day's events is a file of its own, cut by event number; the day
    that comes again gets a second file, never the first one's place."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    d = [TODAY - timedelta(days=k) for k in range(6)]
    last = await dated_journal(state / "journal.sqlite3", _config(), [d[3], d[3], d[5], d[3], d[0]])
    done = await _archive(state)
    assert [(a.day, a.file) for a in done] == [
        (d[3].isoformat(), f"bj-1/{d[3]}.jsonl.gz"),
        (d[5].isoformat(), f"bj-1/{d[5]}.jsonl.gz"),
        (d[3].isoformat(), f"bj-1/{d[3]}.2.jsonl.gz"),
    ]
    assert [f.first_n for f in Archive(state / "archive").files()] == [
        1, done[0].last_n + 1, done[1].last_n + 1,
    ]  # fmt: skip
    _assert_whole(state, last, rounds=5)


async def test_a_day_archived_again_later_gets_a_file_of_its_own(tmp_path: Path) -> None:
    """An archived day comes again (a clock set back into it): the next run writes a second
    file of that day; the first is never rewritten, its manifest entry never replaced."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    journal, day = state / "journal.sqlite3", TODAY - timedelta(days=2)
    await dated_journal(journal, _config(), [day, day])
    [first] = await _archive(state)
    first_file = state / "archive" / first.file
    before = (_sha256(first_file), Archive(state / "archive").files())
    last = await dated_journal(journal, _config(), [day, TODAY], rounds_from=2)
    [second] = await _archive(state)
    assert second.file == f"bj-1/{day}.2.jsonl.gz"
    assert second.first_n == first.last_n + 1
    files = Archive(state / "archive").files()
    assert (_sha256(first_file), files[:1]) == before
    _assert_whole(state, last, rounds=4)


async def test_a_failed_archive_leaves_nothing_named(tmp_path: Path) -> None:
    """The replay must land on the checkpoint the table took: when it does not (here, a
    checkpoint edited), the file is not placed and not named, and the events stay."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    last = await dated_journal(state / "journal.sqlite3", _config(), [TODAY - timedelta(days=3)])
    with contextlib.closing(sqlite3.connect(state / "journal.sqlite3")) as db, db:
        db.execute(
            "UPDATE checkpoints SET state = json_set(state, '$.service.next_round', 99) "
            "WHERE n = (SELECT max(n) FROM checkpoints)"
        )
    assert await _archive(state) == []
    archive = state / "archive"
    assert Archive(archive).files() == []
    assert sorted(p.name for p in archive.rglob("*") if p.is_file()) == [".lock"]
    archived, live = _placed(state)
    assert (archived, live) == ([], list(range(1, last + 1)))


async def test_a_file_is_placed_only_where_nothing_else_is(tmp_path: Path) -> None:
    """A file someone left at the day's name is kept as it is; the new file takes the day's
    next name."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    day = TODAY - timedelta(days=2)
    last = await dated_journal(state / "journal.sqlite3", _config(), [day, TODAY])
    stranger = state / "archive" / "bj-1" / f"{day}.jsonl.gz"
    stranger.parent.mkdir(parents=True)
    stranger.write_bytes(b"not ours")
    [placed] = await _archive(state)
    assert placed.file == f"bj-1/{day}.2.jsonl.gz"
    assert stranger.read_bytes() == b"not ours"
    _assert_whole(state, last, rounds=2)


async def test_a_file_left_unnamed_by_a_stopped_archiver_is_named_as_it_is(
    tmp_path: Path,
) -> None:
    """An archiver stopped between placing a file and naming it: the next writes the very
    same bytes, and takes the file it finds instead of a second one."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    day = TODAY - timedelta(days=2)
    last = await dated_journal(state / "journal.sqlite3", _config(), [day, TODAY])
    twin = tmp_path / "twin"
    shutil.copytree(state, twin)
    [made] = await _archive(twin)
    left = state / "archive" / made.file
    left.parent.mkdir(parents=True)
    shutil.copy(twin / "archive" / made.file, left)  # placed, never named
    [placed] = await _archive(state)
    assert placed.file == made.file
    assert sorted(p.name for p in left.parent.iterdir()) == [left.name]
    _assert_whole(state, last, rounds=2)


def test_temporary_files_left_by_a_killed_archiver_are_removed(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "archive")
    (archive.directory / "bj-1").mkdir(parents=True)
    (archive.directory / "bj-1" / ".2026-11-29.abc123.tmp").write_bytes(b"x" * 1000)
    (archive.directory / ".manifest.json.def456.tmp").write_bytes(b"y" * 24)
    kept = archive.directory / "bj-1" / "2026-11-29.jsonl.gz"
    kept.write_bytes(b"z")
    assert archive.remove_temporaries() == (2, 1024)
    assert sorted(p.name for p in archive.directory.rglob("*") if p.is_file()) == [kept.name]


async def test_a_table_that_fails_keeps_what_was_named_and_the_others_go_on(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    journal = state / "journal.sqlite3"
    days = [TODAY - timedelta(days=3), TODAY - timedelta(days=2)]
    await dated_journal(journal, _config(), days)
    other = TableConfig.from_mapping({**DEMO_TABLES[Game.BLACKJACK], "id": "bj-2"})
    await dated_journal(journal, other, days[:1])
    with contextlib.closing(sqlite3.connect(journal)) as db, db:  # bj-1's second day's cut
        db.execute(
            "UPDATE checkpoints SET state = json_set(state, '$.service.next_round', 99) "
            "WHERE table_id = 'bj-1' AND n = (SELECT max(n) FROM checkpoints "
            "WHERE table_id = 'bj-1')"
        )
    done = await _archive(state)
    assert [(a.table, a.day) for a in done] == [
        ("bj-1", days[0].isoformat()), ("bj-2", days[0].isoformat()),
    ]  # fmt: skip
    assert [(f.table, f.day) for f in Archive(state / "archive").files()] == [
        (a.table, a.day) for a in done
    ]
    verified = shoe2mqtt("journal", "--state-directory", str(state), "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
