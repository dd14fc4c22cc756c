"""A link that drops every connection after a second, between the daemon and a real mosquitto.

Measured before: the backoff reset only after 60 s up, so the daemon was connected about 2 %
of the time, a console's wager went unanswered for 300 s, and the pit was told
`client_id_in_use`, which was false. Now a connection that carried what it should resets the
backoff, and the broker's session tells a dropped link from another client on the daemon's
client id (daemon/mqtt/takeover.py).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from daemon.testing import (
    TABLE_ID,
    TABLE_SETTINGS,
    Collector,
    CuttingProxy,
    DaemonProcess,
    Stalled,
    response_to,
    write_service_config,
)

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto

CUT_AFTER: Final = 1.0  # seconds each connection lives
RUN: Final = 12.0  # seconds of asking
ASK_AGAIN: Final = 1.5  # seconds a console waits for an answer before it asks again
ANSWERED_WITHIN: Final = 5.0  # "within a few seconds"


async def _ask(console: Collector, transaction: str) -> float:
    """A `status` request as a console makes it, asking again while unanswered; seconds until
    the answer."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    topic = f"shoe2mqtt/{TABLE_ID}/request/status"
    while True:
        mark = console.mark()
        await console.publish(topic, json.dumps({"transaction": transaction}))
        try:
            await console.wait(response_to(transaction, "status"), after=mark, within=ASK_AGAIN)
        except Stalled:
            continue  # published while the link was down: nobody heard it; ask again
        return loop.time() - began


def _log(daemon: DaemonProcess) -> list[dict[str, Any]]:
    lines = daemon.log.read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def _connected_share(lines: list[dict[str, Any]]) -> float:
    """The share of time between the first `mqtt.connected` and the stop that the daemon's
    link was connected, from its own log."""
    up_since: datetime | None = None
    up = 0.0
    began = end = None
    for line in lines:
        at = datetime.fromisoformat(line["timestamp"])
        if line["event"] == "mqtt.connected":
            up_since = at
            began = began or at
        elif line["event"] == "mqtt.disconnected" and up_since is not None:
            up += (at - up_since).total_seconds()
            up_since = None
        if line["event"] == "daemon.stopping":
            end = at
    assert began is not None, "the daemon never connected"
    assert end is not None, "the daemon did not stop cleanly"
    return up / (end - began).total_seconds()


async def test_a_link_cut_every_second_is_up_most_of_the_time_and_never_a_client_id_in_use(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with (
        CuttingProxy(mosquitto.host, mosquitto.port, cut_after=CUT_AFTER) as proxy,
        Collector(mosquitto.host, mosquitto.port, identifier="console") as console,
    ):
        config = write_service_config(
            tmp_path / "shoe2mqtt.toml", proxy, node="pit-a", state_directory=tmp_path / "state",
            tables=[(TABLE_SETTINGS, tmp_path / "no-shoe-here")],
        )  # fmt: skip
        daemon = DaemonProcess(config, tmp_path / "daemon.log")
        await daemon.start()
        try:
            await console.wait_online()
            loop = asyncio.get_running_loop()
            began, waits = loop.time(), list[float]()
            while loop.time() - began < RUN:
                waits.append(await _ask(console, f"c-{len(waits)}"))
            daemon.check()
        finally:
            assert await daemon.stop() == 0, daemon.tail()
    lines = _log(daemon)
    events = [line["event"] for line in lines]
    assert proxy.accepted >= RUN / (2 * CUT_AFTER)  # the link was cut, again and again
    assert max(waits) <= ANSWERED_WITHIN, waits
    share = _connected_share(lines)
    assert share > 0.5, f"connected {share:.0%} of the time"
    assert "mqtt.client_id_in_use" not in events
    assert "mqtt.link_unstable" in events  # what it was, said instead
    told = {m.topic.rsplit("/", 1)[-1] for m in console.messages if "/notice/" in m.topic}
    assert "client_id_in_use" not in told
    assert "link_unstable" in told
