"""256 tables in one daemon, their shoes behind TCP ports as serial device servers deliver
them: ready within 3 s of the start, and a SIGTERM honoured within 1 s, also in
the middle of a start and while every shoe's link has just dropped. bench/e2e/tables.py
measures the same at more moments and more tables (docs/performance.md)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Final

import aiomqtt
import pytest

from daemon.testing import DaemonProcess, DeviceServers, MessageLog, write_service_config
from daemon.testing.recovery import TABLE_SETTINGS

# A time or memory figure: measured alone, not beside the parallel run (scripts/test).
pytestmark = pytest.mark.serial

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto

TABLES: Final = 256
READY_WITHIN: Final = 3.0
STOPPED_WITHIN: Final = 1.0


def _environment() -> dict[str, str]:
    # As installed: scripts/install compiles bytecode, so no start compiles every module.
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


async def _stop_time(daemon: DaemonProcess) -> tuple[float, int | None]:
    began = time.monotonic()
    code = await daemon.stop(grace=10)
    return time.monotonic() - began, code


@pytest.fixture
def bytecode() -> None:
    """The daemon's modules compiled once, as an installation has them."""
    subprocess.run(
        [sys.executable, "-c", "import daemon.cli.main, daemon.service"],
        env=_environment(), check=True,
    )  # fmt: skip


@pytest.mark.usefixtures("bytecode")
async def test_256_tables_over_tcp_are_ready_in_3_s_and_stop_in_1_s(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with (
        DeviceServers(TABLES) as shoes,
        aiomqtt.Client(mosquitto.host, mosquitto.port, identifier="pit") as pit,
    ):
        await pit.subscribe("shoe2mqtt/bridge/+/state", qos=1)
        log = MessageLog()
        recording = asyncio.create_task(log.record(pit), name="pit")
        tables = [
            ({**TABLE_SETTINGS, "id": f"bj-{i}"}, ("127.0.0.1", port))
            for i, port in enumerate(shoes.ports)
        ]
        config = write_service_config(
            tmp_path / "shoe2mqtt.toml", mosquitto, node="pit-a",
            state_directory=tmp_path / "state", tables=tables,
        )  # fmt: skip
        daemon = DaemonProcess(config, tmp_path / "daemon.log")
        try:
            began = time.monotonic()
            await daemon.start(_environment())
            await log.wait_online()
            ready = time.monotonic() - began
            assert ready <= READY_WITHIN, f"ready after {ready:.2f} s"
            await asyncio.wait_for(shoes.wait_connected(TABLES), 10)
            # Every reader's link drops at once: 256 link events in flight, then a SIGTERM.
            shoes.drop_hosts()
            stopped, code = await _stop_time(daemon)
            assert (stopped, code) < (STOPPED_WITHIN, 1), daemon.tail()
            assert code == 0
            # A SIGTERM in the middle of a start (importing, replaying) is honoured too.
            await daemon.start(_environment())
            await asyncio.sleep(0.7)
            stopped, code = await _stop_time(daemon)
            assert stopped < STOPPED_WITHIN, daemon.tail()
            assert code in {0, -signal.SIGTERM}  # before its handlers: the default action
        finally:
            await daemon.stop()
            recording.cancel()
            await asyncio.gather(recording, return_exceptions=True)
