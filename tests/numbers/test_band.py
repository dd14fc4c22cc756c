"""The hold's band (rules/analysis/band.py) against oracles that do not share its method: the
exact binomial distribution of a two-outcome wager, and holds drawn at random from the exact
outcome distribution of the real paytables."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis import band as band_module
from rules.analysis.band import (
    UnitDistribution,
    band,
    band_counted,
    chance_counted,
    chance_of,
    in_words,
)
from rules.analysis.shoe import ShoeSpec
from rules.analysis.twenty_point_bonus import analyse_twenty_point_bonus
from rules.paytables import TWENTY_POINT_PAYTABLES


def _twenty(paytable: str = "A") -> UnitDistribution:
    analysis = analyse_twenty_point_bonus(ShoeSpec(6), TWENTY_POINT_PAYTABLES[paytable], paytable)
    return UnitDistribution.of(analysis, paytable)


def _binomial_outside(p: Fraction, odds: int, n: int, low: float, high: float) -> float:
    """Exactly: the chance that n equal stakes of a wager that wins `odds` to 1 with
    probability p hold outside [low, high]. The house's net per unit is n - (odds+1) wins."""
    log_p, log_q = math.log(p), math.log1p(-float(p))
    outside = 0.0
    for wins in range(n + 1):
        hold = (n - (odds + 1) * wins) / n
        if hold < low or hold > high:
            log_choose = math.lgamma(n + 1) - math.lgamma(wins + 1) - math.lgamma(n - wins + 1)
            outside += math.exp(log_choose + wins * log_p + (n - wins) * log_q)
    return outside


@settings(max_examples=40, deadline=None)
@given(
    p=st.fractions(Fraction(1, 400), Fraction(1, 4)),
    odds=st.integers(1, 60),
    n=st.integers(200, 2000),
)
def test_band_of_a_two_outcome_wager_holds_its_share_of_exact_binomial_holds(
    p: Fraction, odds: int, n: int
) -> None:
    """The band leaves outside about 0.1 % of holds, as the exact binomial counts them; a
    lattice of few outcomes cannot put its edge at 0.1 % exactly, so within a factor."""
    p = p.limit_denominator(10_000)
    unit = UnitDistribution("coin", ((Fraction(-odds), p), (Fraction(1), 1 - p)))
    found = band([(unit, 500)] * n, 0.999)
    assert found is not None
    assert found.low < found.theoretical < found.high
    outside = _binomial_outside(p, odds, n, found.low, found.high)
    assert outside <= 0.001 * 3


def test_honest_shifts_fall_inside_the_99_percent_band_about_99_percent_of_the_time() -> None:
    """Holds drawn from the 20 point bonus's exact outcome distribution (paytable A, six
    decks; 300 stakes of mixed sizes): the band's coverage by simulation, not by its method."""
    unit = _twenty()
    rng = random.Random(7)  # noqa: S311 - reproducible draws, not a secret
    stakes = [rng.choice((500, 1000, 2500)) for _ in range(300)]
    found = band([(unit, s) for s in stakes], 0.99)
    assert found is not None
    values = [float(v) for v, _ in unit.values]
    weights = [float(p) for _, p in unit.values]
    shifts, outside = 4000, 0
    handle = sum(stakes)
    for _ in range(shifts):
        draws = rng.choices(values, weights, k=len(stakes))
        hold = sum(s * x for s, x in zip(stakes, draws, strict=True)) / handle
        outside += not found.contains(hold)
    # 40 expected; a binomial's 3.5 standard deviations either way (6.3), and the
    # saddlepoint's own error on a lattice this coarse.
    assert 15 <= outside <= 70, outside


def test_band_narrows_as_the_handle_grows() -> None:
    unit = _twenty()
    widths = []
    for n in (100, 1000, 10_000):
        found = band([(unit, 2500)] * n)
        assert found is not None
        widths.append(found.high - found.low)
    assert widths[0] > widths[1] > widths[2]


