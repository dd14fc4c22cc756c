"""Tamper evidence: a row or archive line changed, removed, inserted or reordered after the
fact is named by `shoe2mqtt journal verify`, which then exits 1.

Each test edits a copy of a real journal (tests/daemon/journals.py: the daemon's own file
and archive) the way someone with the file and a text editor or sqlite3 would, without
recomputing any hash, and asks `verify` (in this process; one test runs the command).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from daemon.history.audit import JournalReader
from daemon.journal.archive import Archive

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.daemon.journals import RealJournal


def verdict(journal: RealJournal) -> str:
    reader = JournalReader(journal.state / "journal.sqlite3", Archive(journal.archive))
    try:
        [table] = reader.verify()
    finally:
        reader.close()
    assert not table.ok
    return str(table.problem)


# ---------------------------------------------------------------- the database
def edit_rows(journal: RealJournal, *statements: str) -> dict[str, int]:
    """Run `statements` on the copy; returns the row ids of the live events 4th and 5th."""
    with contextlib.closing(sqlite3.connect(journal.state / "journal.sqlite3")) as db:
        ids = [row[0] for row in db.execute("SELECT id FROM events ORDER BY id LIMIT 5")]
        rows = {"fourth": ids[3], "fifth": ids[4]}
        for statement in statements:
            db.execute(statement.format(**rows))
        db.commit()
    return rows


def test_a_changed_row_is_named(journal_copy: RealJournal) -> None:
    rows = edit_rows(
        journal_copy, "UPDATE events SET body = json_set(body, '$.edited', 1) WHERE id = {fourth}"
    )
    assert f"row {rows['fourth']}: changed: " in verdict(journal_copy)


def test_a_removed_row_is_named(journal_copy: RealJournal) -> None:
    rows = edit_rows(journal_copy, "DELETE FROM events WHERE id = {fourth}")
    assert f"row {rows['fifth']}: removed: event " in verdict(journal_copy)


def test_an_inserted_row_is_named(journal_copy: RealJournal) -> None:
    # A copy of the fourth event, slipped in after it (the rows after move up one).
    rows = edit_rows(
        journal_copy,
        "DROP INDEX events_by_table",
        "UPDATE events SET id = -id WHERE id > {fourth}",
        "UPDATE events SET id = 1 - id WHERE id < 0",
        "INSERT INTO events (id, table_id, n, kind, body, at, hash) "
        "SELECT id + 1, table_id, n, kind, body, at, hash FROM events WHERE id = {fourth}",
    )
    assert f"row {rows['fourth'] + 1}: inserted: holds event " in verdict(journal_copy)


def test_reordered_rows_are_named(journal_copy: RealJournal) -> None:
    swap = (
        "UPDATE events SET (n, kind, body, at, hash) = "
        "(SELECT n, kind, body, at, hash FROM swap WHERE swap.id = {other}) WHERE id = {one}"
    )
    rows = edit_rows(
        journal_copy,
        "CREATE TABLE swap AS SELECT id, n, kind, body, at, hash FROM events "
        "WHERE id IN ({fourth}, {fifth})",
        "DROP INDEX events_by_table",
        swap.replace("{one}", "{fourth}").replace("{other}", "{fifth}"),
        swap.replace("{one}", "{fifth}").replace("{other}", "{fourth}"),
    )
    problem = verdict(journal_copy)
    assert f"row {rows['fourth']}: reordered: " in problem
    assert f"comes later, at journal.sqlite3 row {rows['fifth']}" in problem


# ---------------------------------------------------------------- the archive
def edit_lines(
    journal: RealJournal, change: Callable[[list[dict[str, Any]]], None]
) -> list[dict[str, Any]]:
    """Rewrite the copy's day file with `change` made to its lines; returns the old lines."""
    [day] = Archive(journal.archive).files()
    path = journal.archive / day.file
    with gzip.open(path, "rt", encoding="utf-8") as text:
        lines = [json.loads(line) for line in text]
    edited = [dict(line) for line in lines]
    change(edited)
    with gzip.open(path, "wt", encoding="utf-8") as text:
        text.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in edited)
    return lines


def journal_lines(lines: list[dict[str, Any]]) -> list[int]:
    """Indexes of the `journal` lines (line number = index + 1)."""
    return [i for i, line in enumerate(lines) if line["type"] == "journal"]


def nth_card(lines: list[dict[str, Any]], n: int) -> int:
    cards = [i for i in journal_lines(lines) if lines[i]["body"].get("event") == "CardDrawn"]
    return cards[n]


@pytest.mark.parametrize(
    ("edit", "damage"),
    [
        ("change a card", "changed"),
        ("remove an event", "removed"),
        ("insert an event again", "inserted"),
        ("swap two events", "reordered"),
        ("change a settlement", "changed"),
    ],
)
def test_an_archive_line_changed_removed_inserted_or_reordered_is_named(
    journal_copy: RealJournal, edit: str, damage: str
) -> None:
    target: list[int] = []

    def change(lines: list[dict[str, Any]]) -> None:
        card = nth_card(lines, 3)
        nxt = next(i for i in journal_lines(lines) if i > card)
        if edit == "change a card":
            lines[card]["body"]["rank"] = "9" if lines[card]["body"]["rank"] != "9" else "8"
            target.append(card)
        elif edit == "remove an event":
            del lines[card]
            target.append(card)
        elif edit == "insert an event again":
            lines.insert(nxt, lines[card])
            target.append(nxt)
        elif edit == "swap two events":
            lines[card], lines[nxt] = lines[nxt], lines[card]
            target.append(card)
        else:
            paid = next(
                i
                for i, line in enumerate(lines)
                if line["type"] == "published" and line["topic"].endswith("/settlement")
                and line["message"]["won"] != "0.00"
            )  # fmt: skip
            lines[paid]["message"]["won"] = "9999.00"
            target.append(paid)

    lines = edit_lines(journal_copy, change)
    problem = verdict(journal_copy)
    where, found = problem.split(": ")[1:3]
    assert found == damage, problem
    assert where.startswith("bj-1/"), problem
    assert " line " in where, problem
    line = int(where.rsplit(" ", 1)[1])
    if edit == "remove an event":  # named at the next journal line, one line up now
        assert line == min(i for i in journal_lines(lines) if i > target[0]), problem
    else:
        assert line == target[0] + 1, problem


def test_verify_as_typed_exits_1_and_names_the_row(journal_copy: RealJournal) -> None:
    rows = edit_rows(
        journal_copy, "UPDATE events SET at = '2026-01-01T00:00:00.000Z' WHERE id = {fifth}"
    )
    done = subprocess.run(  # noqa: S603 - this Python, our own command and arguments
        [sys.executable, "-m", "daemon.cli", "journal", "--state-directory",
         str(journal_copy.state), "verify"],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout.startswith(f"bj-1: journal.sqlite3 row {rows['fifth']}: changed: ")
    assert done.stderr == "shoe2mqtt journal: verify: the chain is broken at 1 of 1 tables\n"
