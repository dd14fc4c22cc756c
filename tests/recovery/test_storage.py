"""The journal's storage fails under a playing table, for real, and the daemon rides it out.

The journal lives on a small tmpfs mounted for the test (this suite runs as
root; without the right to mount, these tests are skipped and say so). In the middle of a
round the storage goes: the file system fills up (a file written until ENOSPC), or it is
remounted read-only; or, at a start, the journal file is one the daemon may not write (owned
by another user, the daemon run without the capabilities that let root ignore that). The
daemon must stay up, publish nothing for what it could not journal, tell the pit at once
(`<table>/journal`, the log, systemd's status), keep what comes meanwhile, and go on by itself
when the storage is back. Then the round is played out, and everything delivered is held
against a replay of the journal (`daemon.testing.verify`): nothing lost, duplicated or
reordered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing import TABLE_ID, recovery_run, until, verify
from daemon.testing.recorder import state_as_of
from drivers.emulator import EmulatedShoe, EmulatorSettings

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from daemon.testing import Disturbance, Mosquitto, RecoveryRun

SEED = 5
NOBODY = 65534
# Root without these is held to file permissions like anyone: what the daemon's own user is.
SETPRIV = shutil.which("setpriv")
NO_OVERRIDE = ("-dac_override", "-dac_read_search", "-fowner")


@contextlib.contextmanager
def small_file_system(where: Path, size: str = "16m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` for the test; unmounted after."""
    where.mkdir()
    mounted = subprocess.run(  # noqa: S603 - fixed tool and arguments
        ["/bin/mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}): run as root")
    try:
        yield where
    finally:
        subprocess.run(["/bin/umount", "-l", str(where)], check=True)  # noqa: S603 - fixed tool


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True)  # noqa: S603 - fixed tools


@contextlib.contextmanager
def ext4_on_a_loop_device(image: Path, where: Path) -> Iterator[Path]:
    """An ext4 file system in `image`, mounted at `where` as a table PC mounts its disk:
    `errors=remount-ro`, so that an error makes the kernel remount it read-only at once."""
    where.mkdir()
    try:
        _run("/usr/sbin/mkfs.ext4", "-q", "-F", str(image), "16M")
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        pytest.skip(f"cannot make an ext4 file system here: {exc}")
    mount = ("/bin/mount", "-o", "loop,errors=remount-ro", str(image), str(where))
    try:
        _run(*mount)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a loop device here ({exc.stderr!r}): run as root")
    try:
        yield where
    finally:
        subprocess.run(["/bin/umount", str(where)], check=False)  # noqa: S603 - fixed tool


def ext4_error(where: Path) -> None:
    """What a failing disk does to ext4: an error, and the kernel's emergency read-only
    remount (ext4's own `trigger_fs_error`, made for this)."""
    device = subprocess.run(  # noqa: S603 - fixed tool
        ["/bin/findmnt", "-n", "-o", "SOURCE", str(where)],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path("/sys/fs/ext4") / Path(device).name / "trigger_fs_error").write_text("test\n")


def repair(image: Path, where: Path) -> None:
    """What the site does after it: unmount, check the file system, mount it again."""
    _run("/bin/umount", str(where))
    subprocess.run(["/usr/sbin/e2fsck", "-fy", str(image)], check=False, capture_output=True)  # noqa: S603 - fixed tool
    _run("/bin/mount", "-o", "loop,errors=remount-ro", str(image), str(where))


def fill(where: Path) -> Path:
    """Write a file until the file system is full; returns it (delete it to free the space)."""
    filler = where / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as out:
        block = b"\0" * 65536
        while True:
            out.write(block)
            out.flush()
    return filler


