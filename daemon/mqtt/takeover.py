"""Why the link keeps losing its broker: another client took its client id, or the link drops.

MQTT 3.1.1 section 3.1.4-2: a broker that accepts a CONNECT whose client id is already
connected disconnects the older connection. mosquitto 2.0 does it without a word (no
DISCONNECT, to an MQTT 5 client neither: tried), so the replaced daemon sees only its
connection closed, exactly as when a proxy or a firewall cuts it: a pattern of losses cannot
tell the two apart (the old judgement called a link cut every second a client id in use).

The broker's session can. From its second connection on, the link keeps a persistent session
(clean session off; the process's first connection is clean, so nothing of an earlier run is
kept, and so is one after more than `RESUME_WITHIN` down) subscribed at QoS 1 to its own
`bridge/<node>/state`, the topic of its will:

- a link that drops: the broker notices the connection gone, publishes the will, and queues it
  in the session it keeps; the next connection finds the session present and its own will
  (`offline`, not retained) waiting: **dropped**;
- another client with a clean session (a display's user on the daemon's client id, a tool, an
  older daemon): the broker discards the daemon's session; the next connection finds it gone
  (CONNACK session present 0): **replaced**;
- another client resuming the session (a second daemon with this client id): mosquitto hands
  the session over without publishing the will (checked against 2.0.11); the next connection
  finds the session present and no will in it: **replaced**.

Only a loss between two accepted connections that both keep a session is judged; an attempt
refused in between (a broker restarting) makes the loss unknown, since
a broker restarted without persistence forgets sessions too. A broker that keeps our half of
a dead connection open (a network that loses only one direction) is replaced by our own
reconnect, which reads as replaced; it is rare, and a streak of three is what is reported.

`REPLACED_IN_A_ROW` replacements in a row are reported (`ClientIdInUse`), and again each time
the count doubles; `DROPPED_IN_A_ROW` drops without a stable connection between them likewise
(`LinkUnstable`). The backoff follows what a connection carried, not only how long it lasted:
one the broker let announce (CONNACK, SUBACK, a PUBACK for every presence and retained state)
and then either acknowledged a message of the outbox or kept for `healthy_after` seconds
resets it, unless the link is being replaced (a replacement never does: two daemons on one
client id settle at one takeover each per maximum delay instead of flapping).

Sans-I/O: times come from the caller's clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

import aiomqtt
from paho.mqtt.reasoncodes import ReasonCode

REPLACED_IN_A_ROW: Final = 3
DROPPED_IN_A_ROW: Final = 3
# A session is resumed only after a short outage: the broker queues the requests sent to the
# daemon meanwhile and hands them over on the next connection. After a longer one, the next
# connection starts clean and the broker drops them: their consoles, unanswered for so long,
# have asked again or moved on (docs/mqtt.md, "Requests and responses").
RESUME_WITHIN: Final = 10.0
# How paho 2.2 reports a connection closed from the other end (its MQTT_ERR_CONN_LOST: the
# socket read nothing, or was reset), and what a broker that explains itself sends to an MQTT 5
# client (section 3.14.2.1, 0x8E). Anything else (a keep-alive or a round trip unanswered) is
# this end giving up on the connection: a drop, whatever the session shows.
_CLOSED_AT_THE_OTHER_END: Final = frozenset({"Unspecified error", "Session taken over"})
_EVIDENCE: Final = {
    False: "the broker had discarded its session: a client with a clean session took it",
    True: "the broker handed its session over without its will: another client resumed it",
}


class Verdict(enum.Enum):
    DROPPED = "dropped"
    REPLACED = "replaced"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ClientIdInUse:
    """The broker replaced our connection `replaced` times in a row over `seconds`."""

    client_id: str
    replaced: int
    seconds: float
    evidence: str  # what the broker's session showed, the last time

    def message(self) -> str:
        return (
            f"another client is using client id {self.client_id!r}: the broker replaced this "
            f"daemon's connection {self.replaced} times in {self.seconds:.0f} s ({self.evidence}), "
            "and both lose their link in turn; give each daemon its own [mqtt] node (or "
            "client_id) and its own broker user"
        )


@dataclass(frozen=True, slots=True)
class LinkUnstable:
    """The link dropped `dropped` times in a row over `seconds`, none of it another client."""

    client_id: str
    dropped: int
    seconds: float

    def message(self) -> str:
        return (
            f"the connection to the broker dropped {self.dropped} times in {self.seconds:.0f} s; "
            "the broker saw each drop and kept this daemon's session, so no other client took "
            "its client id: look at the network between this PC and the broker (a proxy, a "
            "firewall, a cable); nothing is lost meanwhile"
        )


Report = ClientIdInUse | LinkUnstable


@dataclass(slots=True)
class _Connection:
    at: float
    persistent: bool
    expects_session: bool  # it resumes one the broker should have kept for it
    announced_at: float | None = None
    carried: int = 0  # outbox messages the broker acknowledged on it


@dataclass(slots=True)
class _Streak:
    """Losses of one verdict in a row: when the first began, how many, when last reported."""

    count: int = 0
    began: float = 0.0
    reported: int = 0

    def add(self, at: float, threshold: int) -> bool:
        """Count one more; True when it is due to be reported (threshold, then doubling)."""
        if self.count == 0:
            self.began, self.reported = at, 0
        self.count += 1
        if self.count < (2 * self.reported if self.reported else threshold):
            return False
        self.reported = self.count
        return True

    def clear(self) -> None:
        self.count = 0


class Connections:
    """The link's connections, judged as each one ends and as the next one settles."""

    def __init__(self, client_id: str, *, healthy_after: float, stable_after: float) -> None:
        """`healthy_after`: seconds an announced connection must last to reset the backoff
        when it carried nothing; `stable_after`: seconds up that end a streak of drops."""
        self.client_id = client_id
        self.healthy_after = healthy_after
        self.stable_after = stable_after
        self._current: _Connection | None = None
        self._accepted = False  # a connection of this process was accepted
        self._kept_session = False  # the last accepted connection kept a persistent session
        self._lost: tuple[float, bool] | None = None  # (when, closed by the broker) to judge
        self._refused_since = False  # an attempt failed since that loss
        self._replaced, self._dropped = _Streak(), _Streak()
        self._last = Verdict.UNKNOWN

    def resumes(self, now: float) -> bool:
        """Whether the connection attempted at `now` resumes the session: every one after the
        process's first accepted connection (which starts clean: nothing of an earlier run is
        kept), unless the link has been down longer than `RESUME_WITHIN`."""
        lost = self._lost
        return self._accepted and (lost is None or now - lost[0] <= RESUME_WITHIN)

    def connected(self, now: float, *, persistent: bool) -> None:
        """A connection was accepted (CONNACK)."""
        self._current = _Connection(now, persistent, persistent and self._kept_session)
        self._kept_session = persistent
        self._accepted = True

    def announced(self, now: float) -> None:
        """The broker acknowledged the connection's subscriptions and every announcement."""
        if self._current is not None:
            self._current.announced_at = now

    def carried(self) -> None:
        """The broker acknowledged a message of the outbox on this connection."""
        if self._current is not None:
            self._current.carried += 1

    def settled(self, now: float, *, session_present: bool, own_will: bool) -> Report | None:
        """Judge the loss before this connection, from what the broker's session showed;
        the report that is due, if any."""
        lost, self._lost = self._lost, None
        verdict, evidence = Verdict.UNKNOWN, ""
        assert self._current is not None, "settled() follows connected()"
        if lost is not None and self._current.expects_session and not self._refused_since:
            verdict, evidence = _judge(closed=lost[1], present=session_present, own_will=own_will)
        self._refused_since = False
        self._last = verdict
        if verdict is Verdict.REPLACED:
            self._dropped.clear()
            assert lost is not None
            if self._replaced.add(lost[0], REPLACED_IN_A_ROW):
                seconds = now - self._replaced.began
                return ClientIdInUse(self.client_id, self._replaced.count, seconds, evidence)
            return None
        self._replaced.clear()
        if verdict is Verdict.DROPPED:
            assert lost is not None
            if self._dropped.add(lost[0], DROPPED_IN_A_ROW):
                seconds = now - self._dropped.began
                return LinkUnstable(self.client_id, self._dropped.count, seconds)
        return None

    def ended(self, now: float, error: BaseException) -> bool:
        """A connection attempt or connection ended with `error`; True when it was healthy
        enough to reset the backoff."""
        current, self._current = self._current, None
        if current is None:  # refused or unreachable: a broker that is away, not a twin
            self._refused_since = self._refused_since or self._lost is not None
            return False
        self._lost = (now, _reason(error) in _CLOSED_AT_THE_OTHER_END)
        self._refused_since = False
        if now - current.at >= self.stable_after:
            self._dropped.clear()
        announced = current.announced_at
        if announced is None or self._last is Verdict.REPLACED:
            return False
        return current.carried > 0 or now - announced >= self.healthy_after


def _judge(*, closed: bool, present: bool, own_will: bool) -> tuple[Verdict, str]:
    """`closed`: at the other end; `present`, `own_will`: what the next connection found."""
    if not closed or (present and own_will):
        return Verdict.DROPPED, ""
    return Verdict.REPLACED, _EVIDENCE[present]


def _reason(error: BaseException) -> str | None:
    """The broker's or paho's reason code name behind an aiomqtt error, if it carries one."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, aiomqtt.MqttCodeError):
            return current.rc.getName() if isinstance(current.rc, ReasonCode) else None
        current = current.__cause__
    return None
