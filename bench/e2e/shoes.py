"""The load's shoes: the emulator's device side, dealing exactly the cards the load says.

The emulator (drivers/emulator) encodes every frame, answers the host and keeps the device's
sequence numbers; what it deals comes from its shoe model, and `FedShoeModel` is a model
that deals the next card the benchmark hands it (after a new shoe when the step says so).
Two ways to the host, as at a real table:
- `PtyShoe`: the emulator's own `EmulatedShoe` on a pseudo-terminal, a serial port to the
  host (`[table.shoe] transport = "serial"`);
- `TcpShoe`: the emulator's sans-I/O core behind a TCP server on 127.0.0.1, as a serial
  device server (ser2net, Moxa NPort in TCP server mode) delivers a shoe: the host connects
  (`transport = "tcp"`), and the bytes are the same.

`deal(step)` writes the card now and returns the CLOCK_MONOTONIC time just before the write.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import time
from typing import TYPE_CHECKING, Any, Protocol

from drivers.emulator import EmulatedShoe, EmulatorSettings, ShoeEmulator
from drivers.emulator.shoe_model import Drawn, ShoeModel, Shuffled, parse_card

if TYPE_CHECKING:
    from bench.e2e.load import CardStep
    from drivers.emulator import Write
    from drivers.emulator.shoe_model import ShoeStep

BAUDRATE = 115200


class FedShoeModel(ShoeModel):
    """A shoe model that deals what it is fed, and nothing else. `announced`: the shuffle
    that opens its first shoe is already in the daemon's journal (a warm start), so the shoe
    does not announce it again."""

    def __init__(self, *, announced: bool = False) -> None:
        self._steps: collections.deque[ShoeStep] = collections.deque()
        self._announced = announced

    def feed(self, step: CardStep) -> None:
        if step.shuffled and self._announced:
            self._announced = False
        elif step.shuffled:
            self._steps.append(Shuffled())
        self._steps.append(Drawn(parse_card(str(step.card)), burned=step.burned))

    def next_step(self) -> ShoeStep | None:
        return self._steps.popleft() if self._steps else None

    def request_shuffle(self) -> None:
        self._steps.appendleft(Shuffled())


class LoadShoe(Protocol):
    async def start(self) -> None: ...
    async def wait_for_host(self) -> None: ...
    async def deal(self, step: CardStep) -> float: ...
    def shoe_section(self) -> str | tuple[str, int]:
        """Where the daemon finds it: a serial port, or a device server's (host, port)."""
        ...

    async def aclose(self) -> None: ...
    def endpoint(self) -> str: ...


def _settings(seed: int) -> EmulatorSettings:
    return EmulatorSettings(protocol="reference", seed=seed)


class PtyShoe:
    """The emulator on a pty."""

    def __init__(self, seed: int, *, announced: bool = False) -> None:
        self._shoe = EmulatedShoe(_settings(seed))
        self._model = FedShoeModel(announced=announced)
        self._shoe.core.model = self._model

    async def start(self) -> None:
        await self._shoe.__aenter__()

    async def wait_for_host(self) -> None:
        await self._shoe.wait_for_host()

    async def deal(self, step: CardStep) -> float:
        self._model.feed(step)
        written = time.monotonic()
        await self._shoe.next_card()
        return written

    def endpoint(self) -> str:
        return self._shoe.path

    def shoe_section(self) -> str | tuple[str, int]:
        return self._shoe.path

    async def aclose(self) -> None:
        await self._shoe.aclose()


class TcpShoe:
    """The emulator's core behind a TCP server: one host connection at a time, as a serial
    device server allows; frames dealt while no host is connected are lost, as on a line."""

    def __init__(self, seed: int, *, announced: bool = False) -> None:
        self.core = ShoeEmulator(_settings(seed), seed)
        self._model = FedShoeModel(announced=announced)
        self.core.model = self._model
        self._server: asyncio.Server | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._serving: asyncio.Task[Any] | None = None
        self._connected = asyncio.Event()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._writer is not None:  # the port is taken, as on a device server
            writer.close()
            return
        # Python 3.11's server keeps no reference to this task: collected while it waits, it
        # would close the connection under the host's feet.
        self._serving = asyncio.current_task()
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writer = writer
        self._write(self.core.power_up())
        self._connected.set()
        try:
            while data := await reader.read(4096):
                self._write(self.core.receive(data))
        except OSError:
            pass
        finally:
            self._writer = None
            self._connected.clear()
            writer.close()

    def _write(self, writes: list[Write]) -> None:
        if self._writer is not None and writes:
            self._writer.write(b"".join(w.data for w in writes))

    async def wait_for_host(self) -> None:
        await self._connected.wait()

    async def deal(self, step: CardStep) -> float:
        self._model.feed(step)
        dealing = self.core.deal()
        assert dealing is not None, "a fed shoe deals what it was fed"
        written = time.monotonic()
        self._write(dealing.writes)
        return written

    def endpoint(self) -> str:
        return f"tcp:127.0.0.1:{self.port}"

    def shoe_section(self) -> str | tuple[str, int]:
        return ("127.0.0.1", self.port)

    async def aclose(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()


def make_shoe(transport: str, seed: int, *, announced: bool = False) -> LoadShoe:
    """`announced`: FedShoeModel's."""
    if transport == "tcp":
        return TcpShoe(seed, announced=announced)
    return PtyShoe(seed, announced=announced)
