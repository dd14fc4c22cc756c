"""The simulated figures held against the exact ones: frequencies, returns, intervals.

Floats live here and only here: a simulated frequency is an estimate, and its standard
error a statistic. Every exact figure stays a `Fraction` until the last subtraction.

A line's standard error is the binomial one, computed from the exact probability over the
number of independent trials. At blackjack a trial is one player's two cards: the seats of
a round draw from one shoe without replacement, which makes their outcomes very slightly
negatively correlated, so the binomial error is, if anything, too wide. At Double Attack
and Triple Attack a trial is one round: every seat's bonus rides the same dealer cards.

A return's interval treats rounds, not settlements, as the independent units (a ratio
estimator's delta-method variance over per-round sums), because the seats of one round
share the dealer's cards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from rules.analysis.outcomes import exact_and_decimal

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Mapping

    from rules.analysis.simulation import ReturnSums

Z_95 = 1.959963984540054  # two-sided 95 % normal quantile
AGREEMENT_SIGMAS = 4.0  # a simulated line more than this many standard errors out disagrees
# Below this many expected occurrences (or non-occurrences) the normal approximation of the
# binomial is poor: a line is judged by its exact binomial tail instead (`binomial_tail`).
# Seen: two suited three-eights in 6,000 Double Attack rounds, 0.14 expected, are 4.9
# standard errors out, yet happen about once in a hundred such runs.
NORMAL_ENOUGH = 25


@dataclass(frozen=True, slots=True)
class LineComparison:
    """One outcome: how often the engine settled it, and how often it should have."""

    name: str
    label: str
    count: int
    trials: int
    exact: Fraction | None  # None: an outcome the analysis does not predict

    @property
    def simulated(self) -> float:
        return self.count / self.trials if self.trials else math.nan

    @property
    def standard_error(self) -> float:
        if self.exact is None or not self.trials:
            return math.nan
        return math.sqrt(float(self.exact * (1 - self.exact)) / self.trials)

    @property
    def sigmas(self) -> float:
        """How many standard errors the simulated frequency is from the exact one."""
        if self.exact is None or not self.trials:
            return math.inf
        deviation = float(Fraction(self.count, self.trials) - self.exact)
        if deviation == 0:
            return 0.0
        error = self.standard_error
        return abs(deviation) / error if error > 0 else math.inf

    def agrees(self, bound: float = AGREEMENT_SIGMAS) -> bool:
        """Within `bound` standard errors; for a rare line (or one almost certain), as
        likely by chance as `bound` standard errors of a normal would be: its exact
        two-sided binomial tail is at least the normal's beyond `bound`."""
        if self.exact is None or not self.trials:
            return False
        expected = float(self.exact) * self.trials
        if min(expected, self.trials - expected) >= NORMAL_ENOUGH:
            return self.sigmas <= bound
        chance = min(1.0, 2 * binomial_tail(self.count, self.trials, self.exact))
        return chance >= math.erfc(bound / math.sqrt(2))

    def to_mapping(self) -> dict[str, Any]:
        return {
            "outcome": self.name,
            "label": self.label,
            "count": self.count,
            "trials": self.trials,
            "simulated": finite_or_none(self.simulated),
            "exact": None if self.exact is None else exact_and_decimal(self.exact),
            "standard_error": finite_or_none(self.standard_error),
            "sigmas": finite_or_none(self.sigmas),
            "agrees": self.agrees(),
        }


