"""How often an honest shift's hold falls outside its band, by simulation; and how much play
it takes to catch a misconfigured paytable.

    uv run python -m bench.band_coverage [--shifts 1000000] [--seed 1]

Coverage: for each wager and shift size, the band (rules/analysis/band.py, 99.9 %) of stakes
of $5, $10 and $25 in equal numbers is computed once; then `--shifts` honest shifts are drawn
from the wager's exact outcome distribution (numpy's multinomial per stake, the counts of
each paytable line) and their holds held against it. A shift's hold depends only on how many
of each line each stake size drew, so a multinomial draw is exactly a shift.

Power: shifts of a table configured to pay suited 20 at 19 to 1, held against paytable A's
band, at several sizes: the share that raises the alert.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np

from bench.e2e.harness import machine
from rules.analysis.band import UnitDistribution, band
from rules.analysis.optional_bonus import analyse_optional_bonus
from rules.analysis.shoe import ShoeSpec
from rules.analysis.twenty_point_bonus import analyse_twenty_point_bonus
from rules.cards import DeckKind
from rules.money import Odds
from rules.paytables import OPTIONAL_BONUS_PAYTABLES, TWENTY_POINT_PAYTABLES, TwentyPointOutcome

STAKES = (500, 1000, 2500)  # cents, a third of the shift's stakes each


def _twenty(suited: str = "9 to 1") -> UnitDistribution:
    table = dict(TWENTY_POINT_PAYTABLES["A"])
    table[TwentyPointOutcome.SUITED_20] = Odds.parse(suited)
    return UnitDistribution.of(analyse_twenty_point_bonus(ShoeSpec(6), table, "A"), "A")


def _bonus() -> UnitDistribution:
    shoe = ShoeSpec(8, DeckKind.SPANISH)
    analysis = analyse_optional_bonus(shoe, OPTIONAL_BONUS_PAYTABLES["regulation"], "regulation")
    return UnitDistribution.of(analysis, "regulation")


def _holds(
    unit: UnitDistribution, per_stake: int, shifts: int, rng: np.random.Generator
) -> np.ndarray:
    """`shifts` honest holds of `per_stake` units at each of STAKES."""
    values = np.array([float(v) for v, _ in unit.values])
    p = np.array([float(q) for _, q in unit.values])
    p = p / p.sum()
    won = np.zeros(shifts)
    for stake in STAKES:
        counts = rng.multinomial(per_stake, p, size=shifts)
        won += stake * counts @ values
    return won / (per_stake * sum(STAKES))


def coverage(shifts: int, rng: np.random.Generator) -> None:
    print("| wager | stakes a shift | band (99.9 %) | theoretical | below | above | outside |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, unit in (("20 point bonus, A, 6 decks", _twenty()),
                       ("optional bonus, 8 Spanish decks", _bonus())):  # fmt: skip
        for per_stake in (33, 133, 667, 3333):
            units = [(unit, s) for s in STAKES for _ in range(per_stake)]
            found = band(units, 0.999)
            assert found is not None
            holds = _holds(unit, per_stake, shifts, rng)
            below = float(np.mean(holds < found.low))
            above = float(np.mean(holds > found.high))
            edges = f"[{found.low:.2%}, {found.high:.2%}]"
            print(f"| {name} | {3 * per_stake:,} | {edges} | {found.theoretical:.2%} | "
                  f"{below:.3%} | {above:.3%} | {below + above:.3%} |")  # fmt: skip


def power(shifts: int, rng: np.random.Generator) -> None:
    honest, paid_more = _twenty(), _twenty("19 to 1")
    print(f"\nsuited 20 at 19 to 1: house edge {float(paid_more.mean):.2%} against the posted "
          f"{float(honest.mean):.2%}")  # fmt: skip
    print("| bonus wagers | band (99.9 %) | share of shifts alerted |")
    print("|---:|---|---:|")
    for per_stake in (1120, 2240, 4480, 8960, 17920):
        units = [(honest, s) for s in STAKES for _ in range(per_stake)]
        found = band(units, 0.999)
        assert found is not None
        holds = _holds(paid_more, per_stake, min(shifts, 100_000), rng)
        alerted = float(np.mean((holds < found.low) | (holds > found.high)))
        print(f"| {3 * per_stake:,} | [{found.low:.2%}, {found.high:.2%}] | {alerted:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shifts", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    began = time.monotonic()
    rng = np.random.default_rng(args.seed)
    coverage(args.shifts, rng)
    power(args.shifts, rng)
    print(f"\n{time.monotonic() - began:.0f} s; {Fraction(1, 1000)} outside expected")


if __name__ == "__main__":
    main()
