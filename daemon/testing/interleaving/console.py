"""The dealer console, as docs/mqtt.md asks one to behave (the dealer console's contract).

It sends each tap as a request with a transaction and `seen` (the highest `seq` of the
table's messages it had received when it sent it), one at a time: a tap waits until the
request before it is answered, so a request sent again never lands behind a later one. A
request left 3 s without an answer is sent again, with the same transaction and what the
console has seen by then; an `action` only after `status` shows it was not applied (its
hand is as it was when the console sent it), since an action twice is two. A request of the
floorperson's is never sent again by the console: the floorperson looks again instead.
While "No more bets" waits for its answer, the dealer deals no card (`awaiting_close`).

Of a refused decision, wager or "No more bets" it keeps the dealer's tap in mind when the
refusal says the table had not yet caught up with the felt (a card still on its way, a
doubt being resolved): the dealer taps it again (up to `RETAPS` times) once the console
shows the hand in play with the cards the decision needs, or the wager window open, as the
table sees it. It shows the dealer and the floorperson the
latest round snapshot: whether the table holds cards in doubt or waits for a card to be
entered.
"""

from __future__ import annotations

import collections
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.wire.round_message import unbundled_outbound

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.testing.interleaving.wires import Broker, Clock
    from daemon.wire.envelope import Outbound

RESEND_AFTER: Final = 3.0  # seconds without an answer before the console asks again
MAX_TRIES: Final = 6  # sends of one request before the console gives up on it
RETAPS: Final = 3  # times a refused tap is tapped again before the dealer gives it up
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
    "only two cards of the same value",  # a split before the hand's second card came
    "on its first two cards only",  # a double likewise
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
    resend: bool = True  # sent again without an answer (the floorperson's are not)
    before: int | None = None  # an action's round (the table's number) when first sent
    given_up: bool = False
    retapped: int = 0  # times the dealer tapped it again before this one
    waits: int = 0  # counts the waits for an answer: only the latest one counts
    first_seen: int | None = None  # `seen` when first sent: a shuffle keeps it (its moment)

    @property
    def refused(self) -> bool:
        return self.answer is not None and self.answer["status"] != "ok"


