"""Serial ports (USB-serial adapters, on-board UARTs) through pyserial-asyncio-fast."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final, Literal, TypeAlias, get_args

import serial
import serial_asyncio_fast

from drivers.transports.errors import OpenFailed, SettingsCheck, describe_value
from drivers.transports.streams import StreamTransport, describe_errno, errno_of

if TYPE_CHECKING:
    import asyncio

Parity: TypeAlias = Literal["N", "E", "O", "M", "S"]
PARITIES: Final[tuple[Parity, ...]] = get_args(Parity)
BYTESIZES: Final = (5, 6, 7, 8)
STOPBITS: Final = (1, 1.5, 2)
# Any rate the kernel has a constant for is accepted; these are the ones worth suggesting.
# Shoes seen in the field run at 4800 or 9600 (docs/protocol.md).
COMMON_BAUDRATES: Final = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
STANDARD_BAUDRATES: Final = frozenset(serial.Serial.BAUDRATES)


@dataclass(frozen=True, slots=True)
class SerialSettings:
    """One serial port and its line settings; invalid values raise `SettingsError` here."""

    port: str  # a device path; prefer /dev/serial/by-id/..., which survives replugging
    baudrate: int = 9600
    bytesize: int = 8
    parity: Parity = "N"
    stopbits: float = 1
    # Lock the port (flock) so a second daemon, or a terminal program left open, cannot
    # silently share it and steal half of the bytes.
    exclusive: bool = True

    def __post_init__(self) -> None:
        check = SettingsCheck()
        if not is_absolute_path(self.port):
            check.refuse(
                "port",
                self.port,
                "must be a device path such as /dev/ttyUSB0 or /dev/serial/by-id/...; "
                "list them with `shoe2mqtt ports`",
            )
        common = ", ".join(map(str, COMMON_BAUDRATES))
        check.whole_number(
            "baudrate",
            self.baudrate,
            allowed=STANDARD_BAUDRATES,
            message=f"must be a standard baud rate (shoes use 4800 or 9600; common: {common})",
        )
        check.whole_number(
            "bytesize", self.bytesize, allowed=BYTESIZES, message="data bits must be 5, 6, 7 or 8"
        )
        if not isinstance(self.parity, str) or self.parity not in PARITIES:
            check.refuse(
                "parity",
                self.parity,
                "parity must be one of N, E, O, M, S (none, even, odd, mark, space), "
                f"not {describe_value(self.parity)}",
            )
        if isinstance(self.stopbits, bool) or not isinstance(self.stopbits, int | float):
            check.refuse(
                "stopbits", self.stopbits, f"must be a number, not {describe_value(self.stopbits)}"
            )
        elif self.stopbits not in STOPBITS:
            check.refuse(
                "stopbits", self.stopbits, f"stop bits must be 1, 1.5 or 2, not {self.stopbits}"
            )
        check.flag("exclusive", self.exclusive)
        check.raise_any()

    @property
    def line(self) -> str:
        """The settings as people write them: "9600 8N1"."""
        return f"{self.baudrate} {self.bytesize}{self.parity}{self.stopbits:g}"


def is_absolute_path(path: object) -> bool:
    """An absolute path the kernel can take: no NUL byte, within PATH_MAX (4096 bytes)."""
    return (
        isinstance(path, str)
        and path.startswith("/")
        and "\0" not in path
        and len(path.encode("utf-8", "surrogatepass")) < _PATH_MAX
    )


_PATH_MAX: Final = 4096  # linux/limits.h, with the terminating NUL


# What to tell an operator when a port does not open, by errno.
_OPEN_ADVICE: Final[dict[int, str]] = {
    errno.ENOENT: "no such serial port {port}: check `shoe2mqtt ports`",
    errno.EACCES: "permission denied on {port}: add the daemon's user to the dialout group",
    errno.EPERM: "permission denied on {port}: add the daemon's user to the dialout group",
    errno.EBUSY: "{port} is in use by another program",
    errno.EAGAIN: "{port} is in use by another program (it holds the port's lock)",
    errno.ENXIO: "{port} exists but no device answers: unplugged or powered off?",
    errno.ENODEV: "{port} exists but no device answers: unplugged or powered off?",
    errno.EIO: "{port} exists but no device answers: unplugged or powered off?",
}


class SerialTransport(StreamTransport):
    # Closing gracefully would first drain our output into the port, which can hang on an
    # unplugged adapter; nothing we send is worth that.
    _abort_on_close: ClassVar[bool] = True

    def __init__(self, settings: SerialSettings) -> None:
        super().__init__(settings.port)
        self.settings = settings

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        settings = self.settings
        try:
            return await serial_asyncio_fast.open_serial_connection(
                url=settings.port,
                baudrate=settings.baudrate,
                bytesize=settings.bytesize,
                parity=settings.parity,
                stopbits=settings.stopbits,
                exclusive=settings.exclusive,
            )
        except (OSError, ValueError) as exc:  # SerialException is an OSError
            code = errno_of(exc)
            if code in _OPEN_ADVICE:
                message = _OPEN_ADVICE[code].format(port=settings.port)
            elif code is not None:
                message = f"cannot open {settings.port}: {describe_errno(code)}"
            else:  # pyserial refusing a setting this port or its driver cannot do
                message = f"cannot open {settings.port} at {settings.line}: {exc}"
            raise OpenFailed(message, endpoint=self.endpoint, errno=code) from exc

    def _lost_message(self, strerror: str) -> str:
        return f"lost serial port {self.endpoint}: {strerror}; unplugged, or the adapter reset?"
