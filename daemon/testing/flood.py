"""A console gone wrong, in its own process: one request, published again and again at a rate;
and the cards dealt beside it, timed to the pit (`card_latencies`).

    python -m daemon.testing.flood --port 1883 --topic shoe2mqtt/bj-1/request/status \\
        --rate 5000 --seconds 10

`Flood` starts that process and stops it; the process prints `flooding` once it floods (until
then a stop would find it without its SIGTERM handler), and one line when done, with what it
sent (`sent=… seconds=… rate=…`), which `Flood.stop` returns. A process of its own so that the
flood's cost falls on neither the daemon nor the test that times the cards beside it. QoS 0,
as the issue's flood was: the broker delivers each one, nobody acknowledges it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from daemon.testing.recorder import MessageLog
    from drivers.emulator import EmulatedShoe

_TICK: Final = 0.005  # seconds per batch: 25 messages a batch at 5,000 a second
_STOP_TIMEOUT: Final = 10.0


@dataclass(frozen=True, slots=True)
class FloodResult:
    sent: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.sent / self.seconds if self.seconds else 0.0


class Flood:
    """The flood as a child process: `await start()`, later `await stop()` for its result."""

    def __init__(
        self,
        port: int,
        topic: str,
        *,
        rate: float,
        seconds: float,
        payload: bytes = b"{}",
        host: str = "127.0.0.1",
    ) -> None:
        self.arguments = [
            "--host", host, "--port", str(port), "--topic", topic, "--rate", str(rate),
            "--seconds", str(seconds), "--payload-size", str(len(payload)),
        ]  # fmt: skip
        self.payload = payload
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "daemon.testing.flood", *self.arguments,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(self.payload)
        self._process.stdin.close()
        # Until it says so, it is still starting (seconds, on a loaded machine), and a stop
        # would find it without its SIGTERM handler: wait for its first line.
        said: list[bytes] = []  # Python's warnings, say, before it (stderr comes here too)
        async with asyncio.timeout(_STOP_TIMEOUT):
            while (line := await self._process.stdout.readline()) != b"flooding\n":
                if not line:
                    raise RuntimeError(f"the flood did not start: {b''.join(said).decode()}")
                said.append(line)

    async def stop(self) -> FloodResult:
        """Stop it now (or collect it if it is done) and return what it sent."""
        process, self._process = self._process, None
        assert process is not None, "the flood was not started"
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        try:
            output, _ = await asyncio.wait_for(process.communicate(), _STOP_TIMEOUT)
        except TimeoutError:
            process.kill()
            output, _ = await process.communicate()
        text = output.decode(errors="replace")
        fields = dict(part.split("=", 1) for part in text.split() if "=" in part)
        if "sent" not in fields:
            raise RuntimeError(f"the flood failed: {text}")
        return FloodResult(int(fields["sent"]), float(fields["seconds"]))


async def card_latencies(
    shoe: EmulatedShoe, log: MessageLog, topic: str, cards: int, *, gap: float = 0.005
) -> list[float]:
    """Deal `cards` cards one after another, each once the last reached the pit; seconds
    from each write to the first message on `topic` after it (what the pit sees)."""
    latencies = []
    for _ in range(cards):
        mark = log.mark()
        began = time.monotonic()
        await shoe.next_card()
        await log.wait(lambda m: m.topic == topic, after=mark)
        latencies.append(time.monotonic() - began)
        await asyncio.sleep(gap)
    return latencies


def flood(arguments: argparse.Namespace, payload: bytes) -> FloodResult:
    """Publish `payload` at `rate` a second until `seconds` pass or SIGTERM comes.

    The packets are MQTT 3.1.1's own bytes, made once and written in batches on a plain
    socket: an MQTT client library would spend a large part of a core on 5,000 messages a
    second, and on this 2-core machine that time would come out of the daemon's, which is
    what the flood is meant to test, not the flooder's.
    """
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    packet = _publish_packet(arguments.topic, payload)
    sent = 0
    with socket.create_connection((arguments.host, arguments.port), timeout=10) as sock:
        sock.sendall(_connect_packet(f"flood-{time.monotonic_ns()}"))
        if sock.recv(4)[:1] != b"\x20":  # CONNACK
            raise ConnectionError("the broker did not accept the flood's connection")
        sys.stdout.write("flooding\n")  # Flood.start waits for this line
        sys.stdout.flush()
        began = time.monotonic()
        while not stopping and (now := time.monotonic()) - began < arguments.seconds:
            due = int((now - began) * arguments.rate) + 1
            sock.sendall(packet * (due - sent))
            sent = due
            time.sleep(_TICK)
        elapsed = time.monotonic() - began
        sock.sendall(b"\xe0\x00")  # DISCONNECT
    return FloodResult(sent, elapsed)


def _connect_packet(client_id: str) -> bytes:
    """MQTT 3.1.1 CONNECT (section 3.1): clean session, keep-alive off, no will or login."""
    variable = _string(b"MQTT") + bytes([4, 0x02, 0, 0])
    return _packet(0x10, variable + _string(client_id.encode()))


def _publish_packet(topic: str, payload: bytes) -> bytes:
    """MQTT 3.1.1 PUBLISH at QoS 0 (section 3.3): no packet id, nothing comes back."""
    return _packet(0x30, _string(topic.encode()) + payload)


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


def _packet(header: int, body: bytes) -> bytes:
    length, encoded = len(body), bytearray()
    while True:  # the remaining length, 7 bits a byte (section 2.2.3)
        length, digit = divmod(length, 128)
        encoded.append(digit | (0x80 if length else 0))
        if not length:
            return bytes([header, *encoded]) + body


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m daemon.testing.flood")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--rate", type=float, required=True, help="messages a second")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--payload-size", type=int, required=True, help="bytes on stdin")
    arguments = parser.parse_args(argv)
    payload = sys.stdin.buffer.read(arguments.payload_size)
    result = flood(arguments, payload)
    sys.stdout.write(f"sent={result.sent} seconds={result.seconds:.3f} rate={result.rate:.0f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
