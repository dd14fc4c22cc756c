"""A casino floor in one test: a pit broker, a floor broker bridged to it, three daemons.

Three table PCs (nodes pc-1, pc-2, pc-3, tables bj-1, bj-2, bj-3) publish on the pit broker;
the floor broker pulls the pit's tables through `docs/mosquitto/floor-bridge.conf` (as
shipped, but for the address, TLS and login); a display reads the floor broker. Every table
plays a round. Then the bridge goes down with its broker, pc-3 is SIGKILLed while it is
away, bj-1 and bj-2 play another round, and the floor broker comes back. On the floor, every
settlement the pit saw arrives once (by id), in each table's order, and each table's
liveness is the pit's: bj-1 and bj-2 live, bj-3 not (its node's will crossed the bridge late,
and its availability still says online: only the join of the two tells).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from daemon.testing import (
    BURN,
    TABLE_SETTINGS,
    Collector,
    ConsoleSimulator,
    DaemonProcess,
    Mosquitto,
    write_service_config,
)
from daemon.wire.availability import Availability, Liveness
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.config import TableConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from daemon.testing import MessageLog, Received

BRIDGE: Final = Path(__file__).parents[2] / "docs" / "mosquitto" / "floor-bridge.conf"
NODES: Final = {"pc-1": "bj-1", "pc-2": "bj-2", "pc-3": "bj-3"}
BASE: Final = "shoe2mqtt"
EXPECTED: Final = {"bj-1": True, "bj-2": True, "bj-3": False}  # live, after pc-3's SIGKILL
# The shipped bridge's lines that name the real pit (its address, its CA, the bridge's login)
# are the test's own; a test broker speaks plain MQTT to anyone on loopback.
_SITE_KEYS: Final = {
    "address",
    "bridge_cafile",
    "bridge_tls_version",
    "remote_username",
    "remote_password",
    "restart_timeout",
}


def floor_bridge_to(pit: Mosquitto) -> list[str]:
    """docs/mosquitto/floor-bridge.conf, pointed at `pit`, retrying each second."""
    lines = [
        line
        for line in BRIDGE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#") and line.split()[0] not in _SITE_KEYS
    ]
    assert lines[0].startswith("connection "), lines  # the bridge's own lines follow it
    return [lines[0], f"address {pit.host}:{pit.port}", "restart_timeout 1", *lines[1:]]


def liveness(log: MessageLog) -> Liveness:
    """What a display knows of each table's liveness from what reached it, in order."""
    known = Liveness()
    for message in log.messages:
        parts = message.topic.split("/")
        if parts[1] == "bridge" and parts[3] == "state":
            known.on_bridge_state(parts[2], message.payload)
        elif parts[2:] == ["availability"]:
            known.on_availability(parts[1], message.payload)
    return known


def settlements(log: MessageLog, table: str) -> list[str]:
    """The ids of a table's settlements in arrival order, each once (QoS 1 may repeat one)."""
    seen: dict[str, None] = {}
    for message in log.on(table, "settlement"):
        seen.setdefault(message.body["id"], None)
    return list(seen)


@contextlib.asynccontextmanager
async def table_pcs(
    directory: Path, pit: Mosquitto
) -> AsyncIterator[tuple[dict[str, DaemonProcess], dict[str, EmulatedShoe]]]:
    """A daemon process and an emulated shoe per node, all on the pit broker."""
    async with contextlib.AsyncExitStack() as stack:
        daemons: dict[str, DaemonProcess] = {}
        shoes: dict[str, EmulatedShoe] = {}
        for number, (node, table) in enumerate(NODES.items()):
            shoe = await stack.enter_async_context(
                EmulatedShoe(EmulatorSettings(protocol="reference", seed=number))
            )
            config = write_service_config(
                directory / f"{node}.toml", pit, node=node, state_directory=directory / node,
                tables=[({**TABLE_SETTINGS, "id": table}, shoe.path)], reconnect=(0.05, 0.5),
            )  # fmt: skip
            daemons[node], shoes[table] = DaemonProcess(config, directory / f"{node}.log"), shoe
        try:
            yield daemons, shoes
        finally:
            for daemon in daemons.values():
                await daemon.stop()


