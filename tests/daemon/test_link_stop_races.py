"""A stop that meets a broker round trip: the daemon exits all the same.

On Python 3.11, `asyncio.wait_for` returns the result when it arrives in the same turn of
the loop as a cancellation, and the cancellation is lost (CPython gh-86296); aiomqtt waits
for every PUBACK, SUBACK and UNSUBACK that way. A daemon stopped 3 ms after it connected,
just after a reload, logged `mqtt.disconnected reason=stopped` and never exited: its
`bridge-info` task was publishing the reloaded info, the stop came with the PUBACK, and the
task went back to waiting for the next reload. These tests make the two meet on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import aiomqtt

from daemon.configuration.service_config import load_config
from daemon.service import Daemon
from daemon.system.notify import Notifier
from daemon.testing import TABLE_SETTINGS, Collector, write_service_config

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pytest

    from daemon.testing import Mosquitto

STOP_WITHIN = 10.0  # seconds: a stop is honoured within a second; this is a hang's bound


def swallow_a_stop_after(
    monkeypatch: pytest.MonkeyPatch, topic: str, stop: Callable[[], None]
) -> asyncio.Event:
    """Make the next publish to `topic` end as 3.11's wait_for ends when the PUBACK and a
    cancellation meet: published, the cancellation lost, the task's count of cancel
    requests raised. `stop` asks for the cancellation; the event is set once it was lost."""
    original = aiomqtt.Client.publish
    swallowed = asyncio.Event()

    async def publish(self: aiomqtt.Client, target: str, *args: Any, **kwargs: Any) -> None:
        await original(self, target, *args, **kwargs)
        if target != topic or swallowed.is_set():
            return
        stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()  # until the daemon's task group cancels this task
        swallowed.set()

    monkeypatch.setattr(aiomqtt.Client, "publish", publish)
    return swallowed


async def test_a_stop_that_comes_with_the_puback_of_a_reloaded_info_still_stops(
    tmp_path: Path, mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_service_config(
        tmp_path / "shoe2mqtt.toml", mosquitto, node="pit-a", state_directory=tmp_path / "state",
        tables=[(TABLE_SETTINGS, tmp_path / "no-shoe-here")],
    )  # fmt: skip
    daemon = Daemon(load_config(path), notifier=Notifier())
    info = "shoe2mqtt/bridge/pit-a/info"
    async with Collector(mosquitto.host, mosquitto.port, identifier="race-reader") as pit:
        running = asyncio.create_task(daemon.run(), name="daemon")
        try:
            await pit.wait_online()
            await pit.wait(lambda m: m.topic == info)
            swallowed = swallow_a_stop_after(monkeypatch, info, daemon.stop)
            with path.open("a", encoding="utf-8") as edited:
                edited.write("# a reload that changes the file's hash\n")
            daemon.reload()  # as SIGHUP does: the bridge-info task publishes the new info
            async with asyncio.timeout(STOP_WITHIN):
                await swallowed.wait()
                await running  # the daemon exits although the stop was swallowed once
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
