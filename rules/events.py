"""Table events: what the engine is fed, one at a time, and their plain-data form.

The plain-data form is the line format of a round log (docs/events.md): what the daemon
journals, what `shoe2mqtt replay` reads, and what an auditor replays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.cards import Card
from rules.errors import CardParseError, MalformedEvent
from rules.games import Action, WagerKind
from rules.money import AmountError, Cents, format_amount, parse_amount

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class Shuffle:
    """A new shoe: the cards were shuffled; the next `burn_cards` cards are burned."""


@dataclass(frozen=True, slots=True)
class PlaceWager:
    """Make or change a wager: `amount` is the wager's new total."""

    seat: int
    kind: WagerKind
    amount: Cents


@dataclass(frozen=True, slots=True)
class WithdrawWager:
    seat: int
    kind: WagerKind


@dataclass(frozen=True, slots=True)
class DealCard:
    """A card left the shoe. `burned` when the reader saw it go to the discard rack."""

    card: Card
    burned: bool = False


@dataclass(frozen=True, slots=True)
class PlayerAction:
    """A dealer-entered decision for the hand in play; `seat` (and `hand`) guard the turn."""

    action: Action
    seat: int
    hand: int | None = None


@dataclass(frozen=True, slots=True)
class CloseBetting:
    """The dealer calls "No more bets" (13:69F-2.24(d)): the wager window open now closes
    and the deal may go on. A round log without it (format 2 and older) closes each window
    at its first card, as the deal always did."""


@dataclass(frozen=True, slots=True)
class VoidRound:
    """The round is void (a misdeal): unsettled wagers are returned."""

    reason: str = ""


TableEvent = (
    Shuffle | PlaceWager | WithdrawWager | CloseBetting | DealCard | PlayerAction | VoidRound
)

EVENT_TYPES = ("shuffle", "wager", "withdraw", "close_betting", "card", "action", "void")


def event_to_mapping(event: TableEvent) -> dict[str, Any]:  # noqa: PLR0911 - one return per kind of event
    match event:
        case Shuffle():
            return {"type": "shuffle"}
        case PlaceWager(seat=seat, kind=kind, amount=amount):
            return {
                "type": "wager",
                "seat": seat,
                "kind": kind.value,
                "amount": format_amount(amount),
            }
        case WithdrawWager(seat=seat, kind=kind):
            return {"type": "withdraw", "seat": seat, "kind": kind.value}
        case CloseBetting():
            return {"type": "close_betting"}
        case DealCard(card=card, burned=burned):
            out: dict[str, Any] = {"type": "card", "card": str(card)}
            if burned:
                out["burned"] = True
            return out
        case PlayerAction(action=action, seat=seat, hand=hand):
            out = {"type": "action", "action": action.value, "seat": seat}
            if hand is not None:
                out["hand"] = hand
            return out
        case VoidRound(reason=reason):
            return {"type": "void", "reason": reason}


def event_from_mapping(data: Mapping[str, Any]) -> TableEvent:  # noqa: PLR0911 - one return per kind of event
    """Parse one event record; `MalformedEvent` names the field that is wrong."""
    reader = _Fields(data)
    kind = reader.choice("type", EVENT_TYPES)
    match kind:
        case "shuffle":
            reader.only("type")
            return Shuffle()
        case "wager":
            reader.only("type", "seat", "kind", "amount")
            return PlaceWager(reader.seat(), reader.wager_kind(), reader.amount())
        case "withdraw":
            reader.only("type", "seat", "kind")
            return WithdrawWager(reader.seat(), reader.wager_kind())
        case "close_betting":
            reader.only("type")
            return CloseBetting()
        case "card":
            reader.only("type", "card", "burned")
            return DealCard(reader.card(), burned=reader.flag("burned"))
        case "action":
            reader.only("type", "action", "seat", "hand")
            action = Action(reader.choice("action", tuple(a.value for a in Action)))
            hand = reader.positive("hand") if "hand" in data else None
            return PlayerAction(action, reader.seat(), hand)
        case _:
            reader.only("type", "reason")
            reason = data.get("reason", "")
            if not isinstance(reason, str):
                raise MalformedEvent("reason", "must be text")
            return VoidRound(reason)


class _Fields:
    def __init__(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data, dict):
            raise MalformedEvent("type", "an event is a JSON object with a 'type'")
        self.data = data

    def only(self, *allowed: str) -> None:
        extra = sorted(set(self.data) - set(allowed))
        if extra:
            raise MalformedEvent(extra[0], f"not a field of this event; fields: {list(allowed)}")

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.data.get(key)
        if value not in choices:
            raise MalformedEvent(key, f"must be one of {list(choices)}, not {value!r}")
        return str(value)

    def positive(self, key: str) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MalformedEvent(key, f"must be a whole number from 1, not {value!r}")
        return value

    def seat(self) -> int:
        return self.positive("seat")

    def wager_kind(self) -> WagerKind:
        return WagerKind(self.choice("kind", tuple(k.value for k in WagerKind)))

    def amount(self) -> Cents:
        value = self.data.get("amount")
        if not isinstance(value, str):
            raise MalformedEvent(
                "amount", f"must be a decimal string such as '25.00', not {value!r}"
            )
        try:
            cents = parse_amount(value)
        except AmountError as exc:
            raise MalformedEvent("amount", str(exc)) from None
        if cents <= 0:
            raise MalformedEvent("amount", "must be more than zero; withdraw a wager to remove it")
        return cents

    def card(self) -> Card:
        value = self.data.get("card")
        if not isinstance(value, str):
            raise MalformedEvent("card", f"must be card text such as 'QH' or '10S', not {value!r}")
        try:
            return Card.parse(value)
        except CardParseError as exc:
            raise MalformedEvent("card", exc.message) from None

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise MalformedEvent(key, "must be true or false")
        return value
