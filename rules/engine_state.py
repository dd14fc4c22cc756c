"""A table engine's state as plain data, and back: what a checkpoint of the table holds.

The daemon replays its journal through the engine to rebuild a table; a checkpoint lets it
start from a recent state instead of the first event ever journaled (docs/durability.md).
So the state is written as JSON-ready data (strings, integers, booleans, lists, objects)
with a version, and read back into an engine that behaves exactly as the one it was taken
from: the same outputs for the same events, in the same order.

What the engine is made of: its configuration (kept beside the state, not in it: the
table's settings travel on their own), the shoe (shuffles seen, what is left in it, burns
due), the seats barred until the next shuffle (13:69F-36.5(j)), the next round's number, and
the current or last round with every seat, hand, stake and settlement counter. Dictionaries
keep their order, because the order of wagers in a seat is the order a snapshot shows them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from rules.cards import Card
from rules.engine import TableEngine
from rules.errors import RulesError
from rules.games import WagerKind
from rules.outputs import Phase
from rules.table import Hand, HandEnd, Round, RoundStage, Seat

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.config import TableConfig

STATE_VERSION: Final = 1


class StateError(RulesError):
    """Engine state that cannot be read back: a version this code does not know, or a
    malformed field (the state was written by other code, or damaged)."""

    code = "invalid_state"


def engine_state(engine: TableEngine) -> dict[str, Any]:
    """Everything the engine would need to go on exactly where it is, as data."""
    remaining = engine.remaining
    return {
        "version": STATE_VERSION,
        "shoe": engine.shoe,
        "remaining": None if remaining is None else {str(c): n for c, n in remaining.items()},
        "burns_due": engine.burns_due,
        "burned_unannounced": _cards(engine.burned_unannounced),
        "barred_seats": sorted(engine.barred_seats),
        "next_round_id": engine.next_round_id,
        "round": None if engine.round is None else _round(engine.round),
    }


def restore_engine(config: TableConfig, state: Mapping[str, Any]) -> TableEngine:
    """The engine of `config` in `state` (from `engine_state`); `StateError` if unreadable."""
    version = state.get("version")
    if version != STATE_VERSION:
        raise StateError(f"engine state version {version!r}; this code reads {STATE_VERSION}")
    try:
        engine = TableEngine(config, next_round_id=int(state["next_round_id"]))
        engine.shoe = int(state["shoe"])
        remaining = state["remaining"]
        engine.remaining = (
            None
            if remaining is None
            else Counter({Card.parse(c): int(n) for c, n in remaining.items()})
        )
        engine.burns_due = int(state["burns_due"])
        # Absent from states written before burns could precede their shuffle's announcement.
        engine.burned_unannounced = _read_cards(state.get("burned_unannounced", []))
        engine.barred_seats = {int(s) for s in state["barred_seats"]}
        engine.round = None if state["round"] is None else _read_round(state["round"])
    except (KeyError, TypeError, ValueError, AttributeError, RulesError) as exc:
        raise StateError(f"engine state: {type(exc).__name__}: {exc}") from None
    return engine


def copy_engine(engine: TableEngine) -> TableEngine:
    """An engine that goes on exactly as `engine` would, sharing nothing it changes: to try
    events on and throw away. What `restore_engine(engine_state(engine))` makes, without the
    trip through text (the shoe's composition is the costly part of that trip)."""
    copy = TableEngine(engine.config, next_round_id=engine.next_round_id)
    copy.shoe = engine.shoe
    copy.remaining = None if engine.remaining is None else Counter(engine.remaining)
    copy.burns_due = engine.burns_due
    copy.burned_unannounced = list(engine.burned_unannounced)
    copy.barred_seats = set(engine.barred_seats)
    copy.round = None if engine.round is None else _read_round(_round(engine.round))
    return copy


def _cards(cards: list[Card]) -> list[str]:
    return [str(card) for card in cards]


def _read_cards(cards: list[str]) -> list[Card]:
    return [Card.parse(text) for text in cards]


def _stakes(stakes: dict[WagerKind, int]) -> dict[str, int]:
    return {kind.value: amount for kind, amount in stakes.items()}


def _read_stakes(stakes: Mapping[str, Any]) -> dict[WagerKind, int]:
    return {WagerKind(kind): int(amount) for kind, amount in stakes.items()}


def _round(round_: Round) -> dict[str, Any]:
    return {
        "id": round_.round_id,
        "seats": [_seat(seat) for seat in round_.seats.values()],
        "dealer": _cards(round_.dealer),
        "hole_revealed": round_.hole_revealed,
        "stage": round_.stage.value,
        "betting_open": round_.betting_open,
        "step": round_.step,
        "step_cursor": round_.step_cursor,
        "dealt_in": list(round_.dealt_in),
        "turn": None if round_.turn is None else list(round_.turn),
        "deferred_queens": list(round_.deferred_queens),
        "phase_counts": {phase.value: n for phase, n in round_.phase_counts.items()},
    }


def _read_round(data: Mapping[str, Any]) -> Round:
    seats = [_read_seat(seat) for seat in data["seats"]]
    turn = data["turn"]
    return Round(
        int(data["id"]),
        seats={seat.number: seat for seat in seats},
        dealer=_read_cards(data["dealer"]),
        hole_revealed=bool(data["hole_revealed"]),
        stage=RoundStage(data["stage"]),
        # A state written before betting was closed explicitly: open until the first card.
        betting_open=bool(data.get("betting_open", data["stage"] == RoundStage.BETTING.value)),
        step=int(data["step"]),
        step_cursor=int(data["step_cursor"]),
        dealt_in=tuple(int(n) for n in data["dealt_in"]),
        turn=None if turn is None else (int(turn[0]), int(turn[1])),
        deferred_queens=[int(n) for n in data["deferred_queens"]],
        phase_counts={Phase(phase): int(n) for phase, n in data["phase_counts"].items()},
    )


def _seat(seat: Seat) -> dict[str, Any]:
    return {
        "number": seat.number,
        "wagers": _stakes(seat.wagers),
        "hands": [_hand(hand) for hand in seat.hands],
        # A set: only membership is ever asked of it, so its order is not state.
        "settled": sorted(kind.value for kind in seat.settled),
    }


def _read_seat(data: Mapping[str, Any]) -> Seat:
    return Seat(
        int(data["number"]),
        wagers=_read_stakes(data["wagers"]),
        hands=[_read_hand(hand) for hand in data["hands"]],
        settled={WagerKind(kind) for kind in data["settled"]},
    )


def _hand(hand: Hand) -> dict[str, Any]:
    return {
        "number": hand.number,
        "cards": _cards(hand.cards),
        "stakes": _stakes(hand.stakes),
        "from_split": hand.from_split,
        "split_aces": hand.split_aces,
        "doubled": hand.doubled,
        "drawing": hand.drawing,
        "acted": hand.acted,
        "ended": None if hand.ended is None else hand.ended.value,
        "settled": hand.settled,
    }


def _read_hand(data: Mapping[str, Any]) -> Hand:
    ended = data["ended"]
    return Hand(
        int(data["number"]),
        cards=_read_cards(data["cards"]),
        stakes=_read_stakes(data["stakes"]),
        from_split=bool(data["from_split"]),
        split_aces=bool(data["split_aces"]),
        doubled=bool(data["doubled"]),
        drawing=bool(data.get("drawing", False)),
        acted=bool(data["acted"]),
        ended=None if ended is None else HandEnd(ended),
        settled=bool(data["settled"]),
    )
