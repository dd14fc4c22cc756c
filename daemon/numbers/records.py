"""A table's rounds as the numbers count them, folded from the lines of its round log.

Sans-I/O: `RoundFolder` is fed the lines of a table's round log as the archive writes them
(docs/events.md, format 2: `table` lines with the settings in force, `journal` lines with
each journaled event, and `published` lines with every message exactly as the pit received
it), one at a time, in order, and returns what they completed: a `RoundRecord` when a round
ends, a `ShoeRecord` when a shoe ends (the next shuffle). The archive's day files are such
lines as they are; a live journal's are made by the same replay (`daemon.numbers.sources`),
and the daemon feeds the messages a round's end caused to the same folder for the table's
live numbers. So an archived round and a live one are counted by the same code.

What a round record takes from where:

- its times, its number and whether it was voided: `round_opened` and `round_ended`;
- seats in play: the seats of its accepted wagers; hands: each player hand dealt a card
  (a split makes two); cards: every `card_dealt` of the round, the dealer's included;
- its settlements: the `settlement` messages (stake and won, in cents);
- floorperson calls and unreadable cards: its `floorperson_required` and `card_unreadable`
  notices; held: the table held cards for the dealer console at some moment of the round
  (a round snapshot with a `doubt`); reviewed: any settlement or snapshot flagged `review`;
- its dealer: who the table's journaled requests last named (`dealer_named`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rules.money import parse_amount

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from rules.money import Cents

QUEEN_OF_HEARTS_LINES = frozenset({"queen_of_hearts_pair", "queen_of_hearts_pair_dealer_blackjack"})
DEALER_COMMAND = "dealer"  # a request that names the dealer now at the table
DEALER_FIELD = "dealer"  # that request's field
SENDER_FIELD = "by"  # who sent any request: the console's logged-in dealer (docs/mqtt.md)


@dataclass(frozen=True, slots=True)
class Settled:
    """One settled wager, as the numbers need it."""

    wager: str
    seat: int
    stake: Cents
    won: Cents  # paid on top of the returned stake
    result: str  # win, lose, push, void
    outcome: str

    @property
    def house_win(self) -> Cents:
        """What the house kept: the stake lost, or minus what it paid."""
        if self.result == "lose":
            return self.stake
        if self.result == "win":
            return -self.won
        return 0


@dataclass(frozen=True, slots=True)
class TableSettings:
    """What a table posted while a round was dealt: enough to name its exact figures."""

    game: str
    decks: int
    deck_kind: str
    paytable: str | tuple[tuple[str, str], ...]  # a built-in's name, or the lines posted
    dealer_hits_soft_17: bool

    @classmethod
    def from_line(cls, line: Mapping[str, Any]) -> TableSettings:
        paytable = line.get("paytable")
        posted: str | tuple[tuple[str, str], ...] = (
            tuple(sorted(paytable.items())) if isinstance(paytable, dict) else str(paytable or "")
        )
        return cls(
            str(line["game"]),
            int(line.get("decks", 0)),
            str(line.get("deck_kind", "")),
            posted,
            bool(line.get("dealer_hits_soft_17", False)),
        )


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One ended round of one table."""

    table: str
    round_id: int
    started: datetime
    ended: datetime
    settings: TableSettings | None
    dealer: str | None = None
    voided: bool = False
    seats: int = 0
    hands: int = 0
    cards: int = 0
    settled: tuple[Settled, ...] = ()
    floorperson_calls: int = 0
    unreadable_cards: int = 0
    held: bool = False
    reviewed: bool = False

    @property
    def queen_of_hearts_pairs_paid(self) -> int:
        return sum(
            1 for s in self.settled if s.outcome in QUEEN_OF_HEARTS_LINES and s.result == "win"
        )


@dataclass(frozen=True, slots=True)
class ShoeRecord:
    """One shoe of one table: how far it was dealt at its cut card (or at its end)."""

    table: str
    started: datetime
    cards_at_cut: int  # cards out of the shoe, burns included, when the cut card came
    cut_card_seen: bool  # False: the shoe reports no cut card; counted to its end instead
    shoe_size: int  # cards in the full shoe

    @property
    def penetration(self) -> float:
        return self.cards_at_cut / self.shoe_size if self.shoe_size else 0.0


@dataclass(slots=True)
class _OpenRound:
    round_id: int
    started: datetime
    seats: set[int] = field(default_factory=set)
    hands: set[tuple[int, int]] = field(default_factory=set)
    cards: int = 0
    settled: list[Settled] = field(default_factory=list)
    floorperson_calls: int = 0
    unreadable_cards: int = 0
    held: bool = False
    reviewed: bool = False


@dataclass(slots=True)
class _OpenShoe:
    started: datetime
    cards: int = 0
    cut_at: int | None = None


def dealer_named(command: str, payload: Mapping[str, Any]) -> str | None:
    """The dealer a journaled request names: a `dealer` request's `dealer`, or the `by` a
    console writes into every request it sends (its logged-in dealer). None: no one."""
    name = payload.get(DEALER_FIELD if command == DEALER_COMMAND else SENDER_FIELD)
    return name.strip() if isinstance(name, str) and name.strip() else None


def _request_payload(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    import json

    try:
        payload = json.loads(str(body.get("payload", "")).encode("latin-1"))
    except ValueError:
        return str(body.get("command", "")), {}
    return str(body.get("command", "")), payload if isinstance(payload, dict) else {}


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)  # Python 3.11 reads the Z of UTC too


_CARDS_PER_DECK = {"standard": 52, "spanish": 48}


