"""A broker restarted without persistence forgets every retained message; the daemon tells it
again on its next connection, so a display that connects afterwards knows the tables.

Measured before: after the daemon reconnected, only each table's availability and the bridge
info came back; `<table>/journal`, `<table>/state` and `<table>/round` stayed missing, so a
display started later never learned of a failing journal or a reader fault.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from daemon.testing import (
    TABLE_ID,
    TABLE_SETTINGS,
    Collector,
    DaemonProcess,
    until,
    write_service_config,
)

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto, Received

STEP: Final = 15.0
RETAINED: Final = {
    f"shoe2mqtt/{TABLE_ID}/availability",
    f"shoe2mqtt/{TABLE_ID}/journal",
    f"shoe2mqtt/{TABLE_ID}/state",
    f"shoe2mqtt/{TABLE_ID}/round",
    "shoe2mqtt/bridge/pit-a/state",
    "shoe2mqtt/bridge/pit-a/info",
}


async def _latest(broker: Mosquitto, identifier: str, *, retained: bool) -> dict[str, bytes]:
    """The latest message on each of RETAINED a display connecting now hears (`retained`:
    only those the broker kept, not what the daemon says while the display listens)."""
    async with Collector(broker.host, broker.port, identifier=identifier) as display:
        for topic in RETAINED:

            def told(message: Received, topic: str = topic) -> bool:
                return message.topic == topic and (message.retain or not retained)

            await display.wait(told, within=STEP)
        return {m.topic: m.payload for m in display.messages if m.retain or not retained}


async def test_every_retained_state_is_told_again_to_a_broker_that_forgot_it(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = write_service_config(
        tmp_path / "shoe2mqtt.toml", mosquitto, node="pit-a", state_directory=tmp_path / "state",
        tables=[(TABLE_SETTINGS, tmp_path / "no-shoe-here")], reconnect=(0.05, 0.5),
    )  # fmt: skip
    daemon = DaemonProcess(config, tmp_path / "daemon.log")
    await daemon.start()
    try:
        before = await _latest(mosquitto, "display-before", retained=False)
        mosquitto.stop()
        mosquitto.start()  # without persistence: it knows no retained message now
        # The daemon back (it says `mqtt.connected` once it has told the broker everything):
        # what a display that connects now hears is what the broker keeps.
        await until(lambda: daemon.log.read_text().count('"mqtt.connected"') == 2, within=STEP)
        after = await _latest(mosquitto, "display-after", retained=True)
        daemon.check()
    finally:
        assert await daemon.stop() == 0, daemon.tail()
    assert set(after) >= RETAINED
    assert set(before) >= RETAINED
    assert json.loads(after[f"shoe2mqtt/{TABLE_ID}/journal"])["state"] == "ok"
    assert json.loads(after[f"shoe2mqtt/{TABLE_ID}/round"])["type"] == "round_snapshot"
    assert json.loads(after[f"shoe2mqtt/{TABLE_ID}/state"])["reader"]["link"] != "connected"
