"""What a table service tells of what it did, as it happens: the daemon's metrics listen.

Told only of live work, never while the journal is replayed (it was told the first time),
and never of a card's value: a count, a kind, a code.
"""

from __future__ import annotations

from typing import Final, Protocol


class TableObserver(Protocol):
    def card_read(self, table: str, *, readable: bool) -> None:
        """The reader read a card out of the shoe (or saw one go by unread)."""

    def settled(self, table: str, result: str) -> None:
        """A wager was settled: win, lose, push or void."""

    def noticed(self, table: str, kind: str) -> None:
        """A notice went to the pit."""

    def rejected(self, table: str, source: str, code: str) -> None:
        """An event was refused and changed nothing: from a `request` or from the `shoe`."""


class _Unobserved:
    """Nobody listens: a table service on its own (tests, `journal show`, replays)."""

    def card_read(self, table: str, *, readable: bool) -> None:
        pass

    def settled(self, table: str, result: str) -> None:
        pass

    def noticed(self, table: str, kind: str) -> None:
        pass

    def rejected(self, table: str, source: str, code: str) -> None:
        pass


UNOBSERVED: Final[TableObserver] = _Unobserved()
