"""A table's inbox: what the table hears first, and the requests it takes only after that.

Two lanes, one consumer (the table's task):
- the **table lane**, for what the shoe, its link and the daemon itself say (cards, link
  changes, new settings, the daemon's notices): served first, in arrival order, never
  refused. A card is never queued behind a console's requests (issue 14);
- the **request lane**, for dealer consoles' requests: bounded, served in arrival order
  whenever the table lane is empty. `offer` refuses a request at once when the lane is full,
  so a flood never grows memory and never makes its sender (the MQTT link) wait.

Serving the table lane first means a request that arrives while a card waits is applied
after the card, as it would be at the table: the card has left the shoe.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

_Item = TypeVar("_Item")


class TableInbox(Generic[_Item]):
    """The two lanes of one table; used from the event loop's thread only."""

    def __init__(self, request_capacity: int) -> None:
        if request_capacity < 1:
            raise ValueError(f"request_capacity: at least 1, not {request_capacity}")
        self.request_capacity = request_capacity
        self._table: collections.deque[_Item] = collections.deque()
        self._requests: collections.deque[_Item] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def __len__(self) -> int:
        return len(self._table) + len(self._requests)

    @property
    def has_request_room(self) -> bool:
        return len(self._requests) < self.request_capacity

    def put_nowait(self, item: _Item) -> None:
        """Into the table lane: served before any request."""
        self._table.append(item)
        self._wake()

    async def put(self, item: _Item) -> None:
        """`put_nowait`, as a coroutine for callers that await (the shoe's driver)."""
        self.put_nowait(item)

    def offer(self, request: _Item) -> bool:
        """Into the request lane if it has room; False (and nothing queued) if it is full."""
        if len(self._requests) >= self.request_capacity:
            return False
        self._requests.append(request)
        self._wake()
        return True

    async def get(self) -> _Item:
        """The next item: the table lane's oldest, else the oldest request; waits for one."""
        while not self._table and not self._requests:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self.get_nowait()

    def get_nowait(self) -> _Item:
        """`get` without waiting: `asyncio.QueueEmpty` when both lanes are empty."""
        if self._table:
            return self._table.popleft()
        if self._requests:
            return self._requests.popleft()
        raise asyncio.QueueEmpty

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
