"""The dealer console, as a real one behaves (docs/mqtt.md, "Requests and responses").

It sends each tap as a request with a transaction and `seen` (the highest `seq` of the
table's messages it had received when it sent it), one at a time: a tap waits until the
request before it is answered, as docs/mqtt.md asks of a console (the dealer never goes on
past a request the daemon has not answered, so a request sent again never lands behind a
later one). It asks again, with the same transaction and what it has seen by then, when no
answer came within `RESEND_AFTER` (a request lost with a broker or a daemon that went away).
Of a refused decision, wager or "No more bets" it keeps the dealer's tap in mind when the
refusal says the table had not yet caught up with the felt (a card still on its way, a doubt
being resolved): the dealer taps it again once the console shows the hand in play, or the
wager window open, as the table sees it. It shows the dealer and the floorperson
the latest round snapshot: whether the table holds cards in doubt or waits for a card to be
entered.
"""

from __future__ import annotations

import collections
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.envelope import Outbound
    from daemon.testing.interleaving.wires import Broker, Clock

RESEND_AFTER: Final = 3.0  # seconds without an answer before the console asks again
MAX_TRIES: Final = 6  # sends of one request before the console gives up on it
# A refused tap is tapped again only when the table has caught up: these refusals say that
# it has not (the hand in play is another, or the deal has not reached the hands, or no
# round or window is open yet as the table sees it).
LAGGING: Final = (
    "is in play, not seat",
    "no player hand is in play",
    "no round is open",
    "no wager window is open",
    "no seat holds",
    "a hit is declared",  # the last hit's card is still on its way, or held
    "may be made, changed or withdrawn only",  # a wager window the table has not reached
    "not applied",  # crossed a card: refused, and a doubt for the floorperson first
)
_CLEAR: Final = (b'"doubt":null', b'"awaiting_card_entry":0')


@dataclass(slots=True)
class Request:
    """One request of the console, from its first sending to its answer."""

    transaction: str
    command: str
    body: dict[str, Any]
    round_id: int | None  # the round of the truth it belongs to
    tries: int = 0
    answer: dict[str, Any] | None = None
    on_answer: Callable[[dict[str, Any]], None] | None = None
    retap: bool = True  # a dealer's tap, tapped again when refused for a lagging table
    first_seen: int | None = None  # `seen` when it was first sent

    @property
    def refused(self) -> bool:
        return self.answer is not None and self.answer["status"] != "ok"


