"""`<base>/bridge/<node>/info`: which daemon this is, what it serves, and which configuration
file it read, named by the hash `sha256sum` prints for that file (docs/mqtt.md)."""

from __future__ import annotations

import json
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import jsonschema

from daemon.testing import TABLE_SETTINGS, Collector, DaemonProcess, write_service_config
from daemon.version import installed_version
from daemon.wire.asyncapi import build

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto, Received

INFO = "shoe2mqtt/bridge/pit-a/info"


def _sha256sum(path: Path) -> str:
    """What an engineer on the PC types to name the file."""
    printed = subprocess.run(  # noqa: S603 - a fixed tool on our own file
        ["/usr/bin/sha256sum", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return printed.split()[0]


def _is_info(message: Received) -> bool:
    return message.topic == INFO


async def test_info_names_the_daemon_its_tables_and_its_configuration_file(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = write_service_config(
        tmp_path / "shoe2mqtt.toml", mosquitto, node="pit-a", state_directory=tmp_path / "state",
        tables=[(TABLE_SETTINGS, tmp_path / "no-shoe-here")],
    )  # fmt: skip
    daemon = DaemonProcess(config, tmp_path / "daemon.log")
    schema = build()["channels"]["bridge_info"]["messages"]["bridge_info"]["payload"]
    async with Collector(mosquitto.host, mosquitto.port, identifier="info-reader") as pit:
        before = datetime.now(UTC)
        await daemon.start()
        try:
            info = (await pit.wait(_is_info)).body
            jsonschema.validate(info, schema)
            started = datetime.fromisoformat(info.pop("started"))
            assert before - timedelta(seconds=1) <= started <= datetime.now(UTC)
            assert info == {
                "version": installed_version(),
                "node": "pit-a",
                "tables": [TABLE_SETTINGS["id"]],
                "config_sha256": _sha256sum(config),
                "restart_needed": [],
            }

            # A reload that reads a changed file says so; the daemon did not restart.
            mark = pit.mark()
            with config.open("a", encoding="utf-8") as edited:
                edited.write("# edited for the floor's audit\n")
            daemon.send_signal(signal.SIGHUP)
            reloaded = (await pit.wait(_is_info, after=mark)).body
            assert reloaded["config_sha256"] == _sha256sum(config) != info["config_sha256"]
            assert datetime.fromisoformat(reloaded["started"]) == started
        finally:
            assert await daemon.stop() == 0, daemon.tail()

    # Kept on a clean stop: it says what ran there; the state beside it says it stopped.
    async with Collector(mosquitto.host, mosquitto.port, identifier="late-reader") as late:
        retained = await late.wait(_is_info)
        state = await late.wait(lambda m: m.topic == "shoe2mqtt/bridge/pit-a/state")
    assert retained.retain
    assert json.loads(retained.payload)["config_sha256"] == _sha256sum(config)
    assert state.payload == b"offline"
