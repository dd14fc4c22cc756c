"""How far a table's hold on a wager may stray by chance: the band, and the chance of a hold.

A wager's hold over a period is the house's win divided by the handle: `H = sum(s_j X_j) /
sum(s_j)`, where `s_j` is the amount of the j-th independent stake and `X_j` the house's net
per unit it wagered (+1 when the wager loses, minus the odds when it wins). Each `X_j` follows
the wager's exact outcome distribution (`rules.analysis.outcomes.WagerAnalysis`), so the
hold's distribution follows from that distribution and the amounts actually wagered; its
mean is the theoretical hold (the house edge, weighted by stake).

That distribution is far from normal over a shift: a 20 point bonus pays 1,000 to 1 on about
one two-card hand in 70,000, so one such hand in a few hundred moves the hold by hundreds of
percent. A normal band from the mean and variance puts such shifts outside far more often
than it says. The band here comes from the **saddlepoint approximation** of the tail
(Lugannani and Rice, 1980, in Barndorff-Nielsen's r* form) of the exact cumulant
generating function `K(t) = sum_j log E[exp(t a_j X)]`, which uses every outcome's
probability and every stake, and is accurate far out in the tails of sums of independent,
skewed variables. Its coverage is checked by simulation (docs/math.md;
`tests/numbers/test_band.py`).

Independence: at the 20 point bonus each player's two cards are a unit (the seats of a round
share only the dealer's cards, which matter to the rarest line alone). At Double Attack every
seat's optional bonus rides the same three dealer cards, so a round is the unit: its stake is
the sum of the round's optional bonus stakes.

Floats here: a band is a statistic. The money it is held against is exact (cents).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from rules.analysis.outcomes import WagerAnalysis

    Counted = Mapping[tuple["UnitDistribution", int], int]  # (distribution, stake) -> how many

DEFAULT_CONFIDENCE = 0.999  # of the band, both tails together
_ITERATIONS = 200  # of `_root`: it stops far sooner, at a float's width
_WIDTH = 4e-16
_REMEMBERED = 4096  # bands kept by `band_counted`: a few MiB at most
_KINDS = 256  # distributions whose floats and mean are kept: a floor's paytables and decks
_TINY = 1e-300  # a tail below a float's range, so that its log is finite


@dataclass(frozen=True, slots=True)
class UnitDistribution:
    """The house's net per unit wagered, exactly: each value with its probability."""

    name: str  # what it is, for a reader: "20 point bonus, paytable A, 6 standard decks"
    values: tuple[tuple[Fraction, Fraction], ...]  # (house net per unit, probability)

    @classmethod
    def of(cls, analysis: WagerAnalysis, name: str) -> UnitDistribution:
        merged: dict[Fraction, Fraction] = {}
        for outcome in analysis.outcomes:
            net = -outcome.odds.ratio if outcome.odds is not None else Fraction(1)
            merged[net] = merged.get(net, Fraction(0)) + outcome.probability
        return cls(name, tuple(sorted(merged.items())))

    def __hash__(self) -> int:
        # Its name says what it is; hashing the exact fractions each time a stake is counted
        # or a band looked up cost more than the rest of the lookup. Equal ones share a name.
        return hash(self.name)

    @property
    def mean(self) -> Fraction:
        """The theoretical hold: the house edge per unit wagered (summed once per kind)."""
        return _mean(self)

    @property
    def variance(self) -> Fraction:
        mean = self.mean
        return sum(((v - mean) ** 2 * p for v, p in self.values), Fraction(0))


@dataclass(frozen=True, slots=True)
class Band:
    """Where the hold falls with probability `confidence` by chance alone."""

    theoretical: float
    low: float
    high: float
    confidence: float
    handle: int  # cents: what the band is for

    def contains(self, hold: float) -> bool:
        return self.low <= hold <= self.high


