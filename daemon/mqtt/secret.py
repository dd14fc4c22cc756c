"""A credential that never shows itself in a repr, a log line, or an exception message; and
the one reader of a password file, for the daemon's broker password and the display's.
"""

from __future__ import annotations

import hmac
import os
from typing import TYPE_CHECKING, Final, NoReturn

if TYPE_CHECKING:
    from pathlib import Path

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


class UnreadableSecret(Exception):
    """A password file that gives no password; `reason` says why, as a mistake names it
    beside its field ("no such file: '/etc/shoe2mqtt/mqtt-password'")."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def unreadable(path: Path, *, reader: str) -> str | None:
    """Why `reader` ("the daemon", "the display") cannot read the file at `path`, or None.

    Asked before reading, so that a file missing and a file of the wrong mode are told apart
    from one that could not be read for another reason."""
    if not path.is_file():
        return f"no such file: {str(path)!r}"
    if not os.access(path, os.R_OK):
        return f"{reader} may not read {str(path)!r}: check its mode"
    return None


def read_secret_file(path: Path, *, reader: str) -> Secret:
    """The password the file at `path` holds; raises `UnreadableSecret` when it holds none
    that `reader` can have (missing, unreadable, not UTF-8, or empty).

    Editors and `echo` end a file with a newline; it is never part of the password.
    """
    reason = unreadable(path, reader=reader)
    if reason is not None:
        raise UnreadableSecret(path, reason)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UnreadableSecret(path, f"cannot read {str(path)!r}: {detail}") from None
    password = text.removesuffix("\n").removesuffix("\r")
    if not password:
        raise UnreadableSecret(path, f"{str(path)!r} is empty")
    return Secret(password)
