"""A credential that never shows itself in a repr, a log line, or an exception message."""

from __future__ import annotations

import hmac
from typing import Final, NoReturn

_MASK: Final = "********"


class Secret:
    """Holds a password; only `reveal()` gives the text back, and only the link calls it.

    repr, str and format all print a mask, so a settings object can be logged, printed in a
    traceback, or shown by a debugger without leaking the broker password. Pickling is
    refused for the same reason: a pickle is a repr with fewer guards.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, format_spec: str) -> str:
        return format(_MASK, format_spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        # Constant time: comparing secrets must not leak how many characters matched.
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(Secret)  # all secrets share one bucket: a hash must not fingerprint one

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")