@dataclass(slots=True)
class Console:
    """One table's console: its requests, what it received, what it shows."""

    clock: Clock
    broker: Broker
    copies: Callable[[], int] = lambda: 1  # QoS 1: how often the broker delivers one request
    # What a request sent again says it had seen: what the console has seen by then (as
    # docs/mqtt.md has it), or what it had seen when it first sent it ("first").
    resend_seen: str = "current"
    seen: int = 0
    requests: dict[str, Request] = field(default_factory=dict)
    retaps: list[Request] = field(default_factory=list)
    trouble_since: float | None = None  # since when the snapshot shows a doubt or an entry
    rounds_ended: set[int] = field(default_factory=set)
    _snapshot: Outbound | None = None
    _view: dict[str, Any] | None = None
    _received: set[int] = field(default_factory=set)
    _waiting: collections.deque[Request] = field(default_factory=collections.deque)
    _outstanding: Request | None = None
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ---------------------------------------------------------------- what it sends
    def tap(
        self,
        command: str,
        body: dict[str, Any],
        round_id: int | None,
        *,
        on_answer: Callable[[dict[str, Any]], None] | None = None,
        retap: bool = True,
    ) -> Request:
        request = Request(f"c-{next(self._transactions)}", command, body, round_id)
        request.on_answer, request.retap = on_answer, retap
        self.requests[request.transaction] = request
        self._waiting.append(request)
        self._next()
        return request

    def _next(self) -> None:
        if self._outstanding is None and self._waiting:
            self._outstanding = self._waiting.popleft()
            self._send(self._outstanding)

    def _done(self, request: Request) -> None:
        if self._outstanding is request:
            self._outstanding = None
            self._next()

    def _send(self, request: Request) -> None:
        request.tries += 1
        if request.first_seen is None:
            request.first_seen = self.seen
        seen = request.first_seen if self.resend_seen == "first" else self.seen
        payload = {"transaction": request.transaction, "seen": seen, **request.body}
        self.broker.request(request.command, json.dumps(payload).encode(), copies=self.copies())
        self.clock.after(RESEND_AFTER, lambda: self._unanswered(request))

    def _unanswered(self, request: Request) -> None:
        if request.answer is not None:
            return
        if request.tries < MAX_TRIES:
            self._send(request)
        else:
            self._done(request)  # given up: the dealer goes on

    # ---------------------------------------------------------------- what it receives
    def receive(self, message: Outbound) -> None:
        seq = message.seq
        if seq in self._received:
            return  # a copy (QoS 1, or re-sent after a restart): dropped by its seq
        self._received.add(seq)
        self.seen = max(self.seen, seq)
        kind = message.topic.split("/", 2)[2]
        if kind == "round":
            self._snapshot_received(message)
        elif kind.startswith("response/"):
            self._answered(json.loads(message.payload))
        elif kind == "event/round_ended":
            self.rounds_ended.add(json.loads(message.payload)["round"])

    def _snapshot_received(self, message: Outbound) -> None:
        if self._snapshot is not None and self._snapshot.seq > message.seq:
            return
        self._snapshot, self._view = message, None
        troubled = not all(mark in message.payload for mark in _CLEAR)
        if not troubled:
            self.trouble_since = None
        elif self.trouble_since is None:
            self.trouble_since = self.clock.now
        if self.retaps:
            self._retap()

    def _answered(self, body: dict[str, Any]) -> None:
        request = self.requests.get(str(body.get("transaction")))
        if request is None or request.answer is not None:
            return  # a later copy's answer: the first one counts
        request.answer = body
        self._done(request)
        if request.refused and request.retap:
            message = body["error"]["message"]
            if any(text in message for text in LAGGING):
                self.retaps.append(request)
        if request.on_answer is not None:
            request.on_answer(body)

    # ---------------------------------------------------------------- what it shows
    def view(self) -> dict[str, Any] | None:
        """The latest round snapshot's body."""
        if self._view is None and self._snapshot is not None:
            self._view = json.loads(self._snapshot.payload)
        return self._view

    def round_over(self) -> bool:
        """No round open, as the latest snapshot shows the table."""
        view = self.view()
        round_ = None if view is None else view["round"]
        return round_ is None or round_["stage"] == "over"

    def _retap(self) -> None:
        """The dealer taps again what the table refused while it lagged, once it fits."""
        view = self.view()
        if view is None or view["doubt"] is not None or view["awaiting_card_entry"]:
            return
        for request in list(self.retaps):
            if fits(request.command, request.body, view["round"]):
                self.retaps.remove(request)
                self.tap(request.command, request.body, request.round_id)

    def forget_round(self, round_id: int) -> None:
        """A round voided or over: its refused taps are no longer to be tapped again."""
        self.retaps = [r for r in self.retaps if r.round_id is not None and r.round_id > round_id]


def fits(command: str, body: dict[str, Any], round_: dict[str, Any] | None) -> bool:
    """Whether the table, as its snapshot shows it, is where a refused tap belongs."""
    if round_ is None or round_["stage"] == "over":
        return False
    if command == "action":
        turn = round_["turn"]
        if turn is None or (turn["seat"], turn["hand"]) != (
            body["seat"],
            body.get("hand") or turn["hand"],
        ):
            return False
        seat = next(s for s in round_["seats"] if s["seat"] == turn["seat"])
        return not seat["hands"][turn["hand"] - 1]["drawing"]
    if command in ("close_betting", "wager"):
        return bool(round_["betting_open"])
    return False
