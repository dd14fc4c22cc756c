"""One sleeper woken at once by whichever of several callbacks comes first.

The link's publisher sleeps until the broker acknowledges a publish or a message reaches
the outbox, whichever is first. An `asyncio.Event` for each, waited for together, costs a
task for each wait, `asyncio.wait`'s callbacks and two more turns of the event loop before
the publisher runs (profiled: the waiting cost more than a message's publish, and each turn
is one more that a card's messages wait for behind every other table's work). A `Bell` is
one future: `ring` (from a callback on the loop's thread) resolves it, and the sleeper runs
on the loop's next turn. A ring with nobody asleep is kept for the next sleep.
"""

from __future__ import annotations

import asyncio


class Bell:
    """`ring()` wakes `sleep()`; a ring before the sleep makes it return at once."""

    __slots__ = ("_rung", "_sleeper")

    def __init__(self) -> None:
        self._rung = False
        self._sleeper: asyncio.Future[None] | None = None

    def ring(self) -> None:
        self._rung = True
        sleeper = self._sleeper
        if sleeper is not None and not sleeper.done():
            sleeper.set_result(None)

    async def sleep(self, limit: float | None) -> bool:
        """Until rung (True), or `limit` seconds (False; None: no limit)."""
        if not self._rung:
            self._sleeper = sleeper = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(limit):
                    await sleeper
            except TimeoutError:
                return False
            finally:
                self._sleeper = None
        self._rung = False
        return True