class _Cumulants:
    """K(t) and its derivatives for the hold of independent units, grouped by kind and stake.

    Each term is worked out with the largest exponent factored out, so a large `t` (far in a
    tail) neither overflows nor loses the terms that matter."""

    def __init__(self, groups: Mapping[tuple[UnitDistribution, int], int]) -> None:
        handle = sum(stake * count for (_, stake), count in groups.items())
        self.terms = [
            (count, stake / handle, *_floats(unit))
            for (unit, stake), count in groups.items()
            if count and stake
        ]
        # The holds at the ends, exactly: every stake lost (the highest), or every stake on
        # the best line (the lowest); an atom there must not fall outside by a rounding.
        items = list(groups.items())
        ends = [
            sum((Fraction(s * n) * unit.values[i][0] for (unit, s), n in items), Fraction(0))
            / handle
            for i in (0, -1)
        ]
        self.lowest, self.highest = float(ends[0]), float(ends[1])
        # K'(t) is about the mean plus t variances near 0: a t of one standard deviation.
        spread = self.at(0.0)[2]
        self.step = 1.0 / math.sqrt(spread) if spread > 0.0 else 1.0

    def at(self, t: float) -> tuple[float, float, float]:
        """K(t), K'(t), K''(t)."""
        k = k1 = k2 = 0.0
        for count, share, values, probabilities in self.terms:
            scale = t * share
            # The largest exponent, from the ends of the values (they are sorted).
            top = scale * (values[-1] if scale >= 0.0 else values[0])
            total = first = second = 0.0
            for v, p in zip(values, probabilities, strict=True):
                weight = p * math.exp(scale * v - top)
                total += weight
                first += weight * v
                second += weight * v * v
            first /= total
            k += count * (top + math.log(total))
            k1 += count * share * first
            k2 += count * share * share * max(second / total - first * first, 0.0)
        return k, k1, k2


