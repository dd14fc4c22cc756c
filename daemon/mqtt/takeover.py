"""When the broker keeps replacing our connection: another client is using our client id.

MQTT 3.1.1 section 3.1.4-2: a broker that accepts a CONNECT whose client id is already
connected disconnects the older connection. Two daemons (or a daemon and a tool) given one
client id therefore take turns throwing each other off, each reconnecting at once, and each
broker reconnect used to reset the link's backoff: the issue saw 97 takeovers each in 6 s
and 390 `online`/`offline` flips, with nothing saying why.

mosquitto 2.0 closes the replaced connection without a word (no DISCONNECT, to an MQTT 5
client neither: tried), so the daemon sees only a connection lost, as in a broker restart.
The pattern tells them apart: a replaced connection was accepted, lost soon after
(unproven), closed by the broker (not our timeout), and the very next attempt is accepted
again; a broker that restarts refuses that attempt. `REPLACED_IN_A_ROW` such losses in a row
are reported (`ClientIdInUse`), and again each time the count doubles. A broker that says
so (MQTT 5 reason 0x8E, "Session taken over") is believed at once.

The link's backoff follows the same judgement: a connection resets it only once it has
proven itself, by staying up `proven_after` seconds (twice the longest delay, so a
connection that merely outlasted the other client's longest delay does not count); until
then every loss lengthens the next delay up to the maximum. Two daemons on one client id
thus settle at one takeover each per maximum delay, instead of flapping.

Sans-I/O: times come from the caller's clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import aiomqtt
from paho.mqtt.reasoncodes import ReasonCode

REPLACED_IN_A_ROW: Final = 3
# How paho 2.2 reports a connection the broker closed (its MQTT_ERR_CONN_LOST), and what a
# broker that explains itself sends (MQTT 5 section 3.14.2.1, reason code 0x8E).
_CLOSED_BY_BROKER: Final = "Unspecified error"
_TAKEN_OVER: Final = "Session taken over"


@dataclass(frozen=True, slots=True)
class ClientIdInUse:
    """The broker replaced our connection `replaced` times in a row over `seconds`."""

    client_id: str
    replaced: int
    seconds: float
    certain: bool  # the broker said so

    def message(self) -> str:
        return (
            f"another client is using client id {self.client_id!r}: the broker replaced this "
            f"daemon's connection {self.replaced} times in {self.seconds:.0f} s, and both lose "
            "their link in turn; give each daemon its own [mqtt] node (or client_id)"
        )


@dataclass(frozen=True, slots=True)
class Loss:
    """What a lost connection means: whether it had proven itself (reset the backoff), and
    the takeover to report now, if any."""

    proven: bool
    in_use: ClientIdInUse | None = None


class Connections:
    """The recent history of the link's connections, judged as each one ends."""

    def __init__(self, client_id: str, *, proven_after: float) -> None:
        self.client_id = client_id
        self.proven_after = proven_after
        self._connected_at: float | None = None
        self._replaced = 0  # unproven connections closed by the broker, in a row
        self._first_replaced_at = 0.0
        self._reported = 0  # the streak's length when it was last reported

    def connected(self, now: float) -> None:
        """A connection was accepted and announced."""
        self._connected_at = now

    def ended(self, now: float, error: BaseException) -> Loss:
        """A connection attempt or connection ended with `error`."""
        connected_at, self._connected_at = self._connected_at, None
        if connected_at is None:  # refused or unreachable: a broker that is away, not a twin
            self._replaced = 0
            return Loss(proven=False)
        if now - connected_at >= self.proven_after:
            self._replaced = 0
            return Loss(proven=True)
        reason = _reason(error)
        if reason not in (_CLOSED_BY_BROKER, _TAKEN_OVER):
            self._replaced = 0
            return Loss(proven=False)
        if self._replaced == 0:
            self._first_replaced_at = connected_at
            self._reported = 0
        self._replaced += 1
        certain = reason == _TAKEN_OVER
        due = 2 * self._reported if self._reported else REPLACED_IN_A_ROW
        if self._replaced < due and not (certain and not self._reported):
            return Loss(proven=False)
        self._reported = self._replaced
        seconds = now - self._first_replaced_at
        return Loss(False, ClientIdInUse(self.client_id, self._replaced, seconds, certain))


def _reason(error: BaseException) -> str | None:
    """The broker's or paho's reason code name behind an aiomqtt error, if it carries one."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, aiomqtt.MqttCodeError):
            return current.rc.getName() if isinstance(current.rc, ReasonCode) else None
        current = current.__cause__
    return None