@dataclass(slots=True)
class Console:
    """One table's console: its requests, what it received, what it shows."""

    clock: Clock
    broker: Broker
    copies: Callable[[], int] = lambda: 1  # QoS 1: how often the broker delivers one request
    seen: int = 0
    requests: dict[str, Request] = field(default_factory=dict)
    retaps: list[Request] = field(default_factory=list)
    hits: dict[tuple[int | None, int, int], int] = field(default_factory=dict)
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
        """A request in the console's line; `retap` False: the floorperson's (never sent
        again, never tapped again)."""
        request = Request(f"c-{next(self._transactions)}", command, body, round_id)
        request.on_answer, request.retap, request.resend = on_answer, retap, retap
        self.requests[request.transaction] = request
        self._waiting.append(request)
        self._next()
        return request

    def awaiting_close(self, round_id: int) -> bool:
        """Whether the round's "No more bets" waits for its answer (the dealer deals no card
        meanwhile: the contract's rule 6)."""
        return any(
            r.command == "close_betting" and r.round_id == round_id and r.answer is None
            for r in (*self._waiting, self._outstanding)
            if r is not None and not r.given_up
        )

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
        if request.command == "action" and request.before is None:
            view = self.view()
            round_ = None if view is None else view["round"]
            request.before = None if round_ is None else round_["id"]
        if request.first_seen is None:
            request.first_seen = self.seen
        # A shuffle happened when the dealer tapped it: sent again, it says what the console
        # had seen then (docs/mqtt.md, the console contract, rule 5).
        seen = request.first_seen if request.command == "shuffle" else self.seen
        payload = {"transaction": request.transaction, "seen": seen, **request.body}
        self.broker.request(request.command, json.dumps(payload).encode(), copies=self.copies())
        self._wait_for_answer(request)

    def _wait_for_answer(self, request: Request) -> None:
        request.waits += 1
        timer = request.waits
        self.clock.after(RESEND_AFTER, lambda: self._unanswered(request, timer))

    def _unanswered(self, request: Request, timer: int) -> None:
        if request.answer is not None or timer != request.waits:
            return
        if not request.resend or request.tries >= MAX_TRIES:
            request.given_up = True
            self._done(request)  # the dealer goes on; the floorperson looks again
        elif request.command == "action":  # an action twice is two: was it applied?
            request.tries += 1
            self._ask_status(lambda body: self._applied_or_again(request, body))
            self._wait_for_answer(request)
        else:
            self._send(request)

    def _ask_status(self, then: Callable[[dict[str, Any]], None]) -> None:
        """`status`, beside the line of requests (the one waiting is the reason)."""
        status = Request(f"c-{next(self._transactions)}", "status", {}, None, retap=False)
        status.on_answer, status.resend = then, False
        self.requests[status.transaction] = status
        payload = {"transaction": status.transaction, "seen": self.seen}
        self.broker.request("status", json.dumps(payload).encode(), copies=self.copies())

    def _applied_or_again(self, request: Request, body: dict[str, Any]) -> None:
        if request.answer is not None or body["status"] != "ok":
            return
        view = body["data"]["round"]  # the round snapshot's body
        if applied(request, view, self.hits):
            request.answer = {"status": "ok", "data": {}, "applied": True}  # its answer was lost
            self._count_hit(request)
            self._done(request)
        else:
            self._send(request)

    def _count_hit(self, request: Request) -> None:
        """The hits the table took for each hand, as far as the console knows."""
        if request.command == "action" and request.body["action"] == "hit":
            key = (request.round_id, request.body["seat"], request.body.get("hand") or 1)
            self.hits[key] = self.hits.get(key, 0) + 1

    # ---------------------------------------------------------------- what it receives
    def receive(self, message: Outbound) -> None:
        seq = message.seq
        if seq == 0 and message.topic.endswith("/round"):  # the round state: no number
            self._snapshot_received(message)
            return
        if seq in self._received:
            return  # a copy (QoS 1, or re-sent after a restart): dropped by its seq
        self._received.add(seq)
        self.seen = max(self.seen, seq)
        # Under contract 4, what the round message carried, then its round as a state.
        for part in unbundled_outbound(message):
            if part.seq:
                self._numbered(part)
            else:
                self._snapshot_received(part)

    def _numbered(self, message: Outbound) -> None:
        kind = message.topic.split("/", 2)[2]
        if kind == "round":  # a numbered snapshot (console contract 2)
            self._snapshot_received(message)
        elif kind.startswith("response/"):
            self._answered(json.loads(message.payload))
        elif kind == "event/round_ended":
            self.rounds_ended.add(json.loads(message.payload)["round"])

    def _snapshot_received(self, message: Outbound) -> None:
        as_of = _as_of(message)
        if self._snapshot is not None and _as_of(self._snapshot) > as_of:
            return  # older than the one it shows (a retained state, after a broker restart)
        self.seen = max(self.seen, as_of)  # what it reflects, the console has seen
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
        if request is None or request.answer is not None or request.given_up:
            return  # a later copy's answer, or one given up: the first one counts
        request.answer = body
        self._done(request)
        if not request.refused:
            self._count_hit(request)
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
                if request.retapped < RETAPS:
                    again = self.tap(request.command, request.body, request.round_id)
                    again.retapped = request.retapped + 1

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
        hand = seat["hands"][turn["hand"] - 1]
        if body["action"] in ("split", "double") and len(hand["cards"]) != 2:
            return False  # the hand's second card has not come
        return not hand["drawing"]
    if command in ("close_betting", "wager"):
        return bool(round_["betting_open"])
    return False


def applied(
    request: Request, view: dict[str, Any], hits: dict[tuple[int | None, int, int], int]
) -> bool:
    """Whether a table whose round snapshot is `view` took the action `request` asks for, its
    answer lost: a hit when the hand shows one more than the console knew it had taken (a
    card beyond its first two, or a hit whose card is still to come); a double when the hand
    is doubled; a split when the seat has another hand; a stand or a surrender when the hand
    is no longer in play."""
    round_ = view["round"]
    if round_ is None or round_["id"] != request.before or round_["stage"] == "over":
        return True  # the round the action was for is over: nothing to send again
    body = request.body
    seat = next((s for s in round_["seats"] if s["seat"] == body["seat"]), None)
    number = body.get("hand") or 1
    if seat is None or len(seat["hands"]) < number:
        return False
    hand = seat["hands"][number - 1]
    turn = round_["turn"]
    in_play = turn is not None and (turn["seat"], turn["hand"]) == (body["seat"], number)
    action = body["action"]
    if action == "hit":
        taken = max(0, len(hand["cards"]) - 2) + int(bool(hand["drawing"]))
        return taken > hits.get((request.round_id, body["seat"], number), 0)
    if action == "double":
        return bool(hand["doubled"])
    if action == "split":
        return len(seat["hands"]) > number
    return not in_play


def _as_of(message: Outbound) -> int:
    """The last `seq` a round snapshot reflects: a state's `as_of`, a numbered one's `seq`."""
    if message.seq:
        return message.seq
    return int(json.loads(message.payload)["as_of"])
