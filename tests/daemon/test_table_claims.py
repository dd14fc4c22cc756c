"""Two real daemons of different nodes claiming one table on one mosquitto (daemon/table/claims.py).

Measured before: every request answered twice, `seq` numbers used twice, the retained
availability flipping between the nodes, and a clean stop of either published `offline`
over the table the other still served; nothing said why. Now each logs `table.claimed`,
the table's availability settles on `conflict` naming both, each tells the pit and holds the
table's cards; a clean stop says nothing on the table, and the survivor says the claim ended.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Final

from daemon.testing import (
    TABLE_ID,
    TABLE_SETTINGS,
    Collector,
    DaemonProcess,
    response_to,
    until,
    write_service_config,
)
from daemon.wire.availability import Availability, Liveness, parse_availability

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto, Received

BASE: Final = "shoe2mqtt"
AVAILABILITY: Final = f"{BASE}/{TABLE_ID}/availability"
STEP: Final = 15.0  # seconds: a daemon process starting on a loaded machine
QUIET: Final = 2.0  # seconds without a word on the availability: it has settled


def _daemon(tmp_path: Path, broker: Mosquitto, node: str) -> DaemonProcess:
    config = write_service_config(
        tmp_path / f"{node}.toml", broker, node=node, state_directory=tmp_path / node,
        tables=[(TABLE_SETTINGS, tmp_path / f"no-shoe-{node}")], reconnect=(0.05, 0.5),
    )  # fmt: skip
    return DaemonProcess(config, tmp_path / f"{node}.log")


def _events(daemon: DaemonProcess, event: str) -> list[dict[str, Any]]:
    lines = daemon.log.read_text(errors="replace").splitlines()
    bodies = [json.loads(line) for line in lines if line.startswith("{")]
    return [body for body in bodies if body["event"] == event]


def _said(pit: Collector, after: int = 0) -> list[Availability | None]:
    return [parse_availability(m.payload) for m in pit.messages[after:] if m.topic == AVAILABILITY]


def _notices(pit: Collector, kind: str) -> list[Received]:
    return [m for m in pit.messages if m.topic == f"{BASE}/{TABLE_ID}/notice/{kind}"]


async def _liveness(broker: Mosquitto) -> Liveness:
    """What a display that connects now makes of the retained messages alone."""
    liveness = Liveness()
    async with Collector(broker.host, broker.port, identifier="late-display") as late:
        await late.wait(lambda m: m.topic == AVAILABILITY)
        await late.wait(lambda m: m.topic.endswith("/pit-a/state"))
        await late.wait(lambda m: m.topic.endswith("/pit-b/state"))
        for m in late.messages:
            if m.topic == AVAILABILITY:
                liveness.on_availability(TABLE_ID, m.payload)
            elif m.topic.endswith("/state") and "/bridge/" in m.topic:
                liveness.on_bridge_state(m.topic.split("/")[2], m.payload)
    return liveness


async def test_two_daemons_claiming_one_table_say_so_settle_and_hold_then_one_stops(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemons = {node: _daemon(tmp_path, mosquitto, node) for node in ("pit-a", "pit-b")}
    async with Collector(mosquitto.host, mosquitto.port, identifier="pit") as pit:
        try:
            await daemons["pit-a"].start()
            await pit.wait(lambda m: m.topic == AVAILABILITY, within=STEP)
            await daemons["pit-b"].start()
            await _both_claim(daemons, pit)
            await _settled(pit)
            await _cards_held(pit)
            contested = await _liveness(mosquitto)
            assert contested.contested(TABLE_ID) == ("pit-a", "pit-b")
            assert not contested.is_live(TABLE_ID)
            assert "pit-a and pit-b" in contested.describe(TABLE_ID)

            # pit-b stops cleanly: nothing over pit-a's claim; pit-a says the claim ended.
            mark = pit.mark()
            assert await daemons["pit-b"].stop() == 0, daemons["pit-b"].tail()
            await pit.wait(lambda m: m.topic.endswith("/notice/table_claim_ended"), within=STEP)
            await pit.wait(lambda m: m.payload == b'{"state":"online","node":"pit-a"}', after=mark)
            assert Availability("offline", "pit-b") not in _said(pit, mark)
            [ended] = _events(daemons["pit-a"], "table.claim_ended")
            assert (ended["table"], ended["ended"]) == (TABLE_ID, ["pit-b"])
            assert (await _liveness(mosquitto)).is_live(TABLE_ID)
            for daemon in daemons.values():
                daemon.check()
        finally:
            for daemon in daemons.values():
                await daemon.stop()


async def _both_claim(daemons: dict[str, DaemonProcess], pit: Collector) -> None:
    """Each logs the other's claim as an error and tells the pit (a notice that holds)."""
    await until(lambda: all(_events(d, "table.claimed") for d in daemons.values()), within=STEP)
    for node, daemon in daemons.items():
        [claimed] = _events(daemon, "table.claimed")
        other = "pit-b" if node == "pit-a" else "pit-a"
        assert (claimed["level"], claimed["table"], claimed["claimed_by"]) == (
            "error", TABLE_ID, [other],
        )  # fmt: skip
    await until(lambda: len(_notices(pit, "table_claimed")) >= 2, within=STEP)
    assert all("claims this table too" in m.body["message"] for m in _notices(pit, "table_claimed"))


async def _settled(pit: Collector) -> None:
    """The retained availability is the contested state and stays as it is."""
    await until(lambda: _conflict(pit.on(TABLE_ID, "availability")[-1]), within=STEP)
    mark = pit.mark()
    await asyncio.sleep(QUIET)
    assert _said(pit, mark) == [], "the daemons keep rewriting the table's availability"


def _conflict(message: Received) -> bool:
    said = parse_availability(message.payload)
    return said is not None and said.state == "conflict" and set(said.nodes) == {"pit-a", "pit-b"}


async def _cards_held(pit: Collector) -> None:
    """Each daemon's table holds every card for the dealer console: its snapshot says why."""
    await pit.publish(f"{BASE}/{TABLE_ID}/request/status", json.dumps({"transaction": "s-1"}))
    await until(lambda: len([m for m in pit.messages if response_to("s-1")(m)]) == 2, within=STEP)
    for answer in (m for m in pit.messages if response_to("s-1")(m)):
        assert answer.body["data"]["round"]["doubt"] == "table_claimed"
