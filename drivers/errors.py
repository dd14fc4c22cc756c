"""The drivers layer's errors: one small tree, every error carrying the data that caused it."""

from __future__ import annotations


class DriverError(Exception):
    """Base of every error the drivers package raises on purpose."""


class EncodeError(DriverError, ValueError):
    """An encoder was asked to put something on the wire that the protocol cannot carry.

    Decoders never raise: bad bytes from a shoe are counted and skipped. Encoders do, because
    their input comes from our own code, and sending a frame the other side will drop would
    only move the bug somewhere harder to see.
    """

    def __init__(self, message: str, *, field: str, value: object) -> None:
        super().__init__(f"{message}: {field}={value!r}")
        self.field = field
        self.value = value
