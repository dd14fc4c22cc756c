"""A table's inbox: everything the table hears, in the order it arrived; bounded where it
can be flooded.

One consumer (the table's task) takes what the shoe, its link and the daemon itself say
(cards, link changes, new settings, the daemon's notices and timers) and what dealer
consoles ask, in arrival order: a request that arrives before a card is applied before it.
A card's place never depends on that order anyway (a card waits in the table's custody until
its place is declared: daemon.table.custody), but a new shoe or a void asked for before a card must
come before it, as it did at the table.

The one exception changes nothing at the table: a request that only reads (`status`) waits
behind everything else, so a console that polls, or a flood of polls, never holds a card back.

Two kinds of items are bounded, each by its own count, so a flood of one never grows memory
and never crowds out the other:

- what the shoe and its link say (`put`, `try_put`): at most `shoe_capacity` wait. `put`
  waits for room, so the shoe's driver stops reading and the bytes wait in the kernel (a
  shoe that keeps its frames loses nothing); `try_put` refuses at once instead, for a shoe
  that keeps nothing, whose driver must read on or lose bytes uncounted (daemon.parts.driver_inbox
  counts and tells of what it refuses);
- dealer consoles' requests (`offer`): refused at once when `request_capacity` wait, so a
  flood never makes its sender (the MQTT link) wait.

What the daemon says itself (`put_nowait`: its notices, timers, new settings) is never
refused and never waits, whatever waits already: the consumer queues its own timers, and
must never wait for itself. Each such item is bounded by its own source (a notice per
episode, a timer per deadline).
"""

from __future__ import annotations

import asyncio
import collections
import enum
from typing import Final, Generic, TypeVar

_Item = TypeVar("_Item")
# What a table's shoe may have waiting in its inbox, at most. A shoe deals about a card a
# second and the table takes an event in a few milliseconds (one commit): this many is a
# reference shoe's whole keeping (256 frames, handed over at once after an outage), and
# many minutes of an ENQ shoe's dealing, while the journal is slow.
SHOE_CAPACITY: Final = 256


class _Source(enum.Enum):
    DAEMON = enum.auto()
    SHOE = enum.auto()
    REQUEST = enum.auto()


class TableInbox(Generic[_Item]):
    """One table's items in arrival order; used from the event loop's thread only."""

    def __init__(self, request_capacity: int, shoe_capacity: int = SHOE_CAPACITY) -> None:
        for name, capacity in (("request", request_capacity), ("shoe", shoe_capacity)):
            if capacity < 1:
                raise ValueError(f"{name}_capacity: at least 1, not {capacity}")
        self.request_capacity = request_capacity
        self.shoe_capacity = shoe_capacity
        self._items: collections.deque[tuple[_Source, _Item]] = collections.deque()
        self._waiting = dict.fromkeys(_Source, 0)  # how many of each kind the items hold
        self._reads: collections.deque[_Item] = collections.deque()  # served after the rest
        self._waiter: asyncio.Future[None] | None = None  # the consumer, for an item
        self._room: asyncio.Future[None] | None = None  # the shoe's driver, for room

    def __len__(self) -> int:
        return len(self._items) + len(self._reads)

    @property
    def has_request_room(self) -> bool:
        return self._waiting[_Source.REQUEST] + len(self._reads) < self.request_capacity

    @property
    def has_shoe_room(self) -> bool:
        return self._waiting[_Source.SHOE] < self.shoe_capacity

    def put_nowait(self, item: _Item) -> None:
        """What the daemon says itself: never refused, never waits."""
        self._append(_Source.DAEMON, item)

    async def put(self, item: _Item) -> None:
        """What the shoe or its link says: queued once fewer than `shoe_capacity` wait."""
        while not self.has_shoe_room:
            self._room = asyncio.get_running_loop().create_future()
            try:
                await self._room
            finally:
                self._room = None
        self._append(_Source.SHOE, item)

    def try_put(self, item: _Item) -> bool:
        """`put` without waiting: False (and nothing queued) when there is no room."""
        if not self.has_shoe_room:
            return False
        self._append(_Source.SHOE, item)
        return True

    def offer(self, request: _Item, *, reads_only: bool = False) -> bool:
        """A request, if there is room for it; False (and nothing queued) if there is none.
        One that `reads_only` is served after everything else."""
        if not self.has_request_room:
            return False
        if reads_only:
            self._reads.append(request)
            _wake(self._waiter)
        else:
            self._append(_Source.REQUEST, request)
        return True

    async def get(self) -> _Item:
        """The oldest item; waits for one."""
        while not len(self):
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self.get_nowait()

    def get_requests_nowait(self, limit: int) -> list[_Item]:
        """The requests at the head of the inbox, up to `limit` (none if something else is
        first): what arrived together, to be journaled together."""
        taken: list[_Item] = []
        items = self._items
        while items and items[0][0] is _Source.REQUEST and len(taken) < limit:
            taken.append(items.popleft()[1])
            self._waiting[_Source.REQUEST] -= 1
        if not items:
            while self._reads and len(taken) < limit:
                taken.append(self._reads.popleft())
        return taken

    def get_nowait(self) -> _Item:
        """`get` without waiting: `asyncio.QueueEmpty` when nothing waits."""
        if self._items:
            source, item = self._items.popleft()
            self._waiting[source] -= 1
            if source is _Source.SHOE:
                _wake(self._room)
            return item
        if self._reads:
            return self._reads.popleft()
        raise asyncio.QueueEmpty

    def _append(self, source: _Source, item: _Item) -> None:
        self._items.append((source, item))
        self._waiting[source] += 1
        _wake(self._waiter)


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
