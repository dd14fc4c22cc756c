"""A wager's outcomes with their exact probabilities and odds, and what follows from them.

Per unit wagered: a winning outcome returns the stake and pays its odds, a losing one
loses the stake. The expected return is `sum(p * odds) - P(lose)`; the house edge is its
negative. Odds are the posted ratio (`Odds.ratio`); the engine rounds a payout down to the
cent when odds do not divide a stake (`Odds.winnings`), which no built-in paytable does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.analysis.shoe import ShoeSpec
    from rules.money import Odds

_Line = TypeVar("_Line", bound=enum.Enum)  # a paytable line: BonusOutcome, TwentyPointOutcome

SIGNIFICANT_DIGITS = 15  # of every decimal rendering: the issue asks for at least 12


@dataclass(frozen=True, slots=True)
class Outcome:
    """One way the wager ends: `odds` paid when it wins, None when the stake is lost."""

    name: str  # the engine's settlement outcome (rules/twenty_point.py, double_attack.py)
    probability: Fraction
    odds: Odds | None
    label: str

    @property
    def wins(self) -> bool:
        return self.odds is not None

    @property
    def return_per_unit(self) -> Fraction:
        """This outcome's share of the expected return: its odds won, or the stake lost."""
        return self.probability * (self.odds.ratio if self.odds is not None else -1)


@dataclass(frozen=True, slots=True)
class WagerAnalysis:
    """Every outcome of one wager on one shoe under one paytable, best line first."""

    wager: str
    citation: str
    shoe: ShoeSpec
    paytable_name: str
    outcomes: tuple[Outcome, ...]
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def of(
        cls,
        wager: str,
        citation: str,
        shoe: ShoeSpec,
        paytable_name: str,
        probabilities: Mapping[str, Fraction],
        paytable: Mapping[_Line, Odds],
        labels: Mapping[str, str],
        notes: tuple[str, ...] = (),
    ) -> WagerAnalysis:
        """The analysis of `paytable` (keyed by its lines) given each outcome's probability."""
        lines = {str(line.value): odds for line, odds in paytable.items()}
        return cls(
            wager,
            citation,
            shoe,
            paytable_name,
            build_outcomes(probabilities, lines, labels),
            notes,
        )

    @property
    def total_probability(self) -> Fraction:
        return sum((o.probability for o in self.outcomes), Fraction(0))

    @property
    def hit_frequency(self) -> Fraction:
        return sum((o.probability for o in self.outcomes if o.wins), Fraction(0))

    @property
    def expected_return(self) -> Fraction:
        return sum((o.return_per_unit for o in self.outcomes), Fraction(0))

    @property
    def house_edge(self) -> Fraction:
        return -self.expected_return

    def probability(self, name: str) -> Fraction:
        return next(o.probability for o in self.outcomes if o.name == name)

    def to_mapping(self) -> dict[str, Any]:
        return {
            "wager": self.wager,
            "citation": self.citation,
            "decks": self.shoe.decks,
            "deck_kind": self.shoe.deck_kind.value,
            "paytable": self.paytable_name,
            "outcomes": [
                {
                    "outcome": o.name,
                    "label": o.label,
                    "odds": None if o.odds is None else str(o.odds),
                    "probability": exact_and_decimal(o.probability),
                    "return": exact_and_decimal(o.return_per_unit),
                }
                for o in self.outcomes
            ],
            "hit_frequency": exact_and_decimal(self.hit_frequency),
            "expected_return": exact_and_decimal(self.expected_return),
            "house_edge": exact_and_decimal(self.house_edge),
            "notes": list(self.notes),
        }


def build_outcomes(
    probabilities: Mapping[str, Fraction],
    paytable: Mapping[str, Odds],
    labels: Mapping[str, str],
) -> tuple[Outcome, ...]:
    """Outcomes in the order of `labels`; a name on the paytable wins, any other loses."""
    return tuple(
        Outcome(name, probabilities[name], paytable.get(name), label)
        for name, label in labels.items()
    )


def decimal_text(value: Fraction, digits: int = SIGNIFICANT_DIGITS) -> str:
    """`value` to `digits` significant digits in plain notation (fewer when it is exact)."""
    with localcontext() as context:
        context.prec = digits
        return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def exact_and_decimal(value: Fraction) -> dict[str, str]:
    """Both forms a machine may want: exact, and a decimal it can read without a fraction.

    Both are strings: a JSON number would be read back as a binary float and lose digits.
    """
    return {"exact": str(value), "decimal": decimal_text(value)}
