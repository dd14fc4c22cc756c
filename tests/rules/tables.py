"""Shared helpers for the rules tests: table configurations and terse event feeding.

    engine = make_engine("blackjack", hole_card_reader=False)
    feed(engine, [wager(1, "blackjack", "25"), wager(1, "twenty_point_bonus", "5")])
    out = feed(engine, initial_deal("blackjack", {1: "QH QH"}, upcard="KS", hole="7C"))
    [paid] = settlements(out)

Amounts are dollars as text (`"25"`, `"7.50"`), exactly as a table's configuration and the
event log write them; cards are card text (`"QH"`, `"10S"`, `"TS"`).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, TypeVar

from rules.cards import Card
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.events import DealCard, PlaceWager, PlayerAction, WithdrawWager
from rules.games import GAMES, Action, Game, Step, WagerKind
from rules.money import parse_amount
from rules.outputs import Notice, Settlement

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rules.events import TableEvent
    from rules.outputs import Output

_T = TypeVar("_T")

# A valid table of each game: everything a test does not name is one of these values.
BASE_MAPPINGS: dict[Game, dict[str, Any]] = {
    Game.BLACKJACK: {
        "id": "bj1",
        "game": "blackjack",
        "decks": 6,
        "seats": 7,
        "limits": {
            "blackjack": {"min": "10", "max": "1000"},
            "twenty_point_bonus": {"min": "5", "max": "100"},
        },
        "paytable": "A",
        "hole_card_reader": True,
    },
    Game.DOUBLE_ATTACK: {
        "id": "da1",
        "game": "double_attack",
        "decks": 8,
        "seats": 7,
        "limits": {
            "initial": {"min": "10", "max": "500"},
            "optional_bonus": {"min": "1", "max": "100"},
            "double_attack": {"min": "10", "max": "500"},
        },
    },
    Game.TRIPLE_ATTACK: {
        "id": "ta1",
        "game": "triple_attack",
        "decks": 8,
        "seats": 7,
        "limits": {
            "first_attack": {"min": "10", "max": "500"},
            "second_attack": {"min": "10", "max": "500"},
            "third_attack": {"min": "10", "max": "500"},
        },
    },
}


def config_mapping(game: Game | str = Game.BLACKJACK, /, **overrides: Any) -> dict[str, Any]:
    """A fresh copy of the valid base mapping of `game`, with `overrides` replacing keys.

    An override of `None` removes the key (to test a missing setting).
    """
    data = copy.deepcopy(BASE_MAPPINGS[Game(game)])
    for key, value in overrides.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def make_config(game: Game | str = Game.BLACKJACK, /, **overrides: Any) -> TableConfig:
    return TableConfig.from_mapping(config_mapping(game, **overrides))


def make_engine(game: Game | str = Game.BLACKJACK, /, **overrides: Any) -> TableEngine:
    return TableEngine(make_config(game, **overrides))


# ---------------------------------------------------------------------------- events
def card(text: str) -> Card:
    return Card.parse(text)


def cards(text: str) -> list[DealCard]:
    """`"QH 10S ts"` → one `DealCard` per blank-separated card, in order."""
    return [DealCard(Card.parse(token)) for token in text.split()]


def wager(seat: int, kind: WagerKind | str, amount: str | int) -> PlaceWager:
    return PlaceWager(seat, WagerKind(kind), parse_amount(amount))


def withdraw(seat: int, kind: WagerKind | str) -> WithdrawWager:
    return WithdrawWager(seat, WagerKind(kind))


def action(name: Action | str, seat: int, hand: int | None = None) -> PlayerAction:
    return PlayerAction(Action(name), seat, hand)


def initial_deal(
    game: Game | str, hands: Mapping[int, str], *, upcard: str, hole: str
) -> list[DealCard]:
    """The initial deal in the game's order: `hands` maps each seat dealt in to its two cards.

    Seats are dealt from seat 1 up (13:69F-2.6(e)), whatever order `hands` lists them in.
    """
    seats = sorted(hands)
    pairs = {seat: hands[seat].split() for seat in seats}
    bad = [seat for seat, pair in pairs.items() if len(pair) != 2]
    if bad:
        raise ValueError(f"seats {bad}: give exactly two cards per seat")
    texts: list[str] = []
    for step in GAMES[Game(game)].deal_order:
        if step is Step.PLAYERS_FIRST_CARD:
            texts.extend(pairs[seat][0] for seat in seats)
        elif step is Step.PLAYERS_SECOND_CARD:
            texts.extend(pairs[seat][1] for seat in seats)
        elif step is Step.DEALER_UPCARD:
            texts.append(upcard)
        else:
            texts.append(hole)
    return cards(" ".join(texts))


def feed(engine: TableEngine, events: Iterable[TableEvent]) -> list[Output]:
    """Apply `events` in order; every output, in order. An error propagates at once."""
    out: list[Output] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def play(engine: TableEngine, text: str) -> list[Output]:
    """Deal the cards of `text` (`"QH KD AS"`) one by one; every output, in order."""
    return feed(engine, cards(text))


# ---------------------------------------------------------------------------- outputs
def of_type(outputs: Iterable[object], kind: type[_T]) -> list[_T]:
    return [item for item in outputs if isinstance(item, kind)]


def settlements(
    outputs: Iterable[object], wager: WagerKind | str | None = None
) -> list[Settlement]:
    """The settlements among `outputs`, in order; only those of `wager` when given."""
    found = of_type(outputs, Settlement)
    if wager is None:
        return found
    kind = WagerKind(wager)
    return [item for item in found if item.wager is kind]


def notices(outputs: Iterable[object]) -> list[Notice]:
    return of_type(outputs, Notice)
