"""The daemon's bridge info as it changes (daemon.wire.bridge_info says what it holds): announced
retained on every (re)connect by the link, and again whenever a reload changed it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from daemon.mqtt.presence import Presence

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from daemon.wire.bridge_info import BridgeInfo
    from daemon.wire.topics import Topics


class BridgeAnnouncer:
    """The bridge info the daemon runs with, and its changes for the link to announce."""

    def __init__(self, topics: Topics, node: str, info: BridgeInfo) -> None:
        self.topics = topics
        self.node = node
        self.info = info
        self._changed = asyncio.Event()

    def presence(self) -> Presence:
        # Kept on a clean stop: it says what ran here; the bridge state says whether it runs.
        return Presence(self.topics.bridge_info(self.node), self.info.payload(), None)

    def update(self, info: BridgeInfo) -> None:
        """A reload's info: announced again if it says something new."""
        if info != self.info:
            self.info = info
            self._changed.set()

    async def changes(self) -> AsyncIterator[Presence]:
        """The info to announce again, each time a reload changed it (pulled: never ends)."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            yield self.presence()