class Notifications:
    """systemd's end of NOTIFY_SOCKET: every STATUS the daemon sends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.setblocking(False)
        self.received: list[str] = []

    def read(self) -> list[str]:
        with contextlib.suppress(BlockingIOError):
            while True:
                self.received.append(self.sock.recv(4096).decode())
        return self.received

    def close(self) -> None:
        self.sock.close()


def cards_journaled(run: RecoveryRun) -> int:
    """The cards the journal holds (each frame once: a repeat is never journaled)."""
    with contextlib.closing(sqlite3.connect(run.state / "journal.sqlite3")) as db:
        rows = db.execute("SELECT body FROM events WHERE kind = 'shoe'").fetchall()
    return sum(1 for (body,) in rows if json.loads(body)["event"] == "CardDrawn")


def journal_states(run: RecoveryRun, after: int = 0) -> list[dict[str, Any]]:
    topic = run.collector.topics.journal_state(TABLE_ID)
    return [m.body for m in run.collector.messages[after:] if m.topic == topic]


def table_messages(run: RecoveryRun, after: int) -> list[str]:
    """Topics of the table's messages since `after` that only the journal makes: its numbered
    messages, and a round state that reflects one of them (a state that waited for its 250 ms
    may go out meanwhile: it shows only what was journaled before). A table's closed days are
    not among them: they are counted at start from what the journal already holds, and on a
    loaded machine that count may go out only after the fault."""
    prefix = f"{run.collector.topics.base}/{TABLE_ID}/"
    earlier = run.collector.messages[:after]
    before = max((state_as_of(m.body) for m in earlier if m.topic.startswith(prefix)), default=0)
    return [
        m.topic
        for m in run.collector.messages[after:]
        if m.topic.startswith(prefix)
        and "/request/" not in m.topic
        and not m.topic.endswith(("/journal", "/availability", "/days"))
        and not (m.topic.endswith("/round") and state_as_of(m.body) <= before)
    ]


async def ride_out(
    run: RecoveryRun,
    shoe: EmulatedShoe,
    break_storage: Callable[[], None],
    mend_storage: Callable[[], None],
    *,
    reason: str,
) -> None:
    """Break the storage in the middle of a step, check the daemon's answer, mend it."""
    mark = run.collector.mark()
    break_storage()
    await shoe.next_card()  # the shoe deals on: the card waits, it is not applied
    await run.dealer.request("status", {})  # a request the journal cannot take either
    failing = await run.collector.wait(
        lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "failing",
        after=mark,
    )
    assert reason in failing.body["reason"]
    since = run.collector.messages.index(failing)
    await asyncio.sleep(1.0)  # the daemon tries again meanwhile, and stays up
    run.daemon.check()
    assert table_messages(run, since) == [], "published what it could not journal"
    await shoe.next_card()  # and a second card, kept in order behind the first
    mend_storage()
    await run.collector.wait(
        lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "ok",
        after=mark,
    )
    log = run.daemon.log.read_text()
    failed = [json.loads(line) for line in log.splitlines() if "journal.write_failed" in line]
    assert failed, run.daemon.tail()
    assert failed[-1]["level"] == "error"
    assert "journal.write_resumed" in log


async def play_with_a_fault(
    tmp_path: Path, broker: Mosquitto, fault: Callable[[RecoveryRun, EmulatedShoe], Awaitable[None]]
) -> RecoveryRun:
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    with small_file_system(tmp_path / "fs") as fs:
        async with (
            EmulatedShoe(settings) as shoe,
            recovery_run(tmp_path, broker, rng, shoe=shoe, state=fs / "state") as run,
        ):
            steps = iter(range(100))

            def disturb() -> Disturbance | None:
                return (lambda: fault(run, shoe)) if next(steps) == 6 else None

            await run.begin()
            await run.dealer.play_round(disturb)
            assert await run.finish() == 0, run.daemon.tail()
            verdict = verify(run.collector.messages, run.replay())
            # Every card the shoe dealt is in the journal, those of the fault included.
            assert cards_journaled(run) == shoe.stats.cards
    assert verdict.ok, verdict.explain()
    assert verdict.expected > 0
    return run


def filler_gone(filler: list[Path]) -> Callable[[], None]:
    def free() -> None:
        filler[0].unlink()

    return free


@pytest.mark.timeout(60)
async def test_a_full_disk_mid_round(tmp_path: Path, mosquitto: Mosquitto) -> None:
    async def fault(run: RecoveryRun, shoe: EmulatedShoe) -> None:
        filler: list[Path] = []
        await ride_out(
            run, shoe,
            lambda: filler.append(fill(run.state.parent)),
            filler_gone(filler),
            reason="the disk is full",
        )  # fmt: skip

    await play_with_a_fault(tmp_path, mosquitto, fault)