async def play(dealers: dict[str, ConsoleSimulator], tables: list[str]) -> None:
    async with asyncio.TaskGroup() as group:
        for table in tables:
            group.create_task(dealers[table].play_round(lambda: None), name=f"dealer:{table}")


@pytest.mark.timeout(90)
async def test_a_floor_sees_every_table_and_settlement_right_through_a_kill_and_a_bridge_restart(
    tmp_path: Path,
) -> None:
    rng = random.Random(5)  # noqa: S311 - the players' choices, not a secret
    with Mosquitto(tmp_path / "pit") as pit:
        floor = Mosquitto(tmp_path / "floor", persistence=True, options=floor_bridge_to(pit))
        with floor:
            async with (
                table_pcs(tmp_path, pit) as (daemons, shoes),
                Collector(pit.host, pit.port, identifier="pit-consoles") as consoles,
                Collector(floor.host, floor.port, identifier="floor-display") as display,
            ):
                for daemon in daemons.values():
                    await daemon.start()
                everyone = dict.fromkeys(NODES.values(), True)
                await consoles.wait(lambda _: _live(liveness(consoles)) == everyone)
                dealers = {
                    table: ConsoleSimulator(
                        TableConfig.from_mapping({**TABLE_SETTINGS, "id": table}),
                        shoes[table],
                        consoles,
                        random.Random(rng.random()),  # noqa: S311 - as above
                    )
                    for table in NODES.values()
                }
                for dealer in dealers.values():
                    await dealer.resync()
                    await dealer.step(BURN)
                await play(dealers, list(dealers))
                await _until_the_floor_has_what_the_pit_has(consoles, display)
                before = sum(len(settlements(consoles, table)) for table in NODES.values())

                floor.stop()  # the bridge with it; the floor's display waits to reconnect
                await daemons["pc-3"].kill()
                await consoles.wait(_offline("pc-3"))  # the pit broker published its will
                await play(dealers, ["bj-1", "bj-2"])
                floor.start()

                await _until_the_floor_has_what_the_pit_has(consoles, display)
                # A display that connects to the floor now sees the same, from retained
                # messages alone.
                async with Collector(floor.host, floor.port, identifier="late-display") as late:
                    await late.wait(lambda _: _live(liveness(late)) == EXPECTED)
            assert _live(liveness(consoles)) == EXPECTED
            assert _live(liveness(display)) == EXPECTED
            # bj-3's own availability still says online: only the node's will tells.
            assert liveness(display).tables["bj-3"] == Availability("online", "pc-3")
            # Settlements were made while the bridge was away, and crossed it once it was back.
            assert sum(len(settlements(display, table)) for table in NODES.values()) > before
            for table in NODES.values():
                assert settlements(display, table) == settlements(consoles, table)
                seqs = [m.body["seq"] for m in display.on(table, "settlement")]
                assert seqs == sorted(seqs), table  # in the table's order
            # Nothing of the pit's requests reached the floor: the bridge pulls none.
            assert not [m.topic for m in display.messages if "/request/" in m.topic]


def _offline(node: str) -> Callable[[Received], bool]:
    topic = f"{BASE}/bridge/{node}/state"
    return lambda m: m.topic == topic and m.payload == b"offline"


def _live(known: Liveness) -> dict[str, bool]:
    return {table: known.is_live(table) for table in NODES.values()}


async def _until_the_floor_has_what_the_pit_has(pit: MessageLog, floor: MessageLog) -> None:
    def caught_up(_: Received) -> bool:
        return all(
            settlements(floor, table) == settlements(pit, table) for table in NODES.values()
        ) and _live(liveness(floor)) == _live(liveness(pit))

    await floor.wait(caught_up, within=30)
