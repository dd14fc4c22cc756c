"""The 20 point bonus wager, 13:69F-2.24: what each hand wins, and in what order it is settled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rules.games import WagerKind
from rules.money import share_proportionally
from rules.outputs import Notice, NoticeKind, Phase
from rules.paytables import TwentyPointOutcome, classify_twenty

if TYPE_CHECKING:
    from rules.config import TableConfig
    from rules.outputs import Output, Settlement
    from rules.table import Round

KIND = WagerKind.TWENTY_POINT_BONUS
NO_TWENTY = "no_20"


def _bettors_highest_first(round_: Round) -> list[int]:
    # 2.24(d): "starting with the player farthest to (the dealer's) right and continuing
    # counterclockwise" is the highest seat first (docs/procedures.md, "Words").
    return sorted(
        (n for n, seat in round_.seats.items() if KIND in seat.wagers and KIND not in seat.settled),
        reverse=True,
    )


def upcard_could_make_blackjack(round_: Round) -> bool:
    upcard = round_.upcard
    return upcard is not None and upcard.points in (1, 10)


def settle_after_initial_deal(round_: Round, config: TableConfig) -> list[Output]:
    """2.24(d): every 20 point bonus wager, before any further card, but the (e) pairs.

    A queen-of-hearts pair facing a ten or ace upcard is put aside for 2.24(e) with a
    floorperson notice; every other wager is settled here, highest seat first.
    """
    out: list[Output] = []
    defer = upcard_could_make_blackjack(round_)
    for number in _bettors_highest_first(round_):
        seat = round_.seats[number]
        line = classify_twenty(seat.hands[0].cards)
        if line is TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR and defer:
            round_.deferred_queens.append(number)
            out.append(
                Notice(
                    round_.round_id,
                    NoticeKind.FLOORPERSON_REQUIRED,
                    number,
                    "queen of hearts pair against a ten or ace upcard: a floorperson must "
                    "attend its settlement after all other 20 point bonus wagers",
                    "13:69F-2.24(e)",
                )
            )
            continue
        out.append(_settle(round_, config, number, line, Phase.INITIAL_DEAL, "13:69F-2.24(d)"))
    return out


def settle_deferred_pairs(
    round_: Round, config: TableConfig, *, dealer_blackjack: bool, phase: Phase, citation: str
) -> list[Output]:
    """2.24(e): the put-aside queen-of-hearts pairs, highest seat first, a floorperson present.

    With dealer blackjack they win the top line, all such winners of the round sharing the
    2.24(h) aggregate limit in proportion to their wagers when it would be exceeded.
    """
    seats = sorted(round_.deferred_queens, reverse=True)
    round_.deferred_queens.clear()
    if not seats:
        # Nothing deferred (and at double or triple attack no 20 point paytable to read).
        return []
    if not dealer_blackjack:
        return [
            _settle(
                round_,
                config,
                n,
                TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR,
                phase,
                citation,
                floorperson=True,
            )
            for n in seats
        ]
    line = TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK
    odds = config.paytable[line]
    stakes = [round_.seats[n].wagers[KIND] for n in seats]
    full = [odds.winnings(stake) for stake in stakes]
    limit = config.queen_of_hearts_aggregate_limit
    limited = limit is not None and sum(full) > limit
    paid = share_proportionally(limit, stakes) if limited and limit is not None else full
    out: list[Output] = []
    for number, stake, won in zip(seats, stakes, paid, strict=True):
        round_.seats[number].settled.add(KIND)
        out.append(
            round_.settle(
                number,
                KIND,
                stake,
                outcome=line.value,
                phase=phase,
                citation=f"{citation}; 13:69F-2.24(f), (h)"
                if limited
                else f"{citation}; 13:69F-2.24(f)",
                odds=odds,
                won=won,
                floorperson=True,
                limited=limited,
            )
        )
    return out


def _settle(
    round_: Round,
    config: TableConfig,
    number: int,
    line: TwentyPointOutcome | None,
    phase: Phase,
    citation: str,
    *,
    floorperson: bool = False,
) -> Settlement:
    seat = round_.seats[number]
    stake = seat.wagers[KIND]
    seat.settled.add(KIND)
    if line is None:
        return round_.settle(
            number, KIND, stake, outcome=NO_TWENTY, phase=phase, citation=citation,
            floorperson=floorperson,
        )  # fmt: skip
    return round_.settle(
        number,
        KIND,
        stake,
        outcome=line.value,
        phase=phase,
        citation=f"{citation}; 13:69F-2.24(f), (g)",
        odds=config.paytable[line],
        floorperson=floorperson,
    )
