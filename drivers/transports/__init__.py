"""Byte streams to a shoe: a serial port, a TCP device server, a native USB device, or a
capture of what a shoe once sent, played back.

Each transport is built from a frozen settings dataclass that checks itself when built, so a
wrong setting is reported at start-up with what to change, not at the first connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, assert_never

from drivers.transports.base import Transport
from drivers.transports.capture import CaptureSettings, CaptureTransport
from drivers.transports.errors import (
    LinkLost,
    NotConnected,
    OpenFailed,
    SettingsError,
    TransportError,
)
from drivers.transports.serial_line import SerialSettings, SerialTransport, is_absolute_path
from drivers.transports.tcp import TcpSettings, TcpTransport, is_host
from drivers.transports.usb_device import UsbSettings
from drivers.transports.usb_transport import UsbTransport

if TYPE_CHECKING:
    from collections.abc import Callable

TransportSettings: TypeAlias = SerialSettings | TcpSettings | UsbSettings | CaptureSettings
TransportFactory: TypeAlias = "Callable[[], Transport]"


def transport_factory(settings: TransportSettings) -> Callable[[], Transport]:
    """What a driver calls for a fresh transport before every connection attempt."""
    match settings:
        case SerialSettings():
            return lambda: SerialTransport(settings)
        case TcpSettings():
            return lambda: TcpTransport(settings)
        case UsbSettings():
            return lambda: UsbTransport(settings)
        case CaptureSettings():
            return lambda: CaptureTransport(settings)
        case _:
            assert_never(settings)


__all__ = [
    "CaptureSettings",
    "CaptureTransport",
    "LinkLost",
    "NotConnected",
    "OpenFailed",
    "SerialSettings",
    "SerialTransport",
    "SettingsError",
    "TcpSettings",
    "TcpTransport",
    "Transport",
    "TransportError",
    "TransportFactory",
    "TransportSettings",
    "UsbSettings",
    "UsbTransport",
    "is_absolute_path",
    "is_host",
]
