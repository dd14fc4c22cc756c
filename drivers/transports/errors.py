"""The transports' errors: a setting that cannot work, and a link that failed or went away.

Every error names the endpoint it is about and, when the kernel gave one, the errno, so the
daemon can log and publish it as data. Messages tell an operator what to check or change.
"""

from __future__ import annotations

from drivers.errors import DriverError


class SettingsError(DriverError, ValueError):
    """A transport or backoff setting that can never work; raised when the settings are built."""

    def __init__(self, message: str, *, field: str, value: object) -> None:
        super().__init__(f"{field}={value!r}: {message}")
        self.field = field
        self.value = value


class TransportError(DriverError, ConnectionError):
    """The byte stream to a shoe could not be opened, or stopped working."""

    def __init__(self, message: str, *, endpoint: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint = endpoint
        # Named like OSError's attribute on purpose: callers already know what it means.
        self.errno = errno

    def __str__(self) -> str:
        return self.message


class OpenFailed(TransportError):
    """Opening the link failed: the device, port or server is missing, busy or refused us."""


class LinkLost(TransportError):
    """An open link stopped working: unplugged, powered off, or the peer closed it."""


class NotConnected(TransportError):
    """A write was attempted while no link is open."""
