"""The link's state and how it tells of each change: one log line, then the owner's callback.

Connecting is said once at start; a retry already said why and when, in one line, so its
next attempt is only a debug line.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from daemon.mqtt.settings import MqttSettings

# The link's lines, whichever of its modules writes them: a filter on `logger` keeps working.
_log = structlog.get_logger("daemon.mqtt.link")


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"


@dataclass(frozen=True, slots=True)
class LinkStateChange:
    """What the link just did; `reason` and `retry_in` (seconds) say why and what next.

    `retry_in` is None when the link stopped for good (a clean shutdown).
    """

    state: LinkState
    reason: str | None = None
    retry_in: float | None = None


OnStateChange = Callable[[LinkStateChange], None]


class LinkStateLog:
    """The link's current state; `change` logs the new one and tells the owner of it."""

    def __init__(self, settings: MqttSettings, on_state_change: OnStateChange | None) -> None:
        self.state = LinkState.DISCONNECTED
        self._settings = settings
        self._on_state_change = on_state_change
        self._retrying = False  # since the last successful connection

    def change(self, change: LinkStateChange) -> None:
        self.state = change.state
        settings = self._settings
        if change.state is LinkState.CONNECTING:
            (_log.debug if self._retrying else _log.info)(
                "mqtt.connecting",
                host=settings.host,
                port=settings.port,
                client_id=settings.client_id,
                tls=settings.tls is not None,
                username=settings.username,
            )
        elif change.state is LinkState.CONNECTED:
            self._retrying = False
            _log.info("mqtt.connected", host=settings.host, port=settings.port)
        elif change.retry_in is None:  # we stopped: nothing is wrong
            _log.info("mqtt.disconnected", reason=change.reason)
        else:
            self._retrying = True
            _log.warning(
                "mqtt.disconnected", reason=change.reason, retry_in=round(change.retry_in, 2)
            )
        if self._on_state_change is not None:
            self._on_state_change(change)
