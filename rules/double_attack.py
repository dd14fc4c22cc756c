"""The Double Attack optional bonus wager, 13:69F-26.6(d)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rules.games import WagerKind
from rules.outputs import Phase
from rules.paytables import classify_dealer_bust

if TYPE_CHECKING:
    from rules.config import TableConfig
    from rules.outputs import Settlement
    from rules.table import Round

KIND = WagerKind.OPTIONAL_BONUS


def bonus_up(round_: Round) -> bool:
    return any(KIND in s.wagers and KIND not in s.settled for s in round_.seats.values())


def _bettors_highest_first(round_: Round) -> list[int]:
    # 26.6(d)2: "starting with the player immediately to the dealer's right and proceeding
    # counterclockwise": the highest seat first. Losing wagers go in the same order.
    return sorted(
        (n for n, s in round_.seats.items() if KIND in s.wagers and KIND not in s.settled),
        reverse=True,
    )


def settle_on_two_cards(round_: Round) -> list[Settlement]:
    """26.6(d)1: the dealer's first two cards count 17 or more, so no three-card bust."""
    return [
        _settle(round_, n, "dealer_two_cards_17_or_more", None, Phase.DEALER_TWO_CARDS, config=None)
        for n in _bettors_highest_first(round_)
    ]


def settle_on_third_card(round_: Round, config: TableConfig) -> list[Settlement]:
    """26.6(d)1-3: right after the dealer's third card, before any other wager."""
    line = classify_dealer_bust(round_.dealer)
    outcome = "dealer_three_cards_21_or_less" if line is None else line.value
    return [
        _settle(round_, n, outcome, line, Phase.DEALER_THIRD_CARD, config)
        for n in _bettors_highest_first(round_)
    ]


def _settle(
    round_: Round,
    number: int,
    outcome: str,
    line: object,
    phase: Phase,
    config: TableConfig | None,
) -> Settlement:
    seat = round_.seats[number]
    stake = seat.wagers[KIND]
    seat.settled.add(KIND)
    odds = None if line is None or config is None else config.paytable[line]
    return round_.settle(
        number,
        KIND,
        stake,
        outcome=outcome,
        phase=phase,
        citation="13:69F-26.6(d)1" if odds is None else "13:69F-26.6(d)2, (d)3",
        odds=odds,
    )
