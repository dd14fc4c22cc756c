"""The exact figures a table's hold is held against: which wager, which distribution.

The wagers with an exact outcome distribution are the ones `shoe2mqtt analyze` works out
(docs/math.md): the 20 point bonus at blackjack and the optional bonus at Double Attack.
Triple Attack's attack wagers ride the players' play as a whole (a double doubles them, a
hand that busts loses them), so they have no exact figure: their hold is shown, without a
theoretical hold or a band.

The paytable is the one the table posted: by default the one journaled with its settings,
or one the report is told (`posted`), since a table configured to pay other odds than its
sign says shows its hold against its configuration's figures unless told what the sign says.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, TypeVar

from rules.analysis.band import UnitDistribution
from rules.analysis.optional_bonus import analyse_optional_bonus
from rules.analysis.shoe import ShoeSpec
from rules.analysis.twenty_point_bonus import analyse_twenty_point_bonus
from rules.cards import DeckKind
from rules.money import Odds
from rules.paytables import (
    OPTIONAL_BONUS_PAYTABLES,
    TWENTY_POINT_PAYTABLES,
    BonusOutcome,
    TwentyPointOutcome,
)

if TYPE_CHECKING:
    from daemon.numbers.records import TableSettings

# The wager each game's exact figures are for, and whether a round is its unit: every seat's
# optional bonus rides the same dealer cards (rules.analysis.band).
EXACT_WAGERS = {"blackjack": "twenty_point_bonus", "double_attack": "optional_bonus"}
ROUND_IS_UNIT = frozenset({"optional_bonus"})
_Line = TypeVar("_Line", TwentyPointOutcome, BonusOutcome)


def paytable_label(paytable: str | tuple[tuple[str, str], ...]) -> str:
    if isinstance(paytable, str):
        return paytable
    return "custom (" + ", ".join(f"{line} {odds}" for line, odds in paytable) + ")"


def unit_distribution(
    settings: TableSettings, wager: str, posted: str | None = None
) -> UnitDistribution | None:
    """The house's net per unit of `wager` at a table with `settings`, under the paytable
    `posted` (a built-in's name) or the one in the settings; None without exact figures."""
    if EXACT_WAGERS.get(settings.game) != wager or not settings.decks:
        return None
    return _distribution(
        settings.game,
        settings.decks,
        settings.deck_kind,
        posted if posted is not None else settings.paytable,
    )


@functools.cache
def _distribution(
    game: str, decks: int, deck_kind: str, paytable: str | tuple[tuple[str, str], ...]
) -> UnitDistribution | None:
    shoe = ShoeSpec(decks, DeckKind(deck_kind))
    name = f"{paytable_label(paytable)}, {decks} {deck_kind} decks"
    if game == "blackjack":
        twenty = _lines(paytable, TWENTY_POINT_PAYTABLES, TwentyPointOutcome)
        if twenty is None:
            return None
        return UnitDistribution.of(analyse_twenty_point_bonus(shoe, twenty, name), name)
    bonus = _lines(paytable, OPTIONAL_BONUS_PAYTABLES, BonusOutcome)
    if bonus is None:
        return None
    return UnitDistribution.of(analyse_optional_bonus(shoe, bonus, name), name)


def _lines(
    paytable: str | tuple[tuple[str, str], ...],
    builtin: dict[str, dict[_Line, Odds]],
    kind: type[_Line],
) -> dict[_Line, Odds] | None:
    if isinstance(paytable, str):
        return dict(builtin[paytable]) if paytable in builtin else None
    try:
        return {kind(line): Odds.parse(odds) for line, odds in paytable}
    except ValueError:
        return None
