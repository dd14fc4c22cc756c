"""Closed rounds older than `keep_days` leave the live database for the archive, and are
still found there: listed, shown as published, exported, replayed, verified.

The journal is a real one (tests/daemon/journals.py): three rounds played at a real pit;
after two, the archive ran with a clock three days ahead (keep_days = 1), and the daemon
started again over what was left and played the third.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import sqlite3
from typing import TYPE_CHECKING

from daemon.journal.archive import Archive
from daemon.journal.audit import JournalReader
from daemon.journal.replay import checkpoint_of_line
from tests.daemon.commands import shoe2mqtt

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
