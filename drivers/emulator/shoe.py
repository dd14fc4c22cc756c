"""The emulated shoe on a virtual serial port: what tests, the demo and benchmarks drive.

    async with EmulatedShoe(EmulatorSettings(protocol="enq", seed=7)) as shoe:
        print(shoe.path)              # what a host opens: the link if set, else /dev/pts/N
        await shoe.wait_for_host()    # until a host opens the port (optional)
        await shoe.next_card()        # one card now, whatever the pace
        await shoe.deal(10)           # ten cards at the configured pace
        await shoe.run()              # at pace until a script ends, or until cancelled
        await shoe.wait_taken()       # until the host has every frame (acknowledged or read)

Everything protocol-shaped happens in the sans-I/O `ShoeEmulator` (`shoe.core`); this class
only performs its writes, feeds it what the host sends, and keeps time: the pace, the
heartbeats, the resends of an unacknowledged frame, and the unplug schedule.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from typing import TYPE_CHECKING, Self

from drivers.emulator.core import Dealt, EmulatorStats, ShoeEmulator, Write
from drivers.emulator.pty_port import PortUnplugged, VirtualSerialPort
from drivers.emulator.settings import EmulatorSettings
from drivers.logs import get_logger

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Coroutine
    from types import TracebackType

    from drivers.emulator.faults import FaultName
    from drivers.events import Event, FaultKind

_log = get_logger("drivers.emulator")


class EmulatedShoe:
    def __init__(self, settings: EmulatorSettings | None = None) -> None:
        self.settings = settings if settings is not None else EmulatorSettings()
        self.seed = self.settings.seed if self.settings.seed is not None else secrets.randbits(32)
        # A new number at every power-up, as a device picks it (docs/protocol.md §1.5).
        self.core = ShoeEmulator(self.settings, self.seed, power_up=secrets.randbits(32))
        self._port = VirtualSerialPort(self.settings.link)
        self._write_lock = asyncio.Lock()  # one frame at a time, even split with pauses
        self._host_opened = asyncio.Event()
        self._sent = asyncio.Event()  # something went out: what is in flight may have changed
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_write = 0.0
        self._runner_stats = EmulatorStats()

    # ---------------------------------------------------------------- the port

    @property
    def port_path(self) -> str:
        """The pty a host would open now, /dev/pts/N; a new one after every replug."""
        return self._port.path

    @property
    def link(self) -> str | None:
        return None if self.settings.link is None else str(self.settings.link)

    @property
    def path(self) -> str:
        """What a host should open: the link, which survives replugs, or else the pty."""
        return self.link if self.link is not None else self.port_path

    @property
    def plugged(self) -> bool:
        return self._port.plugged

    @property
    def stats(self) -> EmulatorStats:
        """The core's counters plus the port's: host opens, unplugs, cards lost meanwhile."""
        runner = self._runner_stats
        return dataclasses.replace(
            self.core.stats,
            host_opens=runner.host_opens,
            unplugs=runner.unplugs,
            cards_lost_unplugged=runner.cards_lost_unplugged,
        )

    @property
    def received(self) -> list[Event]:
        """The host's latest commands (acknowledgements, status requests, ENQ commands)."""
        return self.core.received

    async def __aenter__(self) -> Self:
        self._port.plug_in()
        self._start(self._serve_host(), "emulator host reader")
        if self.settings.heartbeat_interval is not None:
            self._start(self._beat(self.settings.heartbeat_interval), "emulator heartbeat")
        if self.core.reliable:
            self._start(self._resend_unacknowledged(), "emulator resend")
        if self.settings.unplug_every is not None:
            self._start(self._unplug_regularly(self.settings.unplug_every), "emulator unplug")
        # Power-up: a host already listening (or one that does not flush) hears the device.
        await self._send(self.core.power_up())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        tasks, self._tasks = self._tasks, set()
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        self._port.close()
        for result in results:
            if isinstance(result, Exception):  # a background task failed: that is a bug
                raise result

    async def wait_for_host(self) -> None:
        """Until a host has opened the port since it was last plugged in."""
        await self._host_opened.wait()

    async def wait_drained(self) -> None:
        """Until the host has read every byte written: wrap it in a timeout, as a host that
        never opens the port never reads."""
        await self._port.wait_read_by_host()

    async def wait_taken(self) -> None:
        """Until the host has taken everything dealt: acknowledged every kept frame (reference
        protocol), or read every byte (a protocol that keeps nothing). A host that never
        comes never takes: wrap it in a timeout where that matters."""
        if not self.core.reliable:
            await self.wait_drained()
            return
        while self.core.unacknowledged:
            self._sent.clear()
            await self._sent.wait()

    async def unplug(self) -> None:
        """Pull the cable: see `pty_port` for what the host sees. The shoe keeps counting."""
        if self._port.plugged:
            self._runner_stats.unplugs += 1
            self._host_opened.clear()
            self._port.unplug()

    async def replug(self) -> None:
        """A new pty, with the link pointed at it; the shoe greets the next host that opens it."""
        self._port.plug_in()

    # ---------------------------------------------------------------- dealing

    async def next_card(self) -> Dealt | None:
        """Deal one card now; None when a script has run out. On the reference protocol the
        card's frame may wait its turn behind unacknowledged ones: it is kept meanwhile."""
        dealing = self.core.deal()
        if dealing is None:
            return None
        delivered = await self._send(dealing.writes)
        if delivered or dealing.dealt.kept:
            return dealing.dealt
        self._runner_stats.cards_lost_unplugged += 1
        return dataclasses.replace(dealing.dealt, lost_unplugged=True)

    async def deal(self, count: int) -> list[Dealt]:
        """Deal up to `count` cards at the configured pace (fewer if a script runs out)."""
        return [card async for card in self._paced(count)]

    async def run(self, on_card: Callable[[Dealt], None] | None = None) -> int:
        """Deal at pace until a script runs out (returns the number dealt) or cancelled;
        `on_card` sees every card as it goes out."""
        dealt = 0
        async for card in self._paced(None):
            dealt += 1
            if on_card is not None:
                on_card(card)
        return dealt

    async def _paced(self, count: int | None) -> AsyncIterator[Dealt]:
        pace = self.settings.pace
        loop = asyncio.get_running_loop()
        due = loop.time()
        dealt = 0
        while count is None or dealt < count:
            if pace is not None:
                await asyncio.sleep(max(0.0, due - loop.time()))
                due += 1 / pace
            elif dealt:
                await self.wait_taken()  # as fast as the host takes them, no faster
            card = await self.next_card()
            if card is None:
                return
            dealt += 1
            yield card

    # ---------------------------------------------------------------- other shoe events

    def force_fault(self, fault: FaultName) -> None:
        """Apply `fault` to the next frame (`unreadable`: to the next card)."""
        self.core.force(fault)

    async def shuffle(self) -> None:
        await self._send(self.core.shuffle())

    async def heartbeat(self) -> None:
        await self._send(self.core.heartbeat())

    async def set_fault(self, kind: FaultKind, code: int = 0) -> None:
        """The device reports a fault (a jam, an open cover...) until `clear_fault`."""
        await self._send(self.core.set_fault(kind, code))

    async def clear_fault(self, kind: FaultKind, code: int = 0) -> None:
        await self._send(self.core.clear_fault(kind, code))

    async def write_noise(self, data: bytes) -> bool:
        """Put `data` on the line between two frames, as line noise would (never inside a
        frame); False if the cable was out."""
        return await self._send([Write(data)])

    # ---------------------------------------------------------------- I/O

    async def _send(self, writes: list[Write]) -> bool:
        """Perform `writes` in order; False if the cable was out and they were lost."""
        self._sent.set()  # the core changed what it keeps or sends: anyone waiting looks again
        if not writes:
            return True
        async with self._write_lock:
            try:
                for data, pause in _coalesce(writes):
                    if pause:
                        await asyncio.sleep(pause)
                    await self._port.write(data)
            except PortUnplugged:
                return False
            finally:
                self._last_write = asyncio.get_running_loop().time()
        return True

    async def _serve_host(self) -> None:
        while True:
            try:
                packet = await self._port.read()
            except PortUnplugged:
                await self._port.wait_plugged()
                continue
            if packet.host_opened:
                self._runner_stats.host_opens += 1
                _log.info("emulator.host_opened", port=self._port.path)
                if not self.core.reliable:
                    # An ENQ shoe says `S` to a new connection. A reference device cannot see
                    # a host open the line; it learns of one from its STATUS_REQUEST.
                    await self._send(self.core.power_up())
                self._host_opened.set()
            if packet.data:
                await self._send(self.core.receive(packet.data))

    async def _beat(self, interval: float) -> None:
        loop = asyncio.get_running_loop()
        while True:
            idle = loop.time() - self._last_write
            if idle >= interval:
                await self.heartbeat()
                idle = 0.0
            await asyncio.sleep(interval - idle)

    async def _resend_unacknowledged(self) -> None:
        """The device's timer: the frame in flight goes again if no acknowledgement comes."""
        while True:
            in_flight = self.core.in_flight
            wait = self.core.resend_after()
            self._sent.clear()
            if wait is None:
                await self._sent.wait()
                continue
            try:
                async with asyncio.timeout(wait):
                    while self.core.in_flight == in_flight:
                        await self._sent.wait()
                        self._sent.clear()
            except TimeoutError:
                if self.core.in_flight == in_flight:
                    await self._send(self.core.resend())

    async def _unplug_regularly(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            await self.unplug()
            await asyncio.sleep(self.settings.unplug_for)
            await self.replug()

    def _start(self, coroutine: Coroutine[None, None, None], name: str) -> None:
        self._tasks.add(asyncio.create_task(coroutine, name=name))


def _coalesce(writes: list[Write]) -> list[tuple[bytes, float]]:
    """Join writes that need no pause between them: one system call per burst."""
    joined: list[tuple[bytes, float]] = []
    for write in writes:
        if joined and not write.pause_before:
            data, pause = joined[-1]
            joined[-1] = (data + write.data, pause)
        else:
            joined.append((write.data, write.pause_before))
    return joined
