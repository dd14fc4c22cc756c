"""A simulation's tally beside the exact analysis of the same table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.analysis import dealer_totals
from rules.analysis.outcomes import WagerAnalysis
from rules.analysis.simulation import DEALER_STOPPED_SHORT
from rules.analysis.statistics import (
    LineComparison,
    ReturnEstimate,
    compare_lines,
    estimate_return,
)
from rules.analysis.tables import analyse_table

if TYPE_CHECKING:
    from rules.analysis.dealer_totals import DealerAnalysis
    from rules.analysis.simulation import Tally
    from rules.config import TableConfig


@dataclass(frozen=True, slots=True)
class SimulationComparison:
    config: TableConfig
    tally: Tally
    exact: WagerAnalysis | DealerAnalysis
    lines: tuple[LineComparison, ...]
    returns: tuple[ReturnEstimate, ...]

    @property
    def agrees(self) -> bool:
        return all(line.agrees() for line in self.lines) and all(
            estimate.agrees() for estimate in self.returns
        )

    @property
    def trial_kind(self) -> str:
        if isinstance(self.exact, WagerAnalysis):
            return "player" if self.exact.wager == "twenty_point_bonus" else "round"
        return "round in which the dealer finished"

    def to_mapping(self) -> dict[str, Any]:
        tally = self.tally
        return {
            "table": self.config.table_id,
            "game": self.config.game.value,
            "decks": self.config.decks,
            "deck_kind": self.config.deck_kind.value,
            "rounds": tally.rounds,
            "voided_rounds": tally.voided_rounds,
            "exact": self.exact.to_mapping(),
            "trial": self.trial_kind,
            "lines": [line.to_mapping() for line in self.lines],
            "returns": [estimate.to_mapping() for estimate in self.returns],
            "settlements": [
                {"wager": wager, "outcome": outcome, "count": count}
                for (wager, outcome), count in sorted(tally.outcomes.items())
            ],
            "dealer_stopped_short": tally.trials.get(DEALER_STOPPED_SHORT, 0),
            "agrees": self.agrees,
        }


def compare_with_exact(config: TableConfig, tally: Tally) -> SimulationComparison:
    """Each predicted line and each wager kind's return, simulated against exact."""
    exact = analyse_table(config)
    if isinstance(exact, WagerAnalysis):
        probabilities = {o.name: o.probability for o in exact.outcomes}
        labels = {o.name: o.label for o in exact.outcomes}
        exact_returns = {exact.wager: exact.expected_return}
    else:
        probabilities = dict(exact.probabilities)
        labels = dict(dealer_totals.LABELS)
        exact_returns = {}  # the attack wagers' return depends on the players' play too
    lines = compare_lines(
        tally.trials, probabilities, labels, left_out=frozenset({DEALER_STOPPED_SHORT})
    )
    returns = tuple(
        estimate_return(kind, sums, exact_returns.get(kind))
        for kind, sums in sorted(tally.returns.items())
    )
    return SimulationComparison(config, tally, exact, tuple(lines), returns)
