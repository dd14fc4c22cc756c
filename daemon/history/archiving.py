"""The archive, the daemon's side: when to look, what is due, the archiver run, and the
events leaving the database once the manifest names their file.

`ArchiveTask` is the daemon's `archive` task. At start it removes what an archiver killed
mid-work left (`journal.archive_temporaries_removed`), waits for READY=1 and for the broker
to take what the last run left undelivered (a day is due only once every message it caused
reached the broker), and looks, checking the manifest even when nothing is due; then it
looks every hour, within a minute while days are due but for the broker, and at once when
the clock stepped (what is due depends on the date). Each look is `archive_due`: a cheap
query says whether anything may be due; if so, the archiver (daemon/history/archiver.py, a
process of its own) writes, checks and names the files, reporting each, and the events of
each leave the database as it is reported. The directory and its manifest are
daemon/journal/archive.py's; docs/durability.md says why each step is where it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

import structlog

from daemon.journal import database
from daemon.journal.archive import ArchiveError, Quarantined, cutoff_day
from daemon.journal.errors import JournalError
from daemon.journal.rows import Checkpoint

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from daemon.journal.archive import Archive
    from daemon.journal.clock import JournalClock
    from daemon.journal.store import Journal
    from daemon.wire.topics import Topics

ARCHIVE_EVERY: Final = 3600.0  # seconds between looks for days to archive
ARCHIVE_WAITING: Final = 60.0  # ... while days are due but for the broker
ARCHIVE_START_WAIT: Final = 30.0  # at most, for READY=1 and the backlog at start
log = structlog.get_logger("journal.archive")


ARCHIVER_COMMAND: Final = (sys.executable, "-m", "daemon.history.archiver")
_REPORT_LIMIT: Final = 1 << 26  # bytes in one report line (a checkpoint rides in it)


@dataclass(frozen=True, slots=True)
class Archived:
    """A file the archiver wrote and the manifest names; its events have left the database."""

    table: str
    day: str
    file: str
    first_n: int
    last_n: int
    rounds: int


async def archive_due(
    journal: Journal,
    archive: Archive,
    keep_days: int,
    topics: Topics,
    *,
    now: datetime | None = None,
    look_at_manifest: bool = False,
    on_quarantine: Callable[[Quarantined], None] | None = None,
) -> list[Archived]:
    """Archive every table's events older than `keep_days`, by event number: the archiver
    (a process) writes, checks and names the files; as the manifest names each, its events
    leave the database. Runs the archiver only when something is due, or (`look_at_manifest`:
    at start) when there is a manifest to check. Returns what was archived."""
    before = cutoff_day(keep_days, now)
    await journal.flush()  # the delivered watermarks ride on commits: the latest, first
    due = await journal.read(lambda db: database.archive_may_be_due(db, before))
    if not due and not (look_at_manifest and archive.exists):
        return []
    job = {
        "journal": str(journal.path),
        "archive": str(archive.directory),
        "base_topic": topics.base,
        "before": before,
    }
    began = time.monotonic()
    done = await _run_archiver(journal, job, on_quarantine)
    if done:
        await journal.give_back_space()
        log.info(
            "journal.archive_run",
            files=len(done),
            events=sum(a.last_n - a.first_n + 1 for a in done),
            seconds=round(time.monotonic() - began, 3),
        )
    return done


async def _run_archiver(
    journal: Journal,
    job: dict[str, str],
    on_quarantine: Callable[[Quarantined], None] | None,
) -> list[Archived]:
    """One archiver process: the job on its standard input, a report a line on its standard
    output; killed if the daemon stops meanwhile (what it leaves is harmless: a temporary
    file removed at the next start, or a named file whose events leave the database at the
    next run)."""
    process = await asyncio.create_subprocess_exec(
        *ARCHIVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        limit=_REPORT_LIMIT,
    )
    done: list[Archived] = []
    said: list[str] = []  # what is not a report: a traceback, say
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        # `parent`: the archiver ends with this process, killed or not (daemon.system.parent).
        process.stdin.write(json.dumps({**job, "parent": os.getpid()}).encode())
        await process.stdin.drain()
        process.stdin.close()
        async for raw in process.stdout:
            report = _report(raw)
            if report is None:
                said.append(raw.decode(errors="replace").rstrip())
                continue
            archived = await _take_report(journal, report, on_quarantine)
            if archived is not None:
                done.append(archived)
        code = await process.wait()
    except BaseException:
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise
    if code != 0:
        raise ArchiveError(f"the archiver exited with {code}: {' | '.join(said[-5:])}")
    return done


def _report(raw: bytes) -> dict[str, Any] | None:
    try:
        report = json.loads(raw)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


async def _take_report(
    journal: Journal,
    report: dict[str, Any],
    on_quarantine: Callable[[Quarantined], None] | None,
) -> Archived | None:
    if "quarantined" in report:
        quarantined = Quarantined(Path(report["quarantined"]), str(report["reason"]))
        log.error(
            "journal.archive_quarantined",
            directory=str(quarantined.directory),
            reason=quarantined.reason,
            todo="the archive was moved aside (nothing deleted) and a fresh one begun; repair "
            "its manifest.json in place: `shoe2mqtt journal verify` reads it again",
        )
        if on_quarantine is not None:
            on_quarantine(quarantined)
        return None
    if "failed" in report:
        log.error("journal.archive_failed", table=report["failed"], error=report["error"])
        return None
    entry, mark = report["archived"], report["checkpoint"]
    table_id = entry["table"]
    checkpoint = Checkpoint(
        table_id, mark["n"], mark["next_seq"], mark["at"], mark["open_round"], mark["state"]
    )
    # The manifest names the file: its events may leave the database.
    await journal.drop_archived(table_id, checkpoint)
    archived = Archived(
        table_id, entry["day"], entry["file"], entry["first_n"], entry["last_n"], entry["rounds"]
    )
    log.info(
        "journal.archived",
        table=table_id,
        day=archived.day,
        events=archived.last_n - archived.first_n + 1,
        rounds=archived.rounds,
        file=archived.file,
    )
    return archived


@dataclass
class ArchiveTask:
    """The daemon's `archive` task (module docstring). `ready`: whether the daemon said
    READY=1; `backlog`: the messages waiting for the broker; `notice`: a word to every
    table's pit (kind, message)."""

    journal: Journal
    archive: Archive
    keep_days: int
    topics: Topics
    clock: JournalClock
    ready: Callable[[], bool]
    backlog: Callable[[], int]
    notice: Callable[[str, str], None]

    def __post_init__(self) -> None:
        self._clock_changed = asyncio.Event()

    def clock_changed(self) -> None:
        """The clock stepped: look again at once."""
        self._clock_changed.set()

    async def run(self) -> NoReturn:
        await self._remove_temporaries()
        await self._started(ARCHIVE_START_WAIT)
        starting = True
        while True:
            waiting = await self._look(starting=starting)
            starting = False
            await self._later(ARCHIVE_WAITING if waiting else ARCHIVE_EVERY)

    async def _look(self, *, starting: bool) -> bool:
        """Archive what is due; whether days are due but for the broker."""
        now = self.clock.now()
        try:
            await archive_due(
                self.journal, self.archive, self.keep_days, self.topics, now=now,
                look_at_manifest=starting, on_quarantine=self._quarantined,
            )  # fmt: skip
            return await self.journal.read(
                functools.partial(
                    database.archive_may_be_due,
                    before_day=cutoff_day(self.keep_days, now),
                    delivered=False,
                )
            )
        except (ArchiveError, JournalError, OSError) as exc:
            log.error(  # noqa: TRY400 - the reason is the message; it is retried
                "journal.archive_failed",
                error=str(exc),
                directory=str(self.archive.directory),
                retry_in=ARCHIVE_EVERY,
            )
            return False

    async def _later(self, seconds: float) -> None:
        """Until the next look: `seconds`, or at once when the clock stepped."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._clock_changed.wait()
        self._clock_changed.clear()

    async def _remove_temporaries(self) -> None:
        try:
            count, size = await asyncio.to_thread(self.archive.remove_temporaries)
        except OSError as exc:
            where = str(self.archive.directory)
            log.error("journal.archive_failed", error=str(exc), directory=where)  # noqa: TRY400 - the reason is the message
            return
        if count:
            log.info("journal.archive_temporaries_removed", files=count, bytes=size)

    async def _started(self, within: float) -> None:
        """Until the daemon is ready (READY=1 never waits on the archive) and its outbox
        empty (what the last run left undelivered has reached the broker: its days are due
        only then), or `within` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while (not self.ready() or self.backlog()) and loop.time() < deadline:  # noqa: ASYNC110 - neither signals its end; once, at start
            await asyncio.sleep(0.2)

    def _quarantined(self, quarantined: Quarantined) -> None:
        """Every table's pit hears that the archive's manifest was not one."""
        self.notice(
            "archive_quarantined",
            f"the archive's manifest could not be read ({quarantined.reason}): the archive "
            f"was moved aside to {quarantined.directory}, nothing deleted, and a fresh one "
            "begun; the journal is whole. Repair that manifest in place: `shoe2mqtt journal "
            "verify` reads it again",
        )
