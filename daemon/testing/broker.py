"""A real mosquitto on a free loopback port, and a subscriber that reads what it delivers.

The broker is Debian's /usr/sbin/mosquitto with a configuration file written into a directory
of the caller's (a test's tmp_path, a benchmark's workspace). `stop()` and `start()` take it
down and bring it back on the same port, which is how a broker restart is made to happen;
`stop()` always waits for the process, so nothing is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, Self

import aiomqtt

from daemon.cli.loopback import LOOPBACK, free_port

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from contextlib import AbstractAsyncContextManager
    from types import TracebackType

    from daemon.testing.pki import Certificates

MOSQUITTO: Final = Path("/usr/sbin/mosquitto")
_STARTUP_TIMEOUT: Final = 10.0
_EPHEMERAL_PORTS: Final = Path("/proc/sys/net/ipv4/ip_local_port_range")
_SHUTDOWN_TIMEOUT: Final = 5.0


class BrokerDidNotStart(Exception):
    """mosquitto is missing, exited at once, or did not listen in time; `log` says why."""

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(f"{reason}; its log says:\n{log}" if log else reason)
        self.reason = reason
        self.log = log


def restartable_port(host: str = LOOPBACK) -> int:
    """A port nothing listens on, above the kernel's range of ephemeral ports, for a broker
    that is stopped and started again on it. The kernel gives an outgoing connection its
    local port from that range, so a port the kernel chose (`free_port`) may be taken by
    another process's connection while its broker is down ("Address already in use" as a
    persistent broker came back: seen once in CI, the suite's four workers connecting all
    the while). Where the range leaves no room above it, the kernel's choice."""
    try:
        high = int(_EPHEMERAL_PORTS.read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return free_port(host)
    ports = list(range(high + 1, 65536))
    random.shuffle(ports)  # parallel workers try different ports first
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    return free_port(host)


class Mosquitto:
    """One broker process at a time on a fixed port; stop and start it at will.

    `persistence` keeps sessions and queued messages across a restart. `tls` makes the one
    listener TLS only (no client certificate asked). `log_all` logs every packet (a test reads
    the log on a failure); a benchmark leaves it off. `options` are more configuration lines.
    `use_config` replaces the whole file, for a configuration of the caller's own.
    """

    host: Final = LOOPBACK

    def __init__(
        self,
        directory: Path,
        *,
        persistence: bool = False,
        tls: Certificates | None = None,
        log_all: bool = True,
        options: Sequence[str] = (),
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.port = restartable_port(self.host)
        self.directory = directory
        self.log_file = directory / "mosquitto.log"
        self.config_file = directory / "mosquitto.conf"
        self._stderr = directory / "mosquitto.stderr"
        lines = [
            f"listener {self.port} {self.host}",
            "allow_anonymous true",
            f"persistence {str(persistence).lower()}",
            f"persistence_location {directory}/",
            f"log_dest file {self.log_file}",
            *(["log_type all"] if log_all else []),
            # Started as root, mosquitto would drop to user `mosquitto`, who cannot write
            # into the caller's directory; naming the current user keeps it as it is.
            f"user {getpass.getuser()}",
        ]
        if tls is not None:  # options of the listener above: TLS only, no client certificate
            lines += [
                f"cafile {tls.ca}",
                f"certfile {tls.server_cert}",
                f"keyfile {tls.server_key}",
            ]
        self.use_config("\n".join([*lines, *options]) + "\n")
        self._process: subprocess.Popen[bytes] | None = None

    def use_config(self, text: str) -> None:
        """Run with this configuration from the next `start()` on."""
        self.config_file.write_text(text, encoding="utf-8")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int:
        """The running broker's process id (a benchmark reads its CPU time from /proc)."""
        assert self._process is not None, "mosquitto is not running"
        return self._process.pid

    def start(self) -> None:
        """Start it and return once it accepts connections; `BrokerDidNotStart` if it does not."""
        assert not self.running, "mosquitto is already running"
        if shutil.which(MOSQUITTO) is None:
            raise BrokerDidNotStart(f"{MOSQUITTO} is missing: apt-get install mosquitto")
        with self._stderr.open("ab") as stderr:
            self._process = subprocess.Popen(  # noqa: S603 - a fixed binary and our own config
                [MOSQUITTO, "-c", str(self.config_file)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        # mosquitto gives no readiness signal but its listening socket.
        while not self._accepts_connections():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise BrokerDidNotStart("mosquitto did not start", self.log())
            time.sleep(0.01)

    def stop(self) -> None:
        """Terminate (SIGTERM: a persistent broker saves its sessions) and wait."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(_SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def log(self) -> str:
        paths = (self.log_file, self._stderr)
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _accepts_connections(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.2):
                return True
        except OSError:
            return False


@dataclass
class Subscriber:
    """An MQTT client subscribed to some filters; `next()` returns what arrives."""

    client: aiomqtt.Client

    async def next(self, within: float = 5.0) -> aiomqtt.Message:
        async with asyncio.timeout(within):
            return await anext(self.client.messages)

    async def payloads(self, count: int, within: float = 5.0) -> list[bytes]:
        return [_as_bytes((await self.next(within)).payload) for _ in range(count)]

    async def next_on(self, topic: str, within: float = 5.0) -> aiomqtt.Message:
        """Skips messages on other topics."""
        async with asyncio.timeout(within):
            while True:
                message = await anext(self.client.messages)
                if message.topic.value == topic:
                    return message

    async def nothing_within(self, seconds: float) -> bool:
        with contextlib.suppress(TimeoutError):
            await self.next(seconds)
            return False
        return True


def _as_bytes(payload: object) -> bytes:
    assert isinstance(payload, bytes), payload
    return payload


@contextlib.asynccontextmanager
async def subscriber(
    broker: Mosquitto, *topic_filters: str, identifier: str | None = None, persistent: bool = False
) -> AsyncIterator[Subscriber]:
    """`async with subscriber(broker, "a/#", "b") as display:`, at QoS 1.

    `identifier=..., persistent=True` asks for a session the broker keeps while the
    subscriber is away (it outlives a broker restart only with `persistence`).
    """
    client = aiomqtt.Client(
        broker.host, broker.port, identifier=identifier, clean_session=not persistent
    )
    async with client:
        await client.subscribe([(topic_filter, 1) for topic_filter in topic_filters])
        yield Subscriber(client)


class Subscribe(Protocol):
    """`subscriber` with its broker given: what a test's `subscribe` fixture is."""

    def __call__(
        self, *topic_filters: str, identifier: str | None = None, persistent: bool = False
    ) -> AbstractAsyncContextManager[Subscriber]: ...