@functools.lru_cache(maxsize=_KINDS)
def _floats(unit: UnitDistribution) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A distribution's values and probabilities as floats, in the values' order: made once
    per kind of wager, not again at every band (a live shift's is solved at each round's end,
    and the exact fractions' conversions were a sixth of its cost)."""
    ordered = sorted(unit.values)
    return tuple(float(v) for v, _ in ordered), tuple(float(p) for _, p in ordered)


@functools.lru_cache(maxsize=_KINDS)
def _mean(unit: UnitDistribution) -> Fraction:
    """`unit.mean`, summed once per kind of wager (a live shift's band asks at each round's
    end), exactly: the same fraction."""
    return sum((v * p for v, p in unit.values), Fraction(0))


def _tail(cumulants: _Cumulants, t: float) -> tuple[float, float]:
    """The hold `h = K'(t)` and the saddlepoint approximation of its tail beyond it:
    P(H >= h) for t > 0, P(H <= h) for t < 0.

    Barndorff-Nielsen's form, Phi of r* = w + log(u / w) / w, of the same saddlepoint as
    Lugannani and Rice's: as accurate in the tails, and always a probability, falling as
    the tail goes out (Lugannani-Rice's correction term turns its estimate negative near
    the mean of a few very skewed stakes, which sent the search for an edge astray)."""
    k, k1, k2 = cumulants.at(t)
    w = math.copysign(math.sqrt(max(2.0 * (t * k1 - k), 0.0)), t)
    u = t * math.sqrt(k2)
    if abs(w) < 1e-8 or u == 0.0:
        return k1, 0.5
    ratio = u / w
    r = w + math.log(ratio) / w if ratio > 0 else w
    return k1, _normal_upper(abs(r)) if r * t > 0 else 1.0 - _normal_upper(abs(r))


def _normal_upper(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def _solve(cumulants: _Cumulants, tail: float, sign: float) -> float:
    """The hold whose tail on the side of `sign` is `tail`: the saddlepoint `t` where the
    log of the tail meets the log of `tail`, bracketed by doubling from a standard deviation's
    `t` (the saddlepoint is a few of them out), then found by `_root`."""
    near, far = 0.0, sign * cumulants.step
    while _tail(cumulants, far)[1] > tail:
        near, far = far, far * 2.0
        if abs(far) > 1e12:
            return _tail(cumulants, far)[0]
    target = math.log(tail)

    def gap(t: float) -> float:
        return math.log(max(_tail(cumulants, t)[1], _TINY)) - target

    return _tail(cumulants, _root(gap, near, far))[0]


def _root(gap: Callable[[float], float], near: float, far: float) -> float:
    """Where the monotone `gap` crosses zero between `near` (gap > 0 there, or the mean's
    side) and `far` (gap <= 0): false position, Illinois's way (a stalled end's value is
    halved), so about ten evaluations of K where bisection took eighty; the bracket keeps it
    safe, and it stops when the bracket is down to a float's width."""
    g_near, g_far = gap(near), gap(far)
    side = 0
    for _ in range(_ITERATIONS):
        if g_far == 0.0 or abs(far - near) <= _WIDTH * max(abs(near), abs(far)):
            break
        middle = far - g_far * (far - near) / (g_far - g_near) if g_near != g_far else far
        if not min(near, far) < middle < max(near, far):
            middle = (near + far) / 2.0
        g_middle = gap(middle)
        if g_middle > 0.0:
            near, g_near = middle, g_middle
            g_far = g_far / 2.0 if side == -1 else g_far
            side = -1
        else:
            far, g_far = middle, g_middle
            g_near = g_near / 2.0 if side == 1 else g_near
            side = 1
    return far


def _canonical(counted: Counted) -> dict[tuple[UnitDistribution, int], int]:
    """The stakes wagered, in one order whatever order they came in: the float sums over
    them then come out the same to the last bit, however the stakes were counted."""
    kept = [(key, n) for key, n in counted.items() if key[1] > 0 and n > 0]
    return dict(sorted(kept, key=lambda item: (item[0][0].name, item[0][0].values, item[0][1])))


def band(
    units: Iterable[tuple[UnitDistribution, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Band | None:
    """The band of the hold over `units` (each an independent stake in cents with its
    distribution): `confidence` of the holds chance makes fall inside, half the rest on
    each side. None when nothing was wagered."""
    return band_counted(Counter(units), confidence)


def band_counted(
    counted: Counted, confidence: float = DEFAULT_CONFIDENCE, *, remember: bool = True
) -> Band | None:
    """`band` of the stakes counted: each (distribution, stake) with how many were wagered,
    as a report that counted them elsewhere (in SQL) holds them; the same band as `band` of
    the stakes one by one, since a stake's multiplicity is all the distribution sees.
    `remember=False` solves it without keeping it: stakes that will not be asked again (a
    live shift's, new at every round's end) would only crowd out the reports' bands."""
    key = tuple(_canonical(counted).items())
    return _band_of(key, confidence) if remember else _band_of.__wrapped__(key, confidence)


@functools.lru_cache(maxsize=_REMEMBERED)
def _band_of(
    counted: tuple[tuple[tuple[UnitDistribution, int], int], ...], confidence: float
) -> Band | None:
    """The band of stakes counted in canonical order, remembered: a report asks for a
    group's band for its text, its mapping and its alert, and groups with the very same
    stakes (the same table's days at the same few stakes) are solved once."""
    groups = dict(counted)
    handle = sum(stake * count for (_, stake), count in groups.items())
    if not handle:
        return None
    theoretical = float(
        sum((unit.mean * stake * count for (unit, stake), count in groups.items()), Fraction(0))
        / handle
    )
    cumulants = _Cumulants(groups)
    outside = (1.0 - confidence) / 2.0
    low = max(_solve(cumulants, outside, -1.0), cumulants.lowest)
    high = min(_solve(cumulants, outside, 1.0), cumulants.highest)
    # Every stake at its extreme at once is an atom the smooth approximation cannot see:
    # when it alone is likelier than the tail left out, the band reaches it.
    if _extreme_chance(groups, low=False) >= outside:
        high = cumulants.highest
    if _extreme_chance(groups, low=True) >= outside:
        low = cumulants.lowest
    return Band(theoretical, low, high, confidence, handle)


def chance_of(units: Iterable[tuple[UnitDistribution, int]], hold: float) -> float:
    """The chance of a hold at least as far from the theoretical as `hold`, on its side:
    P(H <= hold) below the mean, P(H >= hold) above it (saddlepoint, as the band)."""
    return chance_counted(Counter(units), hold)


def chance_counted(counted: Counted, hold: float) -> float:
    """`chance_of` the stakes counted, as `band_counted` takes them."""
    groups = _canonical(counted)
    if not groups:
        return 1.0
    cumulants = _Cumulants(groups)
    mean = cumulants.at(0.0)[1]
    if hold <= cumulants.lowest or hold >= cumulants.highest:
        extreme = hold <= cumulants.lowest
        return (
            0.0
            if (hold < cumulants.lowest if extreme else hold > cumulants.highest)
            else (_extreme_chance(groups, low=extreme))
        )
    sign = 1.0 if hold > mean else -1.0
    near, far = 0.0, sign * cumulants.step
    while (cumulants.at(far)[1] - hold) * sign < 0:
        near, far = far, far * 2.0

    def gap(t: float) -> float:
        return (hold - cumulants.at(t)[1]) * sign

    return _tail(cumulants, _root(gap, near, far))[1]


def _extreme_chance(groups: Mapping[tuple[UnitDistribution, int], int], *, low: bool) -> float:
    """Every unit at its lowest (or highest) value: the product of those probabilities."""
    log = 0.0
    for (unit, _), count in groups.items():
        probability = unit.values[0][1] if low else unit.values[-1][1]
        log += count * math.log(float(probability))
    return math.exp(log)


def in_words(chance: float) -> str:
    """A chance as a pit boss reads it: 'about 1 in 3,400'."""
    if chance <= 0.0:
        return "never by chance alone"
    if chance >= 0.5:
        return "about an even chance"
    odds = 1.0 / chance
    digits = max(0, len(str(int(odds))) - 2)
    rounded = round(odds, -digits)
    return f"about 1 in {int(rounded):,}"
