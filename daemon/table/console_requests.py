"""The dealer console's requests to a table (daemon.wire.requests parses them): each answered
once, with the caller's transaction id; a request delivered again is answered again, not
obeyed again; a refused one changes nothing (docs/mqtt.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from daemon.numbers.dealer import dealer_request
from daemon.table.custody_flow import CustodyFlow
from daemon.table.redelivery import Answered
from daemon.wire.requests import RequestError, no_fields, parse_request, refusal, response_body
from daemon.wire.topics import COMMANDS
from rules.cards import Card
from rules.engine_state import copy_engine
from rules.errors import CardParseError, EventError, MalformedEvent
from rules.events import CloseBetting, DealCard, PlaceWager, Shuffle, event_from_mapping

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound
    from daemon.wire.requests import Request
    from rules.events import TableEvent


_LAYOUT_FIELDS = frozenset({"seat", "kind", "amount"})  # each wager of a layout
# Requests that are rules events of the same name; the other commands are answered here.
_ENGINE_COMMANDS = frozenset({"wager", "withdraw", "close_betting", "action", "void"})


class _Crossed(RequestError):
    """A request refused because in its place it would have changed what was published."""

    def __init__(self, message: str, outputs: list[Outbound]) -> None:
        super().__init__("crossed_card", message)
        self.outputs = outputs


class ConsoleRequests(CustodyFlow):
    """The dealer console's requests, answered (`on_request`) or refused at the gate (`refuse`)."""

    def on_request(
        self, command: str, payload: bytes, *, outbox_full: bool = False
    ) -> list[Outbound]:
        """Answer a request. `outbox_full` is journaled with the request (the outbox is not
        table state), so a replay refuses exactly what was refused."""
        transaction: object = None
        key: bytes | None = None
        try:
            request = parse_request(payload)
            transaction = request.transaction
            if transaction is not None and command != "status":
                key = Answered.key(command, payload)
                earlier = self.answered.get(key)
                if earlier is not None:  # delivered again: answered again, not obeyed again
                    return [self._answer(command, transaction, {**earlier, "duplicate": True})]
            data, out = self._request(command, request, outbox_full=outbox_full)
        except RequestError as exc:
            self._told.rejected(self.table_id, "request", exc.code)
            self._log_info(
                "table.request_refused",
                table=self.table_id,
                round=self.round_id,
                command=command,
                code=exc.code,
                reason=exc.message,
            )
            # The pit sees refused wagers too, not only the console that placed them.
            notice = [self.notice(exc.code, exc.message)] if exc.code == "wager_rejected" else []
            crossed = exc.outputs if isinstance(exc, _Crossed) else []
            refused = refusal(exc)
            if key is not None:
                self.answered.keep(key, refused)
            return [*crossed, *notice, self._answer(command, transaction, refused)]
        answer = {"status": "ok", "data": data}
        if key is not None:
            self.answered.keep(key, answer)
        return [*out, self._answer(command, transaction, answer)]

    def refuse(self, command: str, transaction: object, code: str, message: str) -> list[Outbound]:
        """The response to a request refused before it reached the table (the request gate):
        it was not journaled and changes nothing."""
        self._log_info(
            "table.request_refused", table=self.table_id, round=self.round_id,
            command=command, code=code, reason=message,
        )  # fmt: skip
        body = response_body(command, transaction, self.node, refusal(RequestError(code, message)))
        return [self.envelopes.seal_unsequenced(self.topics.response(self.table_id, command), body)]

    def _request(  # noqa: PLR0911 - a dispatch, one return per command
        self, command: str, request: Request, *, outbox_full: bool
    ) -> tuple[dict[str, Any], list[Outbound]]:
        if command == "status":
            no_fields(request)
            return {"reader": self.reader.to_mapping(), "round": self._snapshot_body()}, []
        if command == "shuffle":
            no_fields(request)
            return {}, self._shuffle_asked(request.seen)
        if command == "card":
            return {}, self._manual_card(request)
        if command == "dealer":  # numbers: who deals from now on (daemon/numbers/dealer.py)
            return dealer_request(request), []
        if command == "resume":
            return self._resume(request)
        if command == "void" and not self.engine.round_open and self.custody.holding:
            dropped = self.custody.cards_held
            return {"dropped": dropped}, self._drop_held("voided before any round was open")
        opens = command == "wager" or (command == "close_betting" and "wagers" in request.fields)
        if opens and not self.engine.round_open and outbox_full:
            raise RequestError(
                "outbox_full",
                "the broker has been away too long: no new round until its messages are "
                "delivered (nothing is lost; they wait on disk)",
            )
        if command in _ENGINE_COMMANDS:
            events = _events(command, request.fields)
            out = self._engine_request(events, request.seen)
            if command == "void":  # the held cards belonged to the round just voided
                return {}, [*out, *self._drop_held("their round was voided")]
            return {}, [*out, *self._release()]
        raise RequestError(
            "unknown_command",
            f"unknown command {command!r}; commands: {', '.join(COMMANDS)}",
        )

    def _engine_request(self, events: list[TableEvent], seen: int | None) -> list[Outbound]:
        """The rules events the console asked for in one request; one that may have crossed
        a card on its way is tried where it may have been meant first (daemon.table.crossing).
        A layout's events are judged together before any is applied: all or none."""
        at = self.history.crossed(seen)
        if at < len(self.history.steps):
            placement = self.history.place(self.config, events, at)
            if placement.conflict:
                message = (
                    f"this request was sent before the console saw {placement.crossed} "
                    "card(s) the table had placed, and before them it would have changed "
                    "them"
                )
                doubt = self._doubt("crossed_request", message, always=True)
                raise _Crossed(message + ": it is not applied", doubt)
        if len(events) > 1:
            self._judge_together(events)
        out: list[Outbound] = []
        for event in events:
            out += self._apply_or_refuse(event, seen)
        return out

    def _judge_together(self, events: list[TableEvent]) -> None:
        """A layout tried on a copy of the table first, so that a wager refused half way
        leaves none of the others applied (a refused request changes nothing). With a round
        open and no window (a layout sent again after its answer was lost, its window closed
        by the first), the close is judged first: refused as `close_betting` alone is, not as
        a refused wager the pit would be told of."""
        trial = copy_engine(self.engine)
        round_ = trial.round
        shut = trial.round_open and round_ is not None and not round_.betting_open
        for index, event in enumerate(events[-1:] if shut else events):
            try:
                trial.apply(event)
            except EventError as exc:
                where = f"wagers[{index}]: " if isinstance(event, PlaceWager) else ""
                raise RequestError(exc.code, where + exc.message) from None

    def _shuffle_asked(self, seen: int | None) -> list[Outbound]:
        """A new shoe the console announces. Cards the table holds between rounds may have
        come before it (the old shoe's) or after it (the new shoe's burn and first cards: the
        console's word was late): they stay held, for the floorperson to set aside the old
        ones (`resume` with `discard`) and let the rest be burned and dealt. A shuffle asked
        for before the console saw the table come back from going unheard may have had its
        burn dealt while no one heard: the round's first card would be taken for it, so the
        cards are held until the dealer says (`resume` with `burned`)."""
        unheard = self.custody.unheard
        out = self._apply_or_refuse(Shuffle())
        if self.engine.burns_due and unheard is not None and (seen is None or seen < unheard):
            out += self._doubt(
                "unheard_shuffle",
                "the console asked for this shuffle before it had seen the table since it "
                "went unheard: its burn card may have been dealt while no one heard; resume "
                'with {"burned": 1} if it was',
                always=True,
            )
        elif self.custody.cards_held and self.custody.doubt is None:
            out += self._card_before_round()
        return [*out, self.snapshot()]

    def _resume(self, request: Request) -> tuple[dict[str, Any], list[Outbound]]:
        """The dealer confirms that no card went by unread (any that did were entered), and
        sets aside the first `discard` held cards if they belong to no round: the held cards
        are placed, in order, each where its declaration puts it; the round goes on, still
        flagged for review."""
        discard = request.fields.pop("discard", 0)
        burned = request.fields.pop("burned", 0)
        no_fields(request)
        if self.custody.doubt is None:
            raise RequestError("nothing_held", "no cards are held for a doubt: nothing to resume")
        due = self.engine.burns_due
        if isinstance(burned, bool) or not isinstance(burned, int) or not 0 <= burned <= due:
            raise RequestError(
                "malformed_request",
                f"burned: how many burn cards the dealer dealt while no one heard, from 0 to "
                f"the burns still due ({due})",
            )
        if not self.custody.discard(discard):
            raise RequestError(
                "malformed_request",
                f"discard: how many of the first held cards belong to no round, from 0 to "
                f"the cards held before any other held item ({self.custody.leading_cards})",
            )
        self.engine.burned_unheard(burned)  # gone to the rack unheard: not the round's cards
        self.custody.resolve()
        held = self.custody.cards_held
        out = self._release()
        return {"released": held - self.custody.cards_held}, [*out, self.snapshot()]

    def _manual_card(self, request: Request) -> list[Outbound]:
        fields = request.fields
        if set(fields) != {"card"} or not isinstance(fields["card"], str):
            raise RequestError("malformed_request", 'card: give exactly {"card": "QH"}')
        try:
            card = Card.parse(fields["card"])
        except CardParseError:
            # Not the parser's message: it quotes the text, and a mistyped hole card must not
            # reach the response topic, which displays read, nor the log.
            raise RequestError(
                "malformed_request", "card: not a card; give rank then suit, e.g. QH, 10S or TS"
            ) from None
        try:
            self.engine.check_card(card)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        # The dealer enters cards in the order they left the shoe: the unreadable ones held
        # before the doubt, then those that went by unheard, then (once resumed) the
        # unreadable ones after it. Each takes its place in custody and is placed from there.
        if not self.custody.enter(DealCard(card)):
            raise RequestError("no_unreadable_card", "no unreadable card is waiting to be entered")
        return [*self._release(), self.snapshot()]

    def _apply_or_refuse(self, event: TableEvent, seen: int | None = None) -> list[Outbound]:
        engine = self.engine
        before = self.history.opening(engine) if isinstance(event, PlaceWager) else None
        first_seq = self.envelopes.next_seq
        try:
            outputs = engine.apply(event)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        self.history.record(engine, before, event, outputs, from_shoe=False, first_seq=first_seq)
        self._record(event)
        out = self._publish(outputs)
        out += self.surveillance.applied(event, outputs, engine)  # surveillance hook
        if before is not None and engine.round_open:
            out += self._opened(seen)
        return out

    def _opened(self, seen: int | None) -> list[Outbound]:
        """A request opened a round. If the table went unheard since the last one (a shoe
        that keeps nothing), the dealer may have dealt meanwhile: only a console that had
        seen the table back (`seen`) before opening the round shows it did not."""
        unheard, self.custody.unheard = self.custody.unheard, None
        if unheard is None or (seen is not None and seen >= unheard):
            return []
        return self._doubt(
            "unheard_round",
            "this round was opened by a console that had not seen the table since it went "
            "unheard (its request was sent before, or says nothing of what it had seen): "
            "the dealer may have dealt cards no one heard",
            always=True,
        )


