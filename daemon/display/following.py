"""A round's view between two round states: the state, then the numbered events after it.

The daemon publishes the round snapshot as a state (docs/mqtt.md, "The round state"): the
latest only, at once at each change of phase, otherwise at most every 250 ms, `as_of` the
`seq` of the last numbered message it reflects. A display that showed states alone would
lag the events by that much, and worse, show a round's settlements beside a hole card still
face down: when the dealer stands on two cards the daemon publishes `hole_card_revealed`,
then the settlements, and only then the state. So the display starts from the state and
applies each numbered event after `as_of` to the round it shows (`fold`), as the rules
core did; the next state replaces the result.

Sans-I/O and forgiving: an event that does not fit the view it is applied to (a seat the
view does not have, a card of another round) changes nothing, and the next state says what
is so. Nothing here can show a card the daemon did not publish face up: cards come from
`card_dealt` (`null` when face down) and `hole_card_revealed` only.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Final

from rules.cards import Card
from rules.errors import CardParseError
from rules.hands import hand_value

if TYPE_CHECKING:
    from collections.abc import Callable


def opened(round_id: int) -> dict[str, Any]:
    """A round just opened, as the snapshot shows one: no wager, no card."""
    return {
        "id": round_id,
        "stage": "betting",
        "betting_open": True,
        "turn": None,
        "dealer": {"cards": [], "total": None, "hole_revealed": False},
        "seats": [],
    }


def fold(round_: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any] | None:
    """`round_` (the snapshot's `round`) after the numbered event `event`; a copy, the
    argument is left as it was. `round_opened` starts a new round's view."""
    kind = event.get("type")
    if kind == "round_opened":
        round_id = event.get("round")
        return opened(round_id) if isinstance(round_id, int) else round_
    if round_ is None or event.get("round") != round_.get("id"):
        return round_
    apply = _FOLDS.get(str(kind))
    if apply is None:
        return round_
    after = copy.deepcopy(round_)
    apply(after, event)
    return after


def _stage(round_: dict[str, Any], stage: str, before: set[str]) -> None:
    if round_.get("stage") in before:
        round_["stage"] = stage


def _seat(round_: dict[str, Any], number: object, *, create: bool = False) -> dict[str, Any] | None:
    seats: list[dict[str, Any]] = round_.setdefault("seats", [])
    for seat in seats:
        if seat.get("seat") == number:
            return seat
    if not create or not isinstance(number, int):
        return None
    seat = {"seat": number, "wagers": {}, "hands": []}
    seats.append(seat)
    seats.sort(key=lambda s: s["seat"] if isinstance(s.get("seat"), int) else 0)
    return seat


def _hand(round_: dict[str, Any], seat_number: object, number: object) -> dict[str, Any] | None:
    seat = _seat(round_, seat_number)
    if seat is None:
        return None
    return next((h for h in seat.get("hands") or [] if h.get("hand") == number), None)


def _wager(round_: dict[str, Any], event: dict[str, Any]) -> None:
    seat = _seat(round_, event.get("seat"), create=event["type"] == "wager_accepted")
    if seat is None:
        return
    wagers = seat.setdefault("wagers", {})
    if event["type"] == "wager_accepted":
        wagers[str(event.get("wager"))] = event.get("amount")
    else:
        wagers.pop(str(event.get("wager")), None)


def _card(round_: dict[str, Any], event: dict[str, Any]) -> None:
    _deal_begins(round_)
    card = event.get("card") if event.get("face_up") else None
    if event.get("to") == "dealer":
        dealer = round_.setdefault("dealer", {"cards": [], "total": None, "hole_revealed": False})
        dealer["cards"] = [*dealer.get("cards", []), card]
        dealer["total"] = _total([c for c in dealer["cards"] if isinstance(c, str)])[0]
        return
    seat = _seat(round_, event.get("seat"), create=True)
    if seat is None or not isinstance(card, str):
        return
    hands: list[dict[str, Any]] = seat.setdefault("hands", [])
    hand = next((h for h in hands if h.get("hand") == event.get("hand")), None)
    if hand is None:
        hand = _new_hand(event.get("hand"))
        hands.append(hand)
    hand["cards"] = [*hand.get("cards", []), card]
    hand["total"], hand["soft"] = _total(hand["cards"])
    hand["drawing"] = False


def _revealed(round_: dict[str, Any], event: dict[str, Any]) -> None:
    dealer = round_.setdefault("dealer", {"cards": [], "total": None, "hole_revealed": False})
    cards = list(dealer.get("cards") or [])
    card = event.get("card")
    if len(cards) >= 2 and cards[1] is None:
        cards[1] = card
    dealer.update(cards=cards, total=event.get("dealer_total"), hole_revealed=True)
    round_.update(stage="dealer", turn=None)


def _completed(round_: dict[str, Any], event: dict[str, Any]) -> None:
    if event.get("to") == "dealer":
        round_.setdefault("dealer", {})["total"] = event.get("total")
        return
    hand = _hand(round_, event.get("seat"), event.get("hand"))
    if hand is not None:
        hand.update(total=event.get("total"), ended=event.get("reason"))


def _closed(round_: dict[str, Any], _event: dict[str, Any]) -> None:
    round_["betting_open"] = False  # the deal begins with its first card, not here


def _deal_begins(round_: dict[str, Any]) -> None:
    """A card of the deal: each seat with wagers has its first hand from the first one."""
    _stage(round_, "dealing", {"betting"})
    for seat in round_.get("seats") or []:
        if not seat.get("hands"):
            seat["hands"] = [_new_hand(1)]


def _new_hand(number: object) -> dict[str, Any]:
    return {
        "hand": number,
        "cards": [],
        "total": 0,
        "soft": False,
        "doubled": False,
        "drawing": False,
        "ended": None,
    }


def _acted(round_: dict[str, Any], event: dict[str, Any]) -> None:
    hand = _hand(round_, event.get("seat"), event.get("hand"))
    if hand is None:
        return
    if event.get("action") == "double":
        hand["doubled"] = True
    elif event.get("action") == "split" and len(hand.get("cards") or []) == 2:
        _split(_seat(round_, event.get("seat")) or {}, hand)


def _split(seat: dict[str, Any], hand: dict[str, Any]) -> None:
    """The pair's second card starts a hand of its own, right after it (the rules number a
    seat's hands again from 1)."""
    hands: list[dict[str, Any]] = seat.get("hands") or []
    first, second = hand["cards"]
    second_hand = {**hand, "cards": [second]}
    hand["cards"] = [first]
    hands.insert(hands.index(hand) + 1, second_hand)
    for number, each in enumerate(hands, start=1):
        each["hand"] = number
        each["total"], each["soft"] = _total(each["cards"])


def _ended(round_: dict[str, Any], _event: dict[str, Any]) -> None:
    round_.update(stage="over", betting_open=False, turn=None)


def _total(cards: list[str]) -> tuple[int | None, bool]:
    """A hand's total and softness, as the rules count them; (None, False) for no card."""
    try:
        parsed = [Card.parse(c) for c in cards]
    except CardParseError:
        return None, False
    if not parsed:
        return None, False
    value = hand_value(parsed)
    return value.total, value.soft


_FOLDS: Final[dict[str, Callable[[dict[str, Any], dict[str, Any]], None]]] = {
    "wager_accepted": _wager,
    "wager_withdrawn": _wager,
    "betting_closed": _closed,
    "card_dealt": _card,
    "hole_card_revealed": _revealed,
    "player_acted": _acted,
    "hand_completed": _completed,
    "round_ended": _ended,
}
