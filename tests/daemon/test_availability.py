"""Two daemons on one broker and one base topic: each table's liveness follows its own daemon.

Decision D1 (docs/mqtt.md, "Availability"): the daemon of node pc-a serves bj-1, that of
pc-b serves bj-2, both under `shoe2mqtt`. A display applies the liveness rule to what it
reads; a SIGKILL or a clean stop of one daemon must take its own table offline and leave
the other's live, for a display that is watching and for one that connects afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.testing import DaemonProcess, write_service_config
from daemon.wire.availability import (
    Availability,
    Liveness,
    availability_payload,
    parse_availability,
)
from drivers.emulator import EmulatedShoe, EmulatorSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from daemon.testing import Mosquitto

BASE = "shoe2mqtt"
STEP = 15.0  # seconds: a daemon process starting, or the broker noticing one died
NODES = {"pc-a": "bj-1", "pc-b": "bj-2"}


@dataclass
class Display:
    """A display's view of liveness, from the two retained topic families alone."""

    client: aiomqtt.Client
    liveness: Liveness = field(default_factory=Liveness)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def follow(self) -> None:
        async for message in self.client.messages:
            parts = message.topic.value.split("/")
            payload = message.payload
            assert isinstance(payload, bytes)
            if parts[1] == "bridge":
                self.liveness.on_bridge_state(parts[2], payload)
            else:
                self.liveness.on_availability(parts[1], payload)
            self._changed.set()

    async def until(self, condition: Callable[[Liveness], bool]) -> None:
        async with asyncio.timeout(STEP):
            while not condition(self.liveness):
                self._changed.clear()
                await self._changed.wait()

    def live(self) -> dict[str, bool]:
        return {table: self.liveness.is_live(table) for table in NODES.values()}


@contextlib.asynccontextmanager
async def display_on(broker: Mosquitto) -> AsyncIterator[Display]:
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe([(f"{BASE}/bridge/+/state", 1), (f"{BASE}/+/availability", 1)])
        display = Display(client)
        follower = asyncio.create_task(display.follow(), name="display-follow")
        try:
            yield display
        finally:
            follower.cancel()
            await asyncio.wait([follower])


def _daemon(directory: Path, broker: Mosquitto, node: str, shoe_path: str) -> DaemonProcess:
    table = {
        "id": NODES[node],
        "game": "blackjack",
        "limits": {
            "blackjack": {"min": "10", "max": "500"},
            "twenty_point_bonus": {"min": "5", "max": "100"},
        },
    }
    config = write_service_config(
        directory / f"{node}.toml",
        broker,
        node=node,
        state_directory=directory / node,
        tables=[(table, shoe_path)],
        reconnect=(0.05, 0.5),
    )
    return DaemonProcess(config, directory / f"{node}.log")


@pytest.mark.parametrize(
    "payload",
    [b"", b"online", b"{}", b'{"state":"online"}', b'{"state":"up","node":"pc-a"}',
     b'{"state":"online","node":"PC A"}', b"\xff", b"[]"],
)  # fmt: skip
def test_what_is_not_an_availability_makes_a_table_not_live(payload: bytes) -> None:
    """An empty retained message clears the topic; garbage is no claim to be live."""
    liveness = Liveness()
    liveness.on_bridge_state("pc-a", b"online")
    liveness.on_availability("bj-1", availability_payload("online", "pc-a"))
    assert liveness.is_live("bj-1")
    liveness.on_availability("bj-1", payload)
    assert not liveness.is_live("bj-1")
    assert liveness.describe("bj-1") == "no daemon serves it"


def test_a_table_is_live_only_while_both_topics_say_online() -> None:
    liveness = Liveness()
    liveness.on_availability("bj-1", availability_payload("online", "pc-a"))
    assert not liveness.is_live("bj-1")  # its daemon's state is unknown
    liveness.on_bridge_state("pc-a", b"online")
    assert liveness.is_live("bj-1")
    liveness.on_bridge_state("pc-a", b"")  # cleared
    assert not liveness.is_live("bj-1")