def _events(command: str, fields: dict[str, Any]) -> list[TableEvent]:
    """The rules events a request asks for: its own, or for a "No more bets" that carries
    the layout (`wagers`), each of the window's wagers and then the close (docs/mqtt.md)."""
    others = set(fields) - {"wagers"} if command == "close_betting" else set()
    if others:
        raise RequestError("malformed_request", f"{min(others)}: close_betting takes only wagers")
    if command != "close_betting" or "wagers" not in fields:
        try:
            return [event_from_mapping({"type": command, **fields})]
        except MalformedEvent as exc:
            raise RequestError("malformed_request", exc.message) from None
    layout = fields.pop("wagers")
    if not isinstance(layout, list) or not layout:
        raise RequestError(
            "malformed_request",
            'wagers: a list of the window\'s wagers, each {"seat", "kind", "amount"}; '
            "at least one, or leave wagers out",
        )
    wagers: list[TableEvent] = []
    named: set[tuple[int, str]] = set()
    for index, item in enumerate(layout):
        if not isinstance(item, dict):
            raise RequestError(
                "malformed_request", f'wagers[{index}]: an object {{"seat", "kind", "amount"}}'
            )
        if extra := set(item) - _LAYOUT_FIELDS:
            raise RequestError(
                "malformed_request",
                f"wagers[{index}]: {min(extra)}: not a field of a layout's wager; its fields: "
                "seat, kind, amount",
            )
        try:
            wager = event_from_mapping({"type": "wager", **item})
        except MalformedEvent as exc:
            raise RequestError("malformed_request", f"wagers[{index}]: {exc.message}") from None
        assert isinstance(wager, PlaceWager)
        if (wager.seat, wager.kind.value) in named:
            raise RequestError(
                "malformed_request",
                f"wagers[{index}]: seat {wager.seat} {wager.kind.value} is named twice; a "
                "layout names each wager once",
            )
        named.add((wager.seat, wager.kind.value))
        wagers.append(wager)
    return [*wagers, CloseBetting()]
