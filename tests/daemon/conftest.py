"""A real mosquitto per test, and a subscriber that collects what reaches it.

The broker is Debian's /usr/sbin/mosquitto on a free 127.0.0.1 port, configured from a file
in the test's tmp_path. `stop()` and `start()` take it down and bring it back on the same
port, which is how a test makes a broker restart happen. Teardown terminates and waits, so
the suite's leak check sees no child process or socket left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import aiomqtt
import pytest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from contextlib import AbstractAsyncContextManager

MOSQUITTO: Final = Path("/usr/sbin/mosquitto")
_STARTUP_TIMEOUT: Final = 5.0
_SHUTDOWN_TIMEOUT: Final = 5.0


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


class Mosquitto:
    """One broker process at a time on a fixed port; stop and start it at will."""

    host: Final = "127.0.0.1"

    def __init__(
        self, directory: Path, *, persistence: bool, tls: Certificates | None = None
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.port = _free_port(self.host)
        self.directory = directory
        self.log_file = directory / "mosquitto.log"
        self.config_file = directory / "mosquitto.conf"
        lines = [
            f"listener {self.port} {self.host}",
            "allow_anonymous true",
            f"persistence {str(persistence).lower()}",
            f"persistence_location {directory}/",
            f"log_dest file {self.log_file}",
            "log_type all",
            # Started as root, mosquitto would drop to user `mosquitto`, who cannot write
            # into tmp_path; naming the current user keeps it as it is.
            f"user {getpass.getuser()}",
        ]
        if tls is not None:  # options of the listener above: TLS only, no client certificate
            lines += [
                f"cafile {tls.ca}",
                f"certfile {tls.server_cert}",
                f"keyfile {tls.server_key}",
            ]
        self.config_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        assert not self.running, "mosquitto is already running"
        with (self.directory / "mosquitto.stderr").open("ab") as stderr:
            self._process = subprocess.Popen(  # noqa: S603 - a fixed binary and our own config
                [MOSQUITTO, "-c", str(self.config_file)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while not self._accepts_connections():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"mosquitto did not start; its log says:\n{self.log()}")
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
        paths = (self.log_file, self.directory / "mosquitto.stderr")
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())

    def _accepts_connections(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.2):
                return True
        except OSError:
            return False


def _broker(
    tmp_path: Path, *, persistence: bool, tls: Certificates | None = None
) -> Iterator[Mosquitto]:
    if shutil.which(MOSQUITTO) is None:
        pytest.fail(f"{MOSQUITTO} is missing: apt-get install mosquitto (scripts/test does)")
    broker = Mosquitto(tmp_path / "mosquitto", persistence=persistence, tls=tls)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A fresh broker that forgets everything (retained messages too) when restarted."""
    yield from _broker(tmp_path, persistence=False)


@pytest.fixture
def persistent_mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker that keeps sessions and queued messages across `stop()` and `start()`.

    Lets a subscriber with a persistent session receive what was published while it was
    offline, so a test need not race the link to be subscribed first after a restart.
    """
    yield from _broker(tmp_path, persistence=True)


@pytest.fixture
def tls_mosquitto(tmp_path: Path, certificates: Certificates) -> Iterator[Mosquitto]:
    """A broker speaking only TLS, with a certificate for 127.0.0.1 from `certificates.ca`."""
    yield from _broker(tmp_path, persistence=False, tls=certificates)


@dataclass(frozen=True)
class Certificates:
    """A throwaway CA, a server certificate it signed for 127.0.0.1, and a client pair."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    encrypted_client_key: Path


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    directory = tmp_path / "pki"
    directory.mkdir()
    files = Certificates(
        ca=directory / "ca.pem",
        server_cert=directory / "server.pem",
        server_key=directory / "server.key",
        client_cert=directory / "client.pem",
        client_key=directory / "client.key",
        encrypted_client_key=directory / "client-encrypted.key",
    )
    new_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-noenc", "-days", "2"]
    ca_key = directory / "ca.key"
    _openssl("req", "-x509", *new_key, "-keyout", ca_key, "-out", files.ca, "-subj", "/CN=ca")
    signed_by_ca: list[str | Path] = ["-CA", files.ca, "-CAkey", ca_key]
    _openssl(
        "req", "-x509", *new_key, *signed_by_ca, "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", files.server_key, "-out", files.server_cert,
    )  # fmt: skip
    _openssl(
        "req", "-x509", *new_key, *signed_by_ca, "-subj", "/CN=shoe2mqtt-test",
        "-keyout", files.client_key, "-out", files.client_cert,
    )  # fmt: skip
    _openssl(
        "pkey", "-in", files.client_key, "-aes256", "-passout", "pass:only-a-person-knows",
        "-out", files.encrypted_client_key,
    )  # fmt: skip
    return files


def _openssl(*arguments: str | Path) -> None:
    subprocess.run(  # noqa: S603 - fixed arguments
        ["/usr/bin/openssl", *map(str, arguments)], check=True, capture_output=True, timeout=10
    )


@dataclass
class Subscriber:
    """An aiomqtt client subscribed to some filters; `next()` returns what arrives."""

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


class Subscribe(Protocol):
    def __call__(
        self, *topic_filters: str, identifier: str | None = None, persistent: bool = False
    ) -> AbstractAsyncContextManager[Subscriber]: ...


def _subscribe_factory(broker: Mosquitto) -> Subscribe:
    @contextlib.asynccontextmanager
    async def subscribe(
        *topic_filters: str, identifier: str | None = None, persistent: bool = False
    ) -> AsyncIterator[Subscriber]:
        client = aiomqtt.Client(
            broker.host, broker.port, identifier=identifier, clean_session=not persistent
        )
        async with client:
            await client.subscribe([(topic_filter, 1) for topic_filter in topic_filters])
            yield Subscriber(client)

    return subscribe


@pytest.fixture
def subscribe(mosquitto: Mosquitto) -> Subscribe:
    """`async with subscribe("a/#", "b") as subscriber:` on the `mosquitto` broker.

    `identifier=..., persistent=True` asks for a session the broker keeps while the
    subscriber is away (useful only with `persistent_mosquitto`).
    """
    return _subscribe_factory(mosquitto)


@pytest.fixture
def subscribe_persistent(persistent_mosquitto: Mosquitto) -> Subscribe:
    """`subscribe`, on the `persistent_mosquitto` broker."""
    return _subscribe_factory(persistent_mosquitto)
