"""daemon/system/notify.py against a real AF_UNIX datagram socket, as systemd would listen on it.

A listener thread stamps each datagram with time.monotonic() the moment it arrives, so the
gaps between watchdog pings are measured outside the event loop that sends them: that is
what shows a blocked loop sends nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import statistics
import time
from typing import TYPE_CHECKING

import pytest
import structlog

from daemon.system.notify import Notifier
from tests.deploy.notify_socket import Listener

if TYPE_CHECKING:
    from collections.abc import Generator
    from pathlib import Path


@pytest.fixture
def listener() -> Generator[Listener]:
    # Abstract namespace: no path-length limit, nothing left on disk.
    sock = Listener(f"@shoe2mqtt-test-{os.getpid()}-{time.monotonic_ns()}")
    yield sock
    sock.close()


def wait_for(condition: object, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def systemd_environment(listener: Listener, watchdog_usec: int) -> dict[str, str]:
    return {
        "NOTIFY_SOCKET": listener.address,
        "WATCHDOG_USEC": str(watchdog_usec),
        "WATCHDOG_PID": str(os.getpid()),
    }


async def test_ready_after_startup_then_pings_at_half_the_interval(listener: Listener) -> None:
    notifier = Notifier.from_environment(systemd_environment(listener, 200_000))
    assert notifier.watchdog_interval() == pytest.approx(0.2)
    async with asyncio.TaskGroup() as group:
        pings = group.create_task(notifier.watchdog_loop(), name="watchdog")
        await asyncio.sleep(0.05)  # the daemon's startup: config, journal, broker
        notifier.ready("serving 1 table")
        await asyncio.sleep(1.0)
        pings.cancel()
    wait_for(lambda: len(listener.times_of("READY")) == 1)
    assert {"READY": "1", "STATUS": "serving 1 table"} in listener.messages()
    times = listener.times_of("WATCHDOG")
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert statistics.median(gaps) == pytest.approx(0.1, abs=0.02), gaps  # half of 0.2 s
    assert max(gaps) < 0.2, gaps  # never a whole interval without one: systemd would kill us


async def test_no_ping_while_the_event_loop_is_blocked(listener: Listener) -> None:
    notifier = Notifier.from_environment(systemd_environment(listener, 100_000))
    async with asyncio.TaskGroup() as group:
        pings = group.create_task(notifier.watchdog_loop(), name="watchdog")
        await asyncio.sleep(0.3)
        blocked_from = time.monotonic()
        time.sleep(0.6)  # noqa: ASYNC251 - the point: a stuck loop, as a bug would block it
        blocked_until = time.monotonic()
        await asyncio.sleep(0.3)
        pings.cancel()
    times = listener.times_of("WATCHDOG")
    assert not [t for t in times if blocked_from + 0.01 < t < blocked_until - 0.01], times
    assert [t for t in times if t < blocked_from], "pinged before the block"
    assert [t for t in times if t > blocked_until], "pings resume once the loop runs again"
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert max(gaps) >= 0.55  # systemd, at WatchdogSec=0.1 s, would have killed us here


async def test_status_stopping_and_reloading(listener: Listener) -> None:
    notifier = Notifier.from_environment({"NOTIFY_SOCKET": listener.address})
    notifier.status("broker: connected\n2 tables")
    notifier.reloading()
    notifier.ready()
    notifier.stopping("stopping: draining the outbox")
    wait_for(lambda: len(listener.received) == 4)
    status, reloading, ready, stopping = listener.messages()
    assert status == {"STATUS": "broker: connected 2 tables"}  # one line: no bogus field
    assert reloading["RELOADING"] == "1"
    now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    assert 0 < now_usec - int(reloading["MONOTONIC_USEC"]) < 2_000_000
    assert ready == {"READY": "1"}
    assert stopping == {"STOPPING": "1", "STATUS": "stopping: draining the outbox"}


def test_a_socket_path_works_as_well_as_an_abstract_name(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    if len(str(path)) > 100:  # sun_path holds 108 bytes
        pytest.skip("tmp_path too long for an AF_UNIX address")
    sock = Listener(str(path))
    try:
        Notifier.from_environment({"NOTIFY_SOCKET": str(path)}).ready()
        wait_for(lambda: sock.messages() == [{"READY": "1"}])
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("environ", "interval"),
    [
        ({}, None),  # not under systemd
        ({"NOTIFY_SOCKET": "@x"}, None),  # no WatchdogSec=
        ({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "20000000"}, 20.0),  # no WATCHDOG_PID: ours
        ({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "1"}, None),
        ({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "soon"}, None),
        ({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "20000000"}, None),  # no socket to ping
        ({"NOTIFY_SOCKET": "vsock:2:1234", "WATCHDOG_USEC": "20000000"}, None),
    ],
)
def test_watchdog_interval_follows_sd_watchdog_enabled(
    environ: dict[str, str], interval: float | None
) -> None:
    with structlog.testing.capture_logs():
        notifier = Notifier.from_environment(environ, pid=4242)
    assert notifier.watchdog_interval() == interval


async def test_without_systemd_everything_is_a_no_op() -> None:
    notifier = Notifier.from_environment({})
    assert not notifier.enabled
    with structlog.testing.capture_logs() as logs:
        notifier.ready()
        notifier.status("x")
        notifier.stopping()
        notifier.reloading()
        await asyncio.wait_for(notifier.watchdog_loop(), 1)  # returns: nothing to ping
    assert logs == []


def test_a_missing_socket_is_logged_once_and_never_raised() -> None:
    notifier = Notifier("@shoe2mqtt-test-nobody-listens-here", watchdog_usec=1_000_000)
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            notifier.watchdog()
    assert [entry["event"] for entry in logs] == ["systemd.notify_failed"]
    assert logs[0]["log_level"] == "warning"


def test_a_full_socket_neither_blocks_nor_raises_and_recovery_is_logged() -> None:
    name = f"@shoe2mqtt-test-full-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as deaf:  # bound, never read
        deaf.bind(b"\0" + name[1:].encode())
        notifier = Notifier(name)
        with structlog.testing.capture_logs() as logs:
            started = time.monotonic()
            for _ in range(1000):  # far past net.unix.max_dgram_qlen
                notifier.watchdog()
            assert time.monotonic() - started < 1.0
            assert [entry["event"] for entry in logs] == ["systemd.notify_failed"]
            deaf.setblocking(False)
            while True:  # systemd catches up
                try:
                    deaf.recv(64)
                except BlockingIOError:
                    break
            notifier.ready()
        assert logs[-1]["event"] == "systemd.notify_resumed"


async def test_until_ready_each_ping_extends_the_start_timeout(listener: Listener) -> None:
    """A daemon waiting at boot for a broker is alive: systemd must not time its start out."""
    notifier = Notifier.from_environment(systemd_environment(listener, 200_000))
    notifier.watchdog()
    notifier.ready()
    notifier.watchdog()
    wait_for(lambda: len(listener.received) == 3)
    before, _, after = listener.messages()
    assert before == {"WATCHDOG": "1", "EXTEND_TIMEOUT_USEC": "200000"}
    assert after == {"WATCHDOG": "1"}
