"""The journal's rows as dataclasses: an event, a checkpoint, an ended round, a table's
standing, a message an older schema left undelivered (daemon/journal/database.py reads and
writes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from daemon.journal.chain import GENESIS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.journal.schema import EventKind


@dataclass(frozen=True, slots=True)
class JournalEvent:
    """One journaled event: the `n`-th of its table."""

    table_id: str
    n: int
    kind: EventKind
    body: dict[str, Any]
    at: str
    hash: str = ""
    rowid: int = 0


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A table's state after its event `n` (`TableRunner.checkpoint()`'s data)."""

    table_id: str
    n: int
    next_seq: int
    at: str
    open_round: bool
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """An ended round, as `journal list` shows it, and where its events are."""

    table_id: str
    round_id: int
    first_n: int
    last_n: int
    started: str
    ended: str
    settlements: int
    voided: bool
    review: tuple[str, ...]

    def to_mapping(self) -> dict[str, Any]:
        return {
            "table": self.table_id,
            "round": self.round_id,
            "first": self.first_n,
            "last": self.last_n,
            "started": self.started,
            "ended": self.ended,
            "settlements": self.settlements,
            "voided": self.voided,
            "review": list(self.review),
        }

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> RoundEntry:
        return cls(
            data["table"],
            data["round"],
            data["first"],
            data["last"],
            data["started"],
            data["ended"],
            data["settlements"],
            data["voided"],
            tuple(data["review"]),
        )


@dataclass(frozen=True, slots=True)
class TableRecord:
    """The `tables` row: where a table's journal stands."""

    table_id: str
    last_n: int = 0
    last_hash: str = GENESIS
    delivered_seq: int = 0
    archived_n: int = 0
    protocol: str | None = None
    legacy_n: int = 0
    legacy_next_seq: int = 1


@dataclass(frozen=True, slots=True)
class LegacyMessage:
    """A message schema 1 sealed and never delivered; it goes out as it is, once."""

    rowid: int
    table_id: str
    topic: str
    payload: bytes
    qos: Literal[0, 1, 2]
    retain: bool
    seq: int