def test_chance_of_a_hold_far_below_is_small_and_said_in_words() -> None:
    unit = _twenty()
    units = [(unit, 2500)] * 1000
    found = band(units)
    assert found is not None
    below = chance_of(units, found.low - 0.5)
    assert below < 0.0005
    assert chance_of(units, found.theoretical) > 0.2
    assert in_words(0.000293) == "about 1 in 3,400"
    assert in_words(0.6) == "about an even chance"
    assert in_words(0.0) == "never by chance alone"


def test_no_band_without_a_stake() -> None:
    assert band([]) is None
    assert band([(_twenty(), 0)]) is None


@settings(max_examples=30, deadline=None)
@given(
    stakes=st.lists(
        st.tuples(st.sampled_from(["A", "B"]), st.integers(0, 50_000), st.integers(1, 40)),
        min_size=1,
        max_size=6,
    ),
    hold=st.floats(-3.0, 1.0),
)
def test_stakes_counted_give_the_band_and_chance_of_the_stakes_one_by_one(
    stakes: list[tuple[str, int, int]], hold: float
) -> None:
    """A stake with its multiplicity is the same distribution as the stake repeated: the
    counted form (a report's SQL counts them) gives the same band and chance to the bit,
    whatever order the stakes come in."""
    units = [(_twenty(paytable), stake) for paytable, stake, n in stakes for _ in range(n)]
    counted: dict[tuple[UnitDistribution, int], int] = {}
    for paytable, stake, n in reversed(stakes):
        key = (_twenty(paytable), stake)
        counted[key] = counted.get(key, 0) + n
    shuffled = random.Random(len(units)).sample(units, len(units))  # noqa: S311 - an order, not a secret
    assert band_counted(counted) == band(shuffled)
    assert chance_counted(counted, hold) == chance_of(units, hold)


def _mixed_stakes(seed: int, distinct: int) -> dict[tuple[UnitDistribution, int], int]:
    """A day of a table: `distinct` stake sizes (a round's summed bonuses make many), each
    wagered a few to a few hundred times, on both paytables."""
    rng = random.Random(seed)  # noqa: S311 - reproducible stakes, not a secret
    return {
        (_twenty(rng.choice("AB")), 100 * (i + 1)): rng.randint(3, 300) for i in range(distinct)
    }


@pytest.mark.parametrize("seed", range(4))
def test_the_band_edges_leave_out_what_the_confidence_says(seed: int) -> None:
    """The band's edges found by one root (the tail's level), checked by another (the
    hold's own saddlepoint, as an alert's chance is found): each edge's tail is the share
    left out, 0.05 %, to a few parts in a million."""
    counted = _mixed_stakes(seed, 40)
    found = band_counted(counted)
    assert found is not None
    for edge in (found.low, found.high):
        assert chance_counted(counted, edge) == pytest.approx(0.0005, rel=1e-6)


def test_a_band_of_many_stakes_takes_few_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """The saddlepoint of each edge found in some twenty evaluations of K(t), not the
    ninety a bisection to the last bit took (a floor's year by day is thousands of bands),
    and a band asked for again (text, mapping and alert ask for it) not solved again."""
    calls = 0
    at = band_module._Cumulants.at

    def counted_at(self: object, t: float) -> tuple[float, float, float]:
        nonlocal calls
        calls += 1
        return at(self, t)  # type: ignore[arg-type] # the patched method's own self

    monkeypatch.setattr(band_module._Cumulants, "at", counted_at)
    stakes = _mixed_stakes(99, 80)
    first = band_counted(stakes)
    assert 0 < calls <= 50, calls
    assert band_counted(dict(reversed(stakes.items()))) is first
    assert calls <= 50, calls


def test_a_band_not_remembered_is_the_same_band_and_is_not_kept() -> None:
    """A live shift's stakes are new at every round's end: its bands are solved without
    filling the reports' cache, to the same values."""
    stakes = _mixed_stakes(7, 12)
    band_module._band_of.cache_clear()
    alone = band_counted(stakes, remember=False)
    assert band_module._band_of.cache_info().currsize == 0
    assert alone == band_counted(stakes)
    assert band_module._band_of.cache_info().currsize == 1
