"""A pit as a user runs it, for the display's tests: real processes from one TOML file.

A real mosquitto (the `mosquitto` fixture), an emulated shoe per table on a pty, the daemon
(`shoe2mqtt run --config`) and the display (`shoe2mqtt display --config`) as subprocesses of
the same configuration file, and an MQTT client in the test that is the dealer's console
and a recorder of everything it may read, noting when each message arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiomqtt

from daemon.testing import MessageLog, free_port
from daemon.wire.console import console_request
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.cards import Card, DeckKind
from rules.config import TableConfig
from rules.events import DealCard
from rules.player import SimulatedRound

if TYPE_CHECKING:
    import random
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

    from daemon.request_gate import RequestLimits
    from daemon.testing import Mosquitto
    from rules.player import WagerPlan

BASE: Final = "shoe2mqtt"
NODE: Final = "pit-pc"
ROOT: Final = Path(__file__).parents[2]
SHOE2MQTT: Final = Path(sys.executable).parent / "shoe2mqtt"  # the script pyproject installs
START: Final = 20.0  # seconds for a process to start and announce itself


@dataclass
class Floor(MessageLog):
    directory: Path
    broker: Mosquitto
    tables: dict[str, dict[str, Any]]
    shoes: dict[str, EmulatedShoe]
    port: int
    arrived_at: list[float] = field(default_factory=list)  # epoch ms, one per message
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    daemon: asyncio.subprocess.Process | None = None
    display: asyncio.subprocess.Process | None = None
    requests: RequestLimits | None = None  # the daemon's `[requests]` limits, if any
    _console: contextlib.AsyncExitStack | None = None
    _client: aiomqtt.Client | None = None
    _display_started: bool = False

    @property
    def client(self) -> aiomqtt.Client:
        assert self._client is not None, "the console is not connected"
        return self._client

    async def connect_console(self) -> None:
        """Connect the test's console and recorder (again, after a broker restart)."""
        await self.disconnect_console()
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                aiomqtt.Client(self.broker.host, self.broker.port, identifier="floor-console")
            )
            await client.subscribe(f"{BASE}/#", qos=1)
            recorder = asyncio.create_task(self.record(client), name="floor-recorder")

            async def stop_recording() -> None:
                recorder.cancel()
                await asyncio.wait([recorder])

            stack.push_async_callback(stop_recording)
            self._client, self._console = client, stack.pop_all()

    async def disconnect_console(self) -> None:
        console, self._console, self._client = self._console, None, None
        if console is not None:
            with contextlib.suppress(aiomqtt.MqttError):  # the broker may be gone already
                await console.aclose()

    @property
    def config(self) -> Path:
        return self.directory / "shoe2mqtt.toml"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def add(self, message: aiomqtt.Message) -> None:
        self.arrived_at.append(time.time() * 1000)
        super().add(message)

    # ------------------------------------------------------------ processes
    async def start_daemon(self) -> None:
        seen = len(self.messages)
        self.daemon = await _shoe2mqtt("run", self.config, self.directory / "daemon.log")
        waiting = {f"{BASE}/{table}/availability" for table in self.tables}
        try:
            while waiting:
                announced = await self.wait(
                    lambda m: m.topic in waiting and b"online" in m.payload, after=seen
                )
                waiting.discard(announced.topic)
        except TimeoutError:
            raise AssertionError(f"the daemon did not start:\n{self.log('daemon')}") from None

    async def start_display(self) -> None:
        """Start the display; its first start may move to another free port if its own was
        taken meanwhile (by another worker's test: a free port is only free when asked), a
        restart keeps the port the page has open."""
        for attempt in range(1, 4):
            logged = len(self.log("display"))
            self.display = await _shoe2mqtt("display", self.config, self.directory / "display.log")
            deadline = time.monotonic() + START
            while not _accepts(self.port):
                if self.display.returncode is not None or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            else:
                self._display_started = True
                return
            said = self.log("display")[logged:]
            if self._display_started or attempt == 3 or "address already in use" not in said:
                raise AssertionError(f"the display did not start:\n{said}")
            await self.stop("display")
            self.port = free_port()
            self.config.write_text(_config_file(self), encoding="utf-8")

    async def stop(self, which: str, how: signal.Signals = signal.SIGTERM) -> int | None:
        process: asyncio.subprocess.Process | None = getattr(self, which)
        setattr(self, which, None)
        if process is None:
            return None
        if process.returncode is None:
            process.send_signal(how)
        try:
            await asyncio.wait_for(process.wait(), START)
        except TimeoutError:
            process.kill()
            await process.wait()
        return process.returncode

    def log(self, which: str) -> str:
        path = self.directory / f"{which}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # ------------------------------------------------------------ the dealer's console
    async def request(self, table: str, command: str, **body: Any) -> dict[str, Any]:
        transaction = f"t{next(self._transactions)}"
        seen = len(self.messages)
        topic = f"{BASE}/{table}/request/{command}"
        await self.client.publish(topic, json.dumps({"transaction": transaction, **body}), qos=1)
        response = await self.wait(
            lambda m: (
                m.topic == f"{BASE}/{table}/response/{command}"
                and m.body.get("transaction") == transaction
            ),
            after=seen,
        )
        await self.answer_shown(table, response.body, after=seen)
        return response.body

    async def deal(self, table: str) -> dict[str, Any]:
        """One card from the table's shoe; the round state that shows it (or the refusal):
        the state comes after the card's event, up to 250 ms later."""
        seen = len(self.messages)
        await self.shoes[table].next_card()
        return await self.card_taken(table, after=seen)

    async def play_log(self, table: str, events: list[dict[str, Any]]) -> None:
        """An example round log at the table: its requests published, its cards dealt."""
        for event in events:
            kind = event["type"]
            if kind == "card":
                await self.deal(table)
            elif kind != "shuffle":  # the shoe reports a shuffle with the burn card after it
                await self.request(table, kind, **{k: v for k, v in event.items() if k != "type"})

    async def play_round(self, table: str, plan: WagerPlan, rng: random.Random) -> None:
        """One round by basic strategy with `plan`'s wagers, the shoe dealing at random."""
        config = TableConfig.from_mapping(self.tables[table])
        simulated = SimulatedRound(config, itertools.repeat(Card.parse("AS")), plan, rng)
        while (event := simulated.next_event(self.snapshot(table))) is not None:
            if isinstance(event, DealCard):
                await self.deal(table)
            else:
                command, body = console_request(event)
                await self.request(table, command, **body)

    def snapshot(self, table: str) -> dict[str, Any]:
        return self.latest_state(table) or {"round": None}

    def settlements(self, table: str) -> list[tuple[dict[str, Any], float]]:
        """Each settlement the broker delivered for `table`, with when it arrived."""
        topic = f"{BASE}/{table}/settlement"
        return [
            (m.body, at)
            for m, at in zip(self.messages, self.arrived_at, strict=True)
            if m.topic == topic
        ]


