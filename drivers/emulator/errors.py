"""The emulator's one error: a setting or a script it cannot act on, saying what to change."""

from __future__ import annotations

from drivers.errors import DriverError


class EmulatorError(DriverError, ValueError):
    """A setting, card script or request the emulated shoe cannot carry out."""

    def __init__(self, message: str, *, field: str, value: object) -> None:
        super().__init__(f"{field}={value!r}: {message}")
        self.field = field
        self.value = value