def binomial_tail(count: int, trials: int, probability: Fraction) -> float:
    """The chance of a count at least as far from the mean as `count`, on its side: P(X >=
    count) above the mean, P(X <= count) at or below it, X ~ Binomial(trials, probability).

    Summed term by term in logarithms from `count` outwards; meant for a tail that holds few
    terms of weight (a mean of tens, not millions: `LineComparison.agrees` asks only then).
    """
    if probability in {0, 1}:
        certain = trials if probability == 1 else 0
        return 1.0 if count == certain else 0.0
    # 1 - probability in fractions, exact, before it becomes a float: `log1p(-p)` of a p near 1
    # took the complement of p's float, whose rounding is a large part of a small complement
    # (p = 1 - 1e-6: 1e-10 of q, 2e-9 of a 22-trial tail).
    log_p, log_q = math.log(probability), math.log(1 - probability)
    log_n = math.lgamma(trials + 1)

    def term(k: int) -> float:
        log_choose = log_n - math.lgamma(k + 1) - math.lgamma(trials - k + 1)
        return math.exp(log_choose + k * log_p + (trials - k) * log_q)

    ks = range(count, trials + 1) if count > probability * trials else range(count, -1, -1)
    tail = 0.0
    for k in ks:
        weight = term(k)
        tail += weight
        if weight <= tail * 1e-17 and k != count:  # the terms only shrink from here on
            break
    return min(tail, 1.0)


def compare_lines(
    trials: Counter[str],
    exact: Mapping[str, Fraction],
    labels: Mapping[str, str],
    *,
    left_out: frozenset[str] = frozenset(),
) -> list[LineComparison]:
    """Every predicted outcome, then any outcome the engine settled that nothing predicts.

    Outcomes in `left_out` are not trials of the analysis (a dealer who stopped short) and
    are neither compared nor counted.
    """
    counted = {name: n for name, n in trials.items() if name not in left_out}
    total = sum(counted.values())
    rows = [
        LineComparison(name, labels.get(name, name), counted.get(name, 0), total, probability)
        for name, probability in exact.items()
    ]
    rows.extend(
        LineComparison(name, "not predicted by the analysis", n, total, None)
        for name, n in sorted(counted.items())
        if name not in exact
    )
    return rows


@dataclass(frozen=True, slots=True)
class ReturnEstimate:
    """The simulated return per unit wagered on one wager kind, with its standard error."""

    wager: str
    rounds: int
    settlements: int
    staked: int  # cents
    net: int  # cents
    standard_error: float
    exact: Fraction | None

    @property
    def simulated(self) -> float:
        return self.net / self.staked if self.staked else math.nan

    @property
    def interval_95(self) -> tuple[float, float]:
        half = Z_95 * self.standard_error
        return self.simulated - half, self.simulated + half

    @property
    def sigmas(self) -> float:
        if self.exact is None:
            return math.nan
        deviation = abs(float(Fraction(self.net, self.staked) - self.exact))
        if deviation == 0:
            return 0.0
        return deviation / self.standard_error if self.standard_error > 0 else math.inf

    def agrees(self, bound: float = AGREEMENT_SIGMAS) -> bool:
        return self.exact is None or self.sigmas <= bound

    def to_mapping(self) -> dict[str, Any]:
        low, high = self.interval_95
        return {
            "wager": self.wager,
            "rounds": self.rounds,
            "settlements": self.settlements,
            "staked_cents": self.staked,
            "net_cents": self.net,
            "simulated_return": finite_or_none(self.simulated),
            "interval_95": [finite_or_none(low), finite_or_none(high)],
            "standard_error": finite_or_none(self.standard_error),
            "exact_return": None if self.exact is None else exact_and_decimal(self.exact),
            "sigmas": finite_or_none(self.sigmas),
            "agrees": self.agrees(),
        }


def estimate_return(wager: str, sums: ReturnSums, exact: Fraction | None) -> ReturnEstimate:
    """The ratio estimate net / staked and its delta-method standard error over rounds."""
    rounds = sums.rounds
    error = math.nan
    if rounds > 1 and sums.staked > 0:
        ratio = Fraction(sums.net, sums.staked)
        # sum over rounds of (net - ratio * staked) ** 2, exactly, from the kept sums.
        residual = (
            sums.net_squared
            - 2 * ratio * sums.net_times_staked
            + ratio * ratio * sums.staked_squared
        )
        variance = residual * rounds / (rounds - 1) / (sums.staked * sums.staked)
        error = math.sqrt(float(variance))
    return ReturnEstimate(wager, rounds, sums.settlements, sums.staked, sums.net, error, exact)


def finite_or_none(value: float) -> float | None:
    """JSON has no NaN or infinity: a figure that cannot be worked out is null."""
    return value if math.isfinite(value) else None