@pytest.mark.timeout(90)
async def test_a_disk_the_kernel_remounts_read_only_mid_round(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """ext4 with errors=remount-ro goes read-only under the daemon (the kernel's emergency
    remount, open files and all). The daemon stays up and says so; a read-only disk comes
    back only through a person (unmount, fsck, mount), so the daemon is then stopped and
    started again, and goes on where its journal stopped."""
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    image = tmp_path / "disk.img"
    with ext4_on_a_loop_device(image, tmp_path / "fs") as fs:
        async with (
            EmulatedShoe(settings) as shoe,
            recovery_run(tmp_path, mosquitto, rng, shoe=shoe, state=fs / "state") as run,
        ):

            async def fault() -> None:
                mark = run.collector.mark()
                ext4_error(fs)
                await run.dealer.request("status", {})  # the journal cannot take it
                failing = await run.collector.wait(
                    lambda m: (
                        m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "failing"
                    ),
                    after=mark,
                )
                assert "read-only" in failing.body["reason"], failing.body
                since = run.collector.messages.index(failing)
                await shoe.next_card()  # kept by the shoe, unacknowledged, through the repair
                await asyncio.sleep(1.0)
                run.daemon.check()  # up, trying again
                assert table_messages(run, since) == [], "published what it could not journal"
                assert await run.daemon.stop() == 0, run.daemon.tail()
                repair(image, fs)
                await run.start_daemon()
                await run.collector.wait(
                    lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "ok",
                    after=since,
                )

            steps = iter(range(100))
            await run.begin()
            await run.dealer.play_round(lambda: fault if next(steps) == 6 else None)
            assert await run.finish() == 0, run.daemon.tail()
            verdict = verify(run.collector.messages, run.replay())
            assert cards_journaled(run) == shoe.stats.cards  # the one of the fault too
    assert verdict.ok, verdict.explain()
    assert "journal.write_failed" in run.daemon.log.read_text()


@pytest.mark.timeout(60)
async def test_a_start_on_a_full_disk_comes_up_says_so_and_goes_on(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Restarted while the disk is full, the daemon does not exit (systemd would give up on
    it): it comes up, tells the pit and systemd, and journals its start once it can."""
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    notifications = Notifications(tmp_path / "notify.sock")
    with small_file_system(tmp_path / "fs") as fs:
        async with (
            EmulatedShoe(settings) as shoe,
            recovery_run(tmp_path, mosquitto, rng, shoe=shoe, state=fs / "state") as run,
        ):
            await run.begin()
            await run.daemon.stop()
            filler = fill(fs)
            mark = run.collector.mark()
            environment = {**os.environ, "NOTIFY_SOCKET": str(notifications.path)}
            await run.daemon.start(environment)
            await run.collector.wait_online(mark)  # up, and on the broker
            await run.collector.wait(
                lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "failing",
                after=mark,
            )
            await until(lambda: any("READY=1" in n for n in notifications.read()))
            assert any("JOURNAL FAILING (the disk is full)" in n for n in notifications.read())
            filler.unlink()
            await run.collector.wait(
                lambda m: m.topic == run.collector.topics.table_state(TABLE_ID), after=mark
            )  # the start is journaled: the table's retained state goes out
            await run.dealer.resync()
            await run.dealer.play_round(lambda: None)
            assert await run.finish() == 0, run.daemon.tail()
            verdict = verify(run.collector.messages, run.replay())
    notifications.close()
    assert verdict.ok, verdict.explain()


@pytest.mark.skipif(SETPRIV is None, reason="setpriv (util-linux) is needed")
@pytest.mark.timeout(60)
async def test_a_journal_file_the_daemon_may_not_write(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Owned by someone else and not writable for the daemon's user: the daemon starts,
    reads it, says it cannot write it, and goes on once the file is its own again."""
    assert SETPRIV is not None
    prefix = (SETPRIV, f"--inh-caps={','.join(NO_OVERRIDE)}",
              f"--bounding-set={','.join(NO_OVERRIDE)}")  # fmt: skip
    rng = random.Random(SEED)  # noqa: S311 - a seeded table, not a secret
    settings = EmulatorSettings(protocol="reference", seed=SEED, link=tmp_path / "shoe0")
    async with (
        EmulatedShoe(settings) as shoe,
        recovery_run(tmp_path, mosquitto, rng, shoe=shoe, daemon_prefix=prefix) as run,
    ):
        await run.begin()
        await run.daemon.stop()
        journal = run.state / "journal.sqlite3"
        os.chown(journal, NOBODY, NOBODY)
        journal.chmod(0o644)
        mark = run.collector.mark()
        await run.daemon.start()
        await run.collector.wait_online(mark)
        failing = await run.collector.wait(
            lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "failing",
            after=mark,
        )
        assert "read-only" in failing.body["reason"]
        assert journal.stat().st_uid == NOBODY  # it could not make the file its own
        os.chown(journal, 0, 0)
        journal.chmod(0o600)
        await run.collector.wait(
            lambda m: m.topic.endswith(f"/{TABLE_ID}/journal") and m.body["state"] == "ok",
            after=mark,
        )
        await run.dealer.resync()
        await run.dealer.play_round(lambda: None)
        assert await run.finish() == 0, run.daemon.tail()
        verdict = verify(run.collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
