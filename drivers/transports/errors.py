"""The transports' errors: a setting that cannot work, and a link that failed or went away.

Every error names the endpoint it is about and, when the kernel gave one, the errno, so the
daemon can log and publish it as data. Messages tell an operator what to check or change.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING

from drivers.errors import DriverError

if TYPE_CHECKING:
    from collections.abc import Container, Sequence


class SettingsError(DriverError, ValueError):
    """A transport or backoff setting that can never work; raised when the settings are built.

    `problems` holds every wrong setting of the object being built, this one first, so that
    a configuration checker names them all in one run.
    """

    def __init__(
        self, message: str, *, field: str, value: object, others: Sequence[SettingsError] = ()
    ) -> None:
        super().__init__(f"{field}: {message}")
        self.message = message
        self.field = field
        self.value = value
        self.problems: tuple[SettingsError, ...] = (self, *others)


class SettingsCheck:
    """What is wrong with one settings object, gathered field by field and raised at once."""

    def __init__(self) -> None:
        self._found: list[SettingsError] = []

    def refuse(self, field: str, value: object, message: str) -> None:
        self._found.append(SettingsError(message, field=field, value=value))

    def whole_number(
        self, field: str, value: object, *, allowed: Container[int], message: str
    ) -> None:
        """`value` must be an int (never a bool) in `allowed`; `message` says what is."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.refuse(field, value, f"must be a whole number, not {describe_value(value)}")
        elif value not in allowed:
            self.refuse(field, value, f"{message}, not {_number(value)}")

    def seconds(self, field: str, value: object, *, above: float, most: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.refuse(field, value, f"must be a number of seconds, not {describe_value(value)}")
        elif not (math.isfinite(value) and above < value <= most):
            self.refuse(
                field,
                value,
                f"must be a number of seconds above {above:g}, at most {most:g}, not {value!r}",
            )

    def flag(self, field: str, value: object) -> None:
        if not isinstance(value, bool):
            self.refuse(field, value, f"must be true or false, not {describe_value(value)}")

    def raise_any(self) -> None:
        if self._found:
            first, *others = self._found
            raise SettingsError(first.message, field=first.field, value=first.value, others=others)


def describe_value(value: object, *, show: bool = True) -> str:
    """A value as a mistake names it: its type, and the value itself when it is short.

    The same words as rules.config.describe_value, which words the tables' settings:
    drivers/ may not import rules/ nor rules/ drivers/, so each layer has its copy and
    tests/test_describe_value.py holds the two to one answer for every value.
    """
    kind = _kind(value)
    if not show or isinstance(value, list | tuple | dict):
        return kind
    return f"{kind} ({_shown(value)})"


def _kind(value: object) -> str:
    if isinstance(value, dt.date | dt.time):  # a datetime is a date too
        return "a date or time"
    return _KINDS.get(type(value), f"a {type(value).__name__}")


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and not -_SHOWN_DIGITS_LIMIT < value < _SHOWN_DIGITS_LIMIT:
        return "more than 15 digits"  # and str() refuses ints past 4,300 digits
    if isinstance(value, str):
        return repr(value if len(value) <= _SHOWN_TEXT else value[: _SHOWN_TEXT - 3] + "...")
    return str(value)


def _number(value: int) -> str:
    """A whole number of the right type but not allowed, as typed."""
    if -_SHOWN_DIGITS_LIMIT < value < _SHOWN_DIGITS_LIMIT:
        return str(value)
    return "a number of more than 15 digits"


_SHOWN_TEXT = 40  # a mistake quotes at most this much of a string it refuses
_SHOWN_DIGITS_LIMIT = 10**15
_KINDS: dict[type, str] = {
    bool: "a boolean",
    int: "a whole number",
    float: "a decimal number",
    str: "a string",
    list: "an array",
    tuple: "an array",
    dict: "a table",
}


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