@dataclass(slots=True)
class RoundFolder:
    """One table's round-log lines in, its ended rounds and shoes out. `table` is the
    table's id; `dealer_of` names the dealer a journaled request names (`dealer_named`:
    the lead wires another source here if the console names it elsewhere)."""

    table: str
    dealer_of: Callable[[str, Mapping[str, Any]], str | None] = dealer_named
    settings: TableSettings | None = None
    dealer: str | None = None
    _round: _OpenRound | None = None
    _shoe: _OpenShoe | None = None

    def feed(self, line: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        kind = line.get("type")
        if kind == "table":
            self.settings = TableSettings.from_line(line)
        elif kind == "journal" and line.get("kind") == "request":
            command, payload = _request_payload(line.get("body") or {})
            named = self.dealer_of(command, payload)
            if named is not None:
                self.dealer = named
        elif kind == "published":
            message = line.get("message")
            if isinstance(message, dict):
                return self.message(message)
        return []

    def message(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        """One published message (the envelope's `type` says what it is). A round message of
        console contract 4 is what it carried, each with its envelope's time, then itself."""
        kind = message.get("type")
        done: list[RoundRecord | ShoeRecord] = []
        carried = message.get("events")
        if kind == "round_snapshot" and isinstance(carried, list):
            stamp = {"table": message.get("table"), "ts": message.get("ts")}
            for event in carried:
                if isinstance(event, dict):
                    done += self.message({**stamp, **event})
        handler = _HANDLERS.get(str(kind))
        return done + handler(self, message) if handler is not None else done

    # ------------------------------------------------------------ shoes
    def _shuffled(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        ended = self._end_shoe()
        self._shoe = _OpenShoe(parse_time(str(message["ts"])))
        return ended

    def _end_shoe(self) -> list[RoundRecord | ShoeRecord]:
        shoe, self._shoe = self._shoe, None
        if shoe is None or not shoe.cards:
            return []
        settings = self.settings
        size = (
            0 if settings is None else settings.decks * _CARDS_PER_DECK.get(settings.deck_kind, 52)
        )
        cut = shoe.cut_at if shoe.cut_at is not None else shoe.cards
        return [ShoeRecord(self.table, shoe.started, cut, shoe.cut_at is not None, size)]

    def _burned(self, _: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        if self._shoe is not None:
            self._shoe.cards += 1
        return []

    # ------------------------------------------------------------ rounds
    def _opened(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        self._round = _OpenRound(int(message["round"]), parse_time(str(message["ts"])))
        return []

    def _wager(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        if self._round is not None and message.get("seat") is not None:
            self._round.seats.add(int(message["seat"]))
        return []

    def _card(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        if self._shoe is not None:
            self._shoe.cards += 1
        opened = self._round
        if opened is not None:
            opened.cards += 1
            if message.get("to") == "player" and message.get("seat") is not None:
                opened.hands.add((int(message["seat"]), int(message.get("hand") or 1)))
        return []

    def _settlement(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        opened = self._round
        if opened is not None:
            opened.settled.append(
                Settled(
                    str(message["wager"]),
                    int(message["seat"]),
                    parse_amount(str(message["stake"])),
                    parse_amount(str(message["won"])),
                    str(message["result"]),
                    str(message["outcome"]),
                )
            )
            opened.seats.add(int(message["seat"]))
            opened.reviewed |= bool(message.get("review"))
        return []

    def _notice(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        kind = message.get("kind")
        if kind == "cut_card" and self._shoe is not None and self._shoe.cut_at is None:
            self._shoe.cut_at = self._shoe.cards
        opened = self._round
        if opened is not None:
            opened.floorperson_calls += kind == "floorperson_required"
            opened.unreadable_cards += kind == "card_unreadable"
        return []

    def _snapshot(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        opened = self._round
        if opened is not None:
            opened.held |= message.get("doubt") is not None
            opened.reviewed |= bool(message.get("review"))
        return []

    def _ended(self, message: Mapping[str, Any]) -> list[RoundRecord | ShoeRecord]:
        opened, self._round = self._round, None
        if opened is None or opened.round_id != message.get("round"):
            return []  # a round whose opening this log does not hold: not counted
        return [
            RoundRecord(
                self.table,
                opened.round_id,
                opened.started,
                parse_time(str(message["ts"])),
                self.settings,
                self.dealer,
                bool(message.get("voided")),
                len(opened.seats),
                len(opened.hands),
                opened.cards,
                tuple(opened.settled),
                opened.floorperson_calls,
                opened.unreadable_cards,
                opened.held,
                opened.reviewed,
            )
        ]

    def finish(self) -> list[RoundRecord | ShoeRecord]:
        """The end of the lines: a shoe still in use is counted as far as it was dealt
        only if its cut card came (its penetration is known); an open round is not."""
        shoe = self._shoe
        if shoe is not None and shoe.cut_at is not None:
            return self._end_shoe()
        return []


_HANDLERS: dict[str, Callable[[RoundFolder, Mapping[str, Any]], list[RoundRecord | ShoeRecord]]] = {
    "shoe_shuffled": RoundFolder._shuffled,  # noqa: SLF001 - the folder's own table
    "card_burned": RoundFolder._burned,  # noqa: SLF001
    "round_opened": RoundFolder._opened,  # noqa: SLF001
    "wager_accepted": RoundFolder._wager,  # noqa: SLF001
    "card_dealt": RoundFolder._card,  # noqa: SLF001
    "settlement": RoundFolder._settlement,  # noqa: SLF001
    "notice": RoundFolder._notice,  # noqa: SLF001
    "round_snapshot": RoundFolder._snapshot,  # noqa: SLF001
    "round_ended": RoundFolder._ended,  # noqa: SLF001
}
