"""The PC's clock steps while the daemon runs, across an archive: no round lost, `ts` never back.

The daemon runs as a process (`python -m daemon.cli run`) under Debian's libfaketime, its
wall clock read from a file the test rewrites (`FAKETIME_TIMESTAMP_FILE`, an offset such as
`-2d`, re-read at every reading); its monotonic clock is left alone, as a real step leaves
it. `keep_days = 1`, so a day two days back is archived at the archive's next look.

All while the daemon runs: a round two days back; the clock set right (the archive looks
at once after a step: that day is archived); a round today; the clock set back two days,
into the archived day: a round, its times held at today's; the clock two days ahead:
today's rounds are archived (they look two days old); the clock set right: its times held
two days on; a restart (the clock is found behind the journal, and told; times still held).

It ends with what an operator would run, as typed: `shoe2mqtt journal verify` exits 0 and
`journal list` lists every round; every journaled event is in exactly one place (a day file
or the live database); each step was logged (`clock.stepped`) and noticed at the table
(`clock_stepped`); and the table's messages, in `seq` order, never go back in `ts`.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from daemon.journal.archive import Archive
from daemon.testing import TABLE_ID, recovery_run, until
from drivers.emulator import EmulatedShoe, EmulatorSettings
from tests.daemon.commands import shoe2mqtt

if TYPE_CHECKING:
    from daemon.testing import Mosquitto, RecoveryRun

LIBFAKETIME: Final = next(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"), None)
SEED: Final = 20261201


class SteppedClock:
    """The daemon's wall clock: real time plus an offset in a file libfaketime re-reads."""

    def __init__(self, path: Path) -> None:
        assert LIBFAKETIME is not None, "libfaketime is missing: apt-get install libfaketime"
        self.path = path
        self.set("+0")

    def set(self, offset: str) -> None:
        """At once: libfaketime reading a file half written would see a step of its own."""
        fresh = self.path.with_suffix(".new")
        fresh.write_text(f"{offset}\n")
        fresh.replace(self.path)

    @property
    def prefix(self) -> tuple[str, ...]:
        """What the daemon runs under (`env` execs it: its PID is the daemon's)."""
        return (
            "env",
            f"LD_PRELOAD={LIBFAKETIME}",
            f"FAKETIME_TIMESTAMP_FILE={self.path}",
            "FAKETIME_NO_CACHE=1",
            # The monotonic clock is not stepped by a real step: asyncio's timers run on it.
            "FAKETIME_DONT_FAKE_MONOTONIC=1",
        )


def _keep_one_day(config: Path) -> None:
    text = config.read_text(encoding="utf-8")
    assert text.index("[journal]") < text.index("[logging]")
    config.write_text(text.replace("[logging]", "keep_days = 1\n[logging]", 1), encoding="utf-8")


def _logged(run: RecoveryRun, event: str) -> int:
    return sum(
        1
        for line in run.daemon.log.read_text(errors="replace").splitlines()
        if line.startswith("{") and json.loads(line).get("event") == event
    )


async def _restart(run: RecoveryRun) -> None:
    assert await run.daemon.stop() == 0, run.daemon.tail()
    await run.start_daemon()
    await run.dealer.resync()


async def _archived_since(run: RecoveryRun, before: int) -> None:
    await until(lambda: _logged(run, "journal.archive_run") > before)


async def _stepped(run: RecoveryRun, mark: int, words: str) -> dict[str, Any]:
    """The `clock_stepped` notice after `mark`, saying `words`."""
    topic = run.collector.topics.notice(TABLE_ID, "clock_stepped")
    found = await run.collector.wait(
        lambda m: m.topic == topic and words in m.body["message"], after=mark
    )
    return found.body