@contextlib.asynccontextmanager
async def running_floor(
    directory: Path,
    broker: Mosquitto,
    tables: Mapping[str, tuple[dict[str, Any], str | None]],
    *,
    requests: RequestLimits | None = None,
    journal: Callable[[Path], Awaitable[None]] | None = None,
) -> AsyncIterator[Floor]:
    """The daemon and the display serving `tables` (id → its settings and the script its
    shoe deals, or None for a seeded shoe), both from one configuration file; `requests`:
    the daemon's `[requests]` limits, for a console faster than a person; `journal` writes
    the daemon's state directory (its journal of days gone by) before the daemon starts."""
    async with contextlib.AsyncExitStack() as stack:
        shoes = {}
        for table_id, (_, script) in tables.items():
            settings = (
                EmulatorSettings(protocol="reference", script=script)
                if script is not None
                else _seeded_shoe(table_id, tables[table_id][0])
            )
            shoes[table_id] = await stack.enter_async_context(EmulatedShoe(settings))
        floor = Floor(
            directory, broker, {t: s for t, (s, _) in tables.items()}, shoes, free_port(),
            requests=requests,
        )  # fmt: skip
        floor.config.write_text(_config_file(floor), encoding="utf-8")
        await floor.connect_console()
        if journal is not None:
            await journal(directory / "state")
        try:
            await floor.start_daemon()
            for shoe in shoes.values():
                await asyncio.wait_for(shoe.wait_for_host(), START)
            await floor.start_display()
            yield floor
        finally:
            await floor.stop("display")
            await floor.stop("daemon")
            await floor.disconnect_console()


def _seeded_shoe(table_id: str, settings: dict[str, Any]) -> EmulatorSettings:
    """A seeded shoe of the table's own decks: a shoe of other cards would deal what the
    table's census flags as a card its shoe cannot hold, and the table would stop."""
    table = TableConfig.from_mapping({"id": table_id, **settings})
    spanish = table.deck_kind is DeckKind.SPANISH
    return EmulatorSettings(protocol="reference", seed=7, spanish=spanish, decks=table.decks)


def _config_file(floor: Floor) -> str:
    lines = [
        "[mqtt]",
        f'host = "{floor.broker.host}"',
        f"port = {floor.broker.port}",
        f'node = "{NODE}"',
        "reconnect = { initial = 0.05, maximum = 0.5 }",
        "",
        "[journal]",
        f'state_directory = "{floor.directory / "state"}"',
        "",
        "[logging]",
        'format = "json"',
        'level = "info"',
        "",
        "[display]",
        f"port = {floor.port}",
        'title = "Pit A"',
    ]
    if (requests := floor.requests) is not None:
        lines += ["", "[requests]", f"rate = {requests.rate:.0f}", f"burst = {requests.burst}"]
        lines.append(f"queue = {requests.queue}")
    for table_id, settings in floor.tables.items():
        lines += ["", "[[table]]"]
        for key, value in settings.items():
            if key == "limits":
                lines += [
                    f'limits.{kind} = {{ min = "{limit["min"]}", max = "{limit["max"]}" }}'
                    for kind, limit in value.items()
                ]
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        path = floor.shoes[table_id].path
        lines.append(f'shoe = {{ protocol = "reference", transport = "serial", port = "{path}" }}')
    return "\n".join(lines) + "\n"


async def _shoe2mqtt(command: str, config: Path, log: Path) -> asyncio.subprocess.Process:
    """`shoe2mqtt <command> --config <config>`: the installed script, as a user types it."""
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            SHOE2MQTT, command, "--config", str(config),
            cwd=ROOT, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
        )  # fmt: skip


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