def test_a_conflict_is_contested_while_one_of_its_daemons_is_online() -> None:
    liveness = Liveness()
    liveness.on_availability("bj-1", Availability("conflict", "pc-b", ("pc-a",)).payload())
    assert liveness.contested("bj-1") is None  # neither daemon is known to be up
    liveness.on_bridge_state("pc-a", b"online")
    assert liveness.contested("bj-1") == ("pc-a", "pc-b")
    assert not liveness.is_live("bj-1")
    assert liveness.describe("bj-1") == "claimed by two daemons at once: pc-a and pc-b"
    assert liveness.node_of("bj-1") == "pc-b"  # who wrote it


@pytest.mark.parametrize(
    "payload",
    [b'{"state":"conflict","node":"pc-a"}', b'{"state":"conflict","node":"pc-a","with":[]}',
     b'{"state":"conflict","node":"pc-a","with":"pc-b"}',
     b'{"state":"conflict","node":"pc-a","with":["PC B"]}'],
)  # fmt: skip
def test_a_conflict_with_nobody_is_no_availability(payload: bytes) -> None:
    assert parse_availability(payload) is None


@given(
    st.sampled_from(["online", "offline", "conflict"]),
    st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True),
    st.lists(st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True), min_size=1, max_size=3),
)
def test_an_availability_reads_back_as_written(state: str, node: str, others: list[str]) -> None:
    written = Availability(state, node, tuple(sorted(others)) if state == "conflict" else ())
    body = json.loads(written.payload())
    assert body["state"] == state
    assert body["node"] == node
    assert body.get("with") == (sorted(others) if state == "conflict" else None)
    assert parse_availability(written.payload()) == written


async def test_each_table_follows_its_own_daemon_on_a_shared_broker(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        daemons = {}
        for node in NODES:
            shoe = await stack.enter_async_context(
                EmulatedShoe(EmulatorSettings(protocol="reference", seed=1))
            )
            daemons[node] = _daemon(tmp_path, mosquitto, node, shoe.path)
        display = await stack.enter_async_context(display_on(mosquitto))
        for daemon in daemons.values():
            await daemon.start()
        try:
            await display.until(lambda s: s.is_live("bj-1") and s.is_live("bj-2"))
            assert display.liveness.node_of("bj-2") == "pc-b"

            # SIGKILL: pc-b says nothing; its will turns its bridge state offline.
            daemons["pc-b"].send_signal(signal.SIGKILL)
            assert await daemons["pc-b"].wait() == -signal.SIGKILL
            await display.until(lambda s: not s.is_live("bj-2"))
            assert display.live() == {"bj-1": True, "bj-2": False}
            # bj-2's own availability still says online: only the join tells the truth.
            assert display.liveness.tables["bj-2"] == Availability("online", "pc-b")
            async with display_on(mosquitto) as late:  # from the retained messages alone
                await late.until(lambda s: len(s.tables) == 2 and len(s.nodes) == 2)
                assert late.live() == {"bj-1": True, "bj-2": False}

            # pc-b back: live again. Then a clean stop of pc-a: bj-1 offline, bj-2 live.
            await daemons["pc-b"].start()
            await display.until(lambda s: s.is_live("bj-2"))
            assert await daemons["pc-a"].stop() == 0, daemons["pc-a"].tail()
            await display.until(lambda s: s.nodes.get("pc-a") == "offline")
            assert display.liveness.tables["bj-1"] == Availability("offline", "pc-a")
            assert display.live() == {"bj-1": False, "bj-2": True}
            async with display_on(mosquitto) as late:
                await late.until(lambda s: len(s.tables) == 2 and len(s.nodes) == 2)
                assert late.live() == {"bj-1": False, "bj-2": True}
        finally:
            for daemon in daemons.values():
                await daemon.stop()