def _assert_whole(run: RecoveryRun, rounds: int) -> None:
    """As an operator checks it, and every event in exactly one place."""
    state = run.state
    verified = shoe2mqtt("journal", "--state-directory", str(state), "verify", process=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    listed = shoe2mqtt("journal", "--state-directory", str(state), "list", process=True)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["round"] for line in listed.stdout.splitlines()] == list(
        range(1, rounds + 1)
    )
    archive = Archive(state / "archive")
    archived = [
        line["n"]
        for file in archive.files()
        for _, line in archive.lines(file)
        if line["type"] == "journal"
    ]
    with contextlib.closing(sqlite3.connect(state / "journal.sqlite3")) as db:
        live = [n for (n,) in db.execute("SELECT n FROM events ORDER BY n")]
        (last,) = db.execute("SELECT last_n FROM tables").fetchone()
    assert archived
    assert archived + live == list(range(1, last + 1))


def _what_the_clock_did(run: RecoveryRun, mark: int) -> str:
    """For a failure: every step the daemon logged and the table's times since `mark`."""
    steps = [
        line
        for line in run.daemon.log.read_text(errors="replace").splitlines()
        if '"clock.stepped"' in line
    ]
    since = [
        (m.body.get("seq"), m.body.get("ts"), m.topic.rsplit("/", 1)[-1])
        for m in run.collector.messages[mark:]
        if m.is_json and m.body.get("table") == TABLE_ID and m.body.get("seq")
    ]
    return "steps logged:\n" + "\n".join(steps) + f"\nmessages since the step: {since}"


def _times_in_order(run: RecoveryRun) -> list[str]:
    """The table's messages by `seq` (each once): their `ts` never goes back."""
    by_seq: dict[int, dict[str, Any]] = {}
    for message in run.collector.messages:
        if message.is_json and message.body.get("table") == TABLE_ID:
            seq = message.body.get("seq")
            if isinstance(seq, int) and seq > 0:
                by_seq[seq] = message.body
    times = [by_seq[seq]["ts"] for seq in sorted(by_seq)]
    assert times == sorted(times)
    return times


def _no_disturbance() -> None:
    return None


@pytest.mark.timeout(90)
async def test_a_clock_stepped_both_ways_across_the_archive_loses_no_round(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    clock = SteppedClock(tmp_path / "faketime")
    clock.set("-2d")
    settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    async with (
        EmulatedShoe(settings) as shoe,
        recovery_run(
            tmp_path,
            mosquitto,
            random.Random(SEED),  # noqa: S311 - a seeded table
            shoe=shoe,
            daemon_prefix=clock.prefix,
        ) as run,
    ):
        _keep_one_day(run.daemon.config)
        await run.begin()
        await run.dealer.play_round(_no_disturbance)  # 1: two days back
        archived = _logged(run, "journal.archive_run")
        mark = run.collector.mark()
        clock.set("+0")  # while it runs: right
        await _stepped(run, mark, "jumped forward 2 days")
        await _archived_since(run, archived)  # round 1's day: the archive looked at once
        await run.dealer.play_round(_no_disturbance)  # 2: today
        held = _times_in_order(run)[-1]
        mark = run.collector.mark()
        clock.set("-2d")  # back into the archived day
        back = await _stepped(run, mark, "set back 2 days")
        await run.dealer.play_round(_no_disturbance)  # 3: held at today's time
        times = _times_in_order(run)
        assert times[-1] == back["ts"] >= held, _what_the_clock_did(run, mark)  # held there
        archived = _logged(run, "journal.archive_run")
        mark = run.collector.mark()
        clock.set("+2d")  # two days ahead of today
        await _stepped(run, mark, "jumped forward 4 days")
        await _archived_since(run, archived)  # rounds 2 and 3 look two days old now
        mark = run.collector.mark()
        clock.set("+0")  # right again
        ahead = await _stepped(run, mark, "set back 2 days")
        mark = run.collector.mark()
        await _restart(run)
        await _stepped(run, mark, "behind the journal")  # found at start
        assert await run.finish() == 0
    assert _logged(run, "clock.stepped") == 5
    assert _times_in_order(run)[-1] == ahead["ts"]  # held (the restart's too) two days on
    days = [f.day for f in Archive(run.state / "archive").files()]
    assert len(days) == 2  # round 1's day, and rounds 2 and 3's: each once
    _assert_whole(run, rounds=3)
