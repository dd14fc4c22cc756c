"""What a table posts, analysed: the wager its game settles, on its shoe, under its paytable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rules.analysis.dealer_totals import DealerAnalysis, analyse_dealer
from rules.analysis.optional_bonus import analyse_optional_bonus
from rules.analysis.shoe import ShoeSpec
from rules.analysis.twenty_point_bonus import analyse_twenty_point_bonus
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.analysis.outcomes import WagerAnalysis
    from rules.config import TableConfig
    from rules.money import Odds


def analyse(
    game: Game,
    shoe: ShoeSpec,
    *,
    paytable: Mapping[Any, Odds],
    paytable_name: str,
    hits_soft_17: bool,
) -> WagerAnalysis | DealerAnalysis:
    """The exact figures of the wager `game` settles.

    Blackjack: the 20 point bonus under `paytable`. Double Attack: the optional bonus.
    Triple Attack: the dealer's final-total distribution, which decides the attack wagers
    of every hand still standing (the paytable is 1 to 1, 36.5(g)).
    """
    if game is Game.BLACKJACK:
        return analyse_twenty_point_bonus(shoe, paytable, paytable_name)
    if game is Game.DOUBLE_ATTACK:
        return analyse_optional_bonus(shoe, paytable, paytable_name)
    return analyse_dealer(shoe, hits_soft_17=hits_soft_17)


def analyse_table(config: TableConfig) -> WagerAnalysis | DealerAnalysis:
    """`analyse` a configured table: its game, shoe, posted paytable and soft-17 rule.

    A blackjack table's paytable is analysed whether or not it offers the 20 point bonus
    today, so a casino can check a paytable before it posts it.
    """
    return analyse(
        config.game,
        ShoeSpec(config.decks, config.deck_kind),
        paytable=config.paytable,
        paytable_name=config.paytable_name,
        hits_soft_17=config.dealer_hits_soft_17,
    )
