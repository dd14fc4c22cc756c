"""The host's part of a shoe protocol on a driver's links, sans-I/O (as h11 holds a
protocol's state): no clock of its own (the time is an argument), no I/O (what to send is
returned), so the driver only moves bytes.

The codec's `HostLink` says what the host sends (its greeting, its acknowledgements, which
of its frames the shoe answers); the session keeps when to send it and what to hand up:

    session.opened(now)              a link opened: the greeting is due at once, if any
    bytes = session.due(now)         the greeting, then again every GREETING_REPEAT s unanswered
    session.sending(frame)           a frame the host writes: a command may await a reply
    events = session.replies(events) replies to no command sent on this link: counted, dropped
    session.admits(event)            nothing but the greeting's answer until it has come
    bytes = session.acknowledgement(seq)

Its state is one link's (reset by `opened`) and the running count of replies dropped; none
of it outlives the process. What the host has made durable of the shoe's numbering is the
receiver's (`drivers.receiver`), judged where the journal is written (decision D3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from drivers.events import CommandAccepted, CommandRejected

if TYPE_CHECKING:
    from drivers.codecs.base import HostLink
    from drivers.events import Event

GREETING_REPEAT: Final = 1.0  # seconds between greetings the device leaves unanswered


class HostSession:
    """The host's side of one driver's links to one shoe."""

    def __init__(self, host: HostLink) -> None:
        self._host = host
        self.answered = True  # the device answered this link's greeting (or none is sent)
        self.next_at: float | None = None  # when the greeting is due again, while unanswered
        self.greetings = 0  # greetings sent on this link
        self.unsolicited = 0  # replies to no command, dropped, since the session began
        self._replies_awaited = 0  # commands sent on this link and not yet answered

    def opened(self, now: float) -> None:
        """A link opened at `now`: the greeting is due at once, if the protocol greets. An
        answer to a command sent on another link never comes."""
        self._replies_awaited = 0
        self.answered, self.greetings = not self._host.greets, 0
        self.next_at = None if self.answered else now

    def due(self, now: float) -> bytes:
        """The greeting to send now, or nothing."""
        if self.next_at is None or now < self.next_at:
            return b""
        self.greetings += 1
        self.next_at = now + GREETING_REPEAT
        return self._host.greeting()

    def sending(self, frame: bytes) -> None:
        """The host is writing `frame`: if the shoe answers it, one reply is awaited."""
        if self._host.awaits_reply(frame):
            self._replies_awaited += 1

    def replies(self, events: list[Event]) -> list[Event]:
        """`events` less the replies (`CommandAccepted`, `CommandRejected`) that answer no
        command sent on this link: those are the line's noise, counted (`unsolicited`)."""
        return [event for event in events if self._solicited(event)]

    def _solicited(self, event: Event) -> bool:
        if not isinstance(event, CommandAccepted | CommandRejected):
            return True
        if self._replies_awaited:
            self._replies_awaited -= 1
            return True
        self.unsolicited += 1
        return False

    def admits(self, event: Event) -> bool:
        """Whether to take `event`: the greeting's answer, and everything after it."""
        if not self.answered and self._host.answers_greeting(event):
            self.answered, self.next_at = True, None
        return self.answered

    def acknowledgement(self, seq: int) -> bytes:
        """The frame that tells the device its frame `seq` is durable; empty where the
        protocol acknowledges nothing."""
        return self._host.acknowledgement(seq)
