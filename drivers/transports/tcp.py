"""TCP to a serial device server (ser2net, Moxa NPort in TCP server mode): the same bytes."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Final

from drivers.transports.errors import OpenFailed, SettingsCheck, describe_value
from drivers.transports.streams import StreamTransport, describe_errno, errno_of

_OPEN_ADVICE: Final[dict[int, str]] = {
    errno.ECONNREFUSED: "{endpoint} refused the connection: is the device server on, and is "
    "the port its TCP server port?",
    errno.EHOSTUNREACH: "{endpoint} is unreachable: check the network and the address",
    errno.ENETUNREACH: "{endpoint} is unreachable: check the network and the address",
    errno.ETIMEDOUT: "{endpoint} did not answer: check the network and the address",
}


@dataclass(frozen=True, slots=True)
class TcpSettings:
    host: str
    port: int
    connect_timeout: float = 5.0  # seconds; a device server on a LAN answers in milliseconds
    # The OS probes an idle connection, so a device server that lost power is noticed
    # without waiting for the next card.
    keepalive: bool = True

    def __post_init__(self) -> None:
        check = SettingsCheck()
        if not is_host(self.host):
            check.refuse(
                "host",
                self.host,
                "must be a host name (ASCII letters, digits, '-', '.') or an IP address, "
                f"not {describe_value(self.host)}",
            )
        check.whole_number(
            "port",
            self.port,
            allowed=range(1, 65536),
            message="must be a TCP port 1-65535 (ser2net and NPort often use 4001 or 2000+)",
        )
        check.seconds("connect_timeout", self.connect_timeout, above=0, most=300)
        check.flag("keepalive", self.keepalive)
        check.raise_any()


def is_host(text: object) -> bool:
    """An IP address, or a DNS name of ASCII labels (RFC 1123; '_' too, as some sites use).

    Non-ASCII names must be written as their IDNA form (xn--...): a name the resolver would
    have to convert is refused here rather than failing at every connection attempt.
    """
    if not isinstance(text, str):
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return len(text) <= _HOST_NAME_MAX and _HOST_NAME.fullmatch(text) is not None
    return True


_LABEL: Final = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOST_NAME: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?", re.ASCII)
_HOST_NAME_MAX: Final = 253  # RFC 1035 2.3.4, written without the final dot


class TcpTransport(StreamTransport):
    def __init__(self, settings: TcpSettings) -> None:
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        super().__init__(f"{host}:{settings.port}")
        self.settings = settings

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        settings = self.settings
        try:
            async with asyncio.timeout(settings.connect_timeout):
                reader, writer = await asyncio.open_connection(settings.host, settings.port)
        except socket.gaierror as exc:
            message = f"cannot resolve host {settings.host!r}: {exc.strerror}"
            raise OpenFailed(message, endpoint=self.endpoint) from exc
        except OSError as exc:  # TimeoutError included
            code = errno.ETIMEDOUT if isinstance(exc, TimeoutError) else errno_of(exc)
            if code in _OPEN_ADVICE:
                message = _OPEN_ADVICE[code].format(endpoint=self.endpoint)
            else:
                detail = describe_errno(code) if code is not None else str(exc)
                message = f"cannot connect to {self.endpoint}: {detail}"
            raise OpenFailed(message, endpoint=self.endpoint, errno=code) from exc
        if settings.keepalive:
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        return reader, writer

    def _lost_message(self, strerror: str) -> str:
        return f"lost connection to {self.endpoint}: {strerror}"
