"""A table's inbox: everything the table hears, in the order it arrived; requests bounded.

One consumer (the table's task) takes what the shoe, its link and the daemon itself say
(cards, link changes, new settings, the daemon's notices and timers) and what dealer
consoles ask, in arrival order: a request that arrives before a card is applied before it.
A card's place never depends on that order anyway (a card waits in the table's custody until
its place is declared: daemon.custody), but a new shoe or a void asked for before a card must
come before it, as it did at the table.

The one exception changes nothing at the table: a request that only reads (`status`) waits
behind everything else, so a console that polls, or a flood of polls, never holds a card back.

Requests are bounded: `offer` refuses one at once when `request_capacity` requests wait
already, so a flood never grows memory and never makes its sender (the MQTT link) wait.
What the shoe and the daemon say is never refused.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

_Item = TypeVar("_Item")


class TableInbox(Generic[_Item]):
    """One table's items in arrival order; used from the event loop's thread only."""

    def __init__(self, request_capacity: int) -> None:
        if request_capacity < 1:
            raise ValueError(f"request_capacity: at least 1, not {request_capacity}")
        self.request_capacity = request_capacity
        self._items: collections.deque[tuple[bool, _Item]] = collections.deque()
        self._requests = 0  # how many of the items are requests
        self._reads: collections.deque[_Item] = collections.deque()  # served after the rest
        self._waiter: asyncio.Future[None] | None = None

    def __len__(self) -> int:
        return len(self._items) + len(self._reads)

    @property
    def has_request_room(self) -> bool:
        return self._requests + len(self._reads) < self.request_capacity

    def put_nowait(self, item: _Item) -> None:
        """What the shoe, its link or the daemon says: never refused."""
        self._items.append((False, item))
        self._wake()

    async def put(self, item: _Item) -> None:
        """`put_nowait`, as a coroutine for callers that await (the shoe's driver)."""
        self.put_nowait(item)

    def offer(self, request: _Item, *, reads_only: bool = False) -> bool:
        """A request, if there is room for it; False (and nothing queued) if there is none.
        One that `reads_only` is served after everything else."""
        if not self.has_request_room:
            return False
        if reads_only:
            self._reads.append(request)
        else:
            self._items.append((True, request))
            self._requests += 1
        self._wake()
        return True

    async def get(self) -> _Item:
        """The oldest item (a request that only reads once nothing else waits); waits for one."""
        while not self._items and not self._reads:
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
        while items and items[0][0] and len(taken) < limit:
            taken.append(items.popleft()[1])
            self._requests -= 1
        if not items:
            while self._reads and len(taken) < limit:
                taken.append(self._reads.popleft())
        return taken

    def get_nowait(self) -> _Item:
        """`get` without waiting: `asyncio.QueueEmpty` when nothing waits."""
        if self._items:
            is_request, item = self._items.popleft()
            self._requests -= is_request
            return item
        if self._reads:
            return self._reads.popleft()
        raise asyncio.QueueEmpty

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
