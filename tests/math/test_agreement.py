"""When a simulated line agrees with its exact probability: 4 standard errors where the
normal approximation holds, the exact binomial tail where it does not (a rare line).

The oracle is the binomial distribution summed exactly, in fractions, from `math.comb`:
nothing of the code under test (which sums floats in logarithms).
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.analysis.statistics import (
    AGREEMENT_SIGMAS,
    NORMAL_ENOUGH,
    LineComparison,
    binomial_tail,
)

# The chance, both sides, of a normal beyond 4 standard errors: what "agrees" allows.
ALLOWED = math.erfc(AGREEMENT_SIGMAS / math.sqrt(2))


def _exact_tail(count: int, trials: int, p: Fraction) -> Fraction:
    def pmf(k: int) -> Fraction:
        return math.comb(trials, k) * p**k * (1 - p) ** (trials - k)

    if count > p * trials:
        return sum((pmf(k) for k in range(count, trials + 1)), Fraction(0))
    return sum((pmf(k) for k in range(count + 1)), Fraction(0))


# The oracle sums exact fractions of up to 200 terms: slow by design, so no deadline.
_ORACLE_SETTINGS = settings(deadline=None, max_examples=60)


@_ORACLE_SETTINGS
@given(
    trials=st.integers(1, 200),
    p=st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999_999, 10**6)),
    data=st.data(),
)
def test_the_tail_is_the_binomial_tail(trials: int, p: Fraction, data: st.DataObject) -> None:
    count = data.draw(st.integers(0, trials))
    exact = _exact_tail(count, trials, p)
    assert math.isclose(binomial_tail(count, trials, p), exact, rel_tol=1e-9, abs_tol=1e-300)


def test_the_far_tail_of_a_chance_near_one_keeps_its_precision() -> None:
    """No success in 22 trials at p = 1 - 1e-6: the tail is q**22, and q, the complement,
    is a millionth. Hypothesis found it: taking q from p's float lost 2e-9 of it."""
    p = Fraction(1326398673, 1326400000)
    exact = (1 - p) ** 22
    assert math.isclose(binomial_tail(0, 22, p), exact, rel_tol=1e-12)


@_ORACLE_SETTINGS
@given(
    trials=st.integers(1, 200),
    p=st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999_999, 10**6)),
    data=st.data(),
)
def test_a_rare_line_agrees_exactly_when_its_tail_is_as_likely_as_4_sigma(
    trials: int, p: Fraction, data: st.DataObject
) -> None:
    expected = p * trials
    if min(expected, trials - expected) >= NORMAL_ENOUGH:
        return  # the normal's side, held by the standard errors
    count = data.draw(st.integers(0, trials))
    chance = min(Fraction(1), 2 * _exact_tail(count, trials, p))
    if math.isclose(chance, ALLOWED, rel_tol=1e-6):
        return  # on the boundary itself floats may fall either way
    line = LineComparison("x", "x", count, trials, p)
    assert line.agrees() == (chance >= ALLOWED)


def test_two_suited_three_eights_in_6000_double_attack_rounds_agree() -> None:
    """The run that printed DISAGREEMENT: `simulate --game double_attack --rounds 6000
    --seed 1`, 2 seen where 0.14 were expected, 4.9 standard errors out."""
    p = Fraction(24, 10**6)  # of the order of the exact line; the point is its rarity
    line = LineComparison("three_eights_suited", "x", 2, 6000, p)
    assert line.sigmas > AGREEMENT_SIGMAS
    assert line.agrees()
    assert not LineComparison("three_eights_suited", "x", 6, 6000, p).agrees()


def test_a_common_line_is_held_to_4_standard_errors() -> None:
    p = Fraction(1, 2)
    trials = 10_000
    error = math.sqrt(0.25 / trials)
    within = round(trials * (0.5 + 3.9 * error))
    beyond = round(trials * (0.5 + 4.1 * error))
    assert LineComparison("x", "x", within, trials, p).agrees()
    assert not LineComparison("x", "x", beyond, trials, p).agrees()


def test_an_outcome_nothing_predicts_never_agrees() -> None:
    assert not LineComparison("x", "x", 1, 100, None).agrees()
    assert not LineComparison("x", "x", 1, 100, Fraction(0)).agrees()
    assert LineComparison("x", "x", 0, 100, Fraction(0)).agrees()
