"""Tamper evidence: every journaled event carries a hash chained to its table's event before.

`link_hash(prev, table, n, kind, at, body)` is SHA-256 over the previous event's hash and
this event's table, number, kind, time and body (its canonical JSON text). An event's hash so
depends on every event of its table before it: changing, removing, inserting or reordering a
row breaks the chain at that row, and `check_chain` names the first such row or archive line,
and what happened to it. The archive (daemon/journal/archive.py) carries the events it takes
out of the database with their numbers and hashes, so the chain runs on through it unbroken.

What it proves, and what not (docs/durability.md): anyone who edits the database without
recomputing every later hash is caught. Someone who recomputes the whole chain is not, unless
a hash is kept elsewhere: `journal verify` prints each table's head hash, and a site that
copies those (or the archive, whose manifest holds them) off the PC can hold the PC to them.
"""

from __future__ import annotations

import collections
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

GENESIS: Final = "0" * 64  # the "hash before" a table's first event
_LOOKAHEAD: Final = 256  # how far ahead a missing event is looked for, to call it reordered
# `json.dumps` with these arguments, made once: `dumps` makes an encoder at every call, and
# every event is encoded and hashed on a card's path (the same text, byte for byte).
_BODY: Final = json.JSONEncoder(separators=(",", ":"), sort_keys=True)
_FIELDS: Final = json.JSONEncoder(separators=(",", ":"))


def body_text(body: dict[str, Any]) -> str:
    """An event's body as the journal stores and hashes it: compact, keys sorted."""
    return _BODY.encode(body)


def link_hash(prev: str, table_id: str, n: int, kind: str, at: str, body: str) -> str:
    fields = _FIELDS.encode([table_id, n, kind, at, body])
    return hashlib.sha256(f"{prev}\n{fields}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainRecord:
    """One journaled event as stored, and where: a database row or an archive line."""

    where: str
    table_id: str
    n: int
    kind: str
    at: str
    body: str
    hash: str

    def follows(self, prev: str) -> bool:
        return link_hash(prev, self.table_id, self.n, self.kind, self.at, self.body) == self.hash


Damage = Literal["changed", "removed", "inserted", "reordered"]


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first place a table's chain does not hold, and what was done there."""

    table_id: str
    where: str
    damage: Damage
    detail: str

    def __str__(self) -> str:
        return f"{self.table_id}: {self.where}: {self.damage}: {self.detail}"


@dataclass(frozen=True, slots=True)
class ChainEnd:
    """Where a table's chain ended: its last event's number and hash (the head)."""

    n: int
    hash: str


def check_chain(
    table_id: str, records: Iterable[ChainRecord], *, head: ChainEnd | None = None
) -> ChainBreak | ChainEnd:
    """Walk a table's events in stored order from its first; the first break, or the end.

    `head`: where the journal says the chain ends; events missing after the last record
    are a removal too.
    """
    expected, prev = 1, GENESIS
    ahead: collections.deque[ChainRecord] = collections.deque()
    stream = iter(records)

    def take() -> ChainRecord | None:
        return ahead.popleft() if ahead else next(stream, None)

    def look(count: int) -> Iterator[ChainRecord]:
        while len(ahead) < count:
            more = next(stream, None)
            if more is None:
                break
            ahead.append(more)
        return iter(list(ahead)[:count])

    last_where = "the start"
    while (record := take()) is not None:
        if head is not None and record.n > head.n:
            return ChainBreak(
                table_id,
                record.where,
                "inserted",
                f"event {record.n} is past the journal's last event ({head.n})",
            )
        if record.n == expected and record.follows(prev):
            expected, prev, last_where = expected + 1, record.hash, record.where
            continue
        return _classify(table_id, record, expected, prev, look)
    if head is not None and head.n >= expected:
        span = _span(expected, head.n)
        return ChainBreak(table_id, last_where, "removed", f"{span} missing after it (the end)")
    if head is not None and head.hash != prev and head.n == expected - 1:
        return ChainBreak(
            table_id, last_where, "changed", "the journal's head hash does not match this event"
        )
    return ChainEnd(expected - 1, prev)


def _classify(
    table_id: str,
    record: ChainRecord,
    expected: int,
    prev: str,
    look: Callable[[int], Iterator[ChainRecord]],
) -> ChainBreak:
    if record.n < expected:
        return ChainBreak(
            table_id,
            record.where,
            "inserted",
            f"holds event {record.n} again, where event {expected} was due",
        )
    if record.n > expected:
        later = next((r for r in look(_LOOKAHEAD) if r.n == expected), None)
        if later is not None:
            return ChainBreak(
                table_id,
                record.where,
                "reordered",
                f"holds event {record.n} where event {expected} was due; "
                f"event {expected} comes later, at {later.where}",
            )
        return ChainBreak(
            table_id, record.where, "removed", f"{_span(expected, record.n - 1)} missing before it"
        )
    following = next(look(1), None)
    if following is not None and following.n == expected and following.follows(prev):
        return ChainBreak(
            table_id,
            record.where,
            "inserted",
            f"does not belong to the chain: the true event {expected} follows it",
        )
    return ChainBreak(
        table_id,
        record.where,
        "changed",
        f"event {expected} does not match its hash (its content, or the event before it, "
        "was changed)",
    )


def _span(first: int, last: int) -> str:
    return f"event {first}" if first == last else f"events {first}-{last}"
