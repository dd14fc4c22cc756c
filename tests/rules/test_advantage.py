"""Advantage play as evidence: a count-blind seat scores like chance, a counter does not.

The seats here bet from a Hi-Lo count kept by the test itself (written out below, apart from
rules.counting), over shoes dealt straight from a shuffled six-deck shoe: two seats and the
dealer take two cards each a round, all face up, to three quarters of the shoe.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.surveillance import flagged, play_session
from rules import advantage
from rules.advantage import (
    AdvantageWatch,
    Evidence,
    TableRound,
    Thresholds,
    shuffle_z,
)
from rules.cards import DeckKind, deck
from rules.counting import ShoeCount
from rules.games import WagerKind
from rules.outputs import CardDealt, RoundEnded, RoundOpened, ShoeShuffled, WagerAccepted
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from rules.cards import Card
    from rules.outputs import Output

CONFIG = make_config("blackjack", decks=6)
HI_LO = {"2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "10": -1, "J": -1, "Q": -1, "K": -1, "A": -1}
UNIT = 1_000
Bettor = Callable[[float, random.Random], int]


def counter_1_8(true_count: float, _rng: random.Random) -> int:
    return min(max(1, 1 + 2 * (math.floor(true_count) - 1)), 8) * UNIT


def drifting() -> Bettor:
    level = [1]

    def bet(_true_count: float, rng: random.Random) -> int:
        if rng.random() < 0.2:  # a fifth of the rounds
            level[0] = min(8, max(1, level[0] + rng.choice((-1, 1))))
        return level[0] * UNIT

    return bet


def _shoes(bettor: Bettor, shoes: int, seed: int) -> list[Evidence]:
    """`shoes` shoes with seat 1 bet by `bettor`, seat 2 flat; the watch's evidence."""
    rng = random.Random(seed)  # noqa: S311 - a test's shoes
    watch = AdvantageWatch(CONFIG, thresholds=Thresholds())
    evidence: list[Evidence] = []
    round_id = 0
    for number in range(1, shoes + 2):  # the last shuffle ends the last shoe
        evidence += watch.observe([ShoeShuffled(number)])
        if number > shoes:
            break
        cards = [card for _ in range(6) for card in deck(DeckKind.STANDARD)]
        rng.shuffle(cards)
        running, seen = 0, 0
        while seen < len(cards) * 3 // 4:
            round_id += 1
            true_count = running / ((len(cards) - seen) / 52)
            outputs: list[Output] = [
                RoundOpened(round_id),
                WagerAccepted(round_id, 1, WagerKind.BLACKJACK, bettor(true_count, rng)),
                WagerAccepted(round_id, 2, WagerKind.BLACKJACK, UNIT),
            ]
            dealt: list[Card] = cards[seen : seen + 6]
            outputs += [CardDealt(round_id, None, None, card) for card in dealt]
            outputs.append(RoundEnded(round_id))
            running += sum(HI_LO.get(card.rank.value, 0) for card in dealt)
            seen += 6
            evidence += watch.observe(outputs)
    return evidence


def _session_z(evidence: list[Evidence], seat: int) -> float:
    return next(
        e.z
        for e in reversed(evidence)
        if (e.seat, e.test, e.scope) == (seat, "bet_count", "session")
    )


def test_a_count_blind_seat_scores_like_chance_however_its_bets_wander() -> None:
    zs = [_session_z(_shoes(drifting(), 3, seed), 1) for seed in range(100)]
    assert abs(statistics.fmean(zs)) < 0.4  # four standard errors of 100
    assert 0.75 < statistics.pstdev(zs) < 1.25
    assert max(zs) < Thresholds().evidence_z


def test_a_counter_is_flagged_and_a_flat_bettor_is_not() -> None:
    flagged_sessions = 0
    for seed in range(10):
        evidence = _shoes(counter_1_8, 6, seed)
        flagged_sessions += any(e.flagged and e.seat == 1 for e in evidence)
        assert not any(e.flagged for e in evidence if e.seat == 2)
        assert all(e.z == 0 for e in evidence if e.seat == 2)  # a flat bet explains nothing
    assert flagged_sessions >= 7  # about 9 in 10 over six shoes of 39 rounds


def test_the_engine_dealt_counter_is_flagged_and_the_count_blind_seat_is_not() -> None:
    """bench/surveillance.py's heads-up table: basic strategy through the rules engine, a
    1-8 Hi-Lo counter beside a seat that bets 1, 2, 4 or 8 units at random."""
    firsts: list[int | None] = []
    for session in range(3):
        result = play_session("heads_up", 7, session, 8)
        for seat, shoes in result.evidence.items():
            first = next(
                (
                    i
                    for i, items in enumerate(shoes, 1)
                    if any(flagged(e, Thresholds()) for e in items)
                ),
                None,
            )
            if seat == 2:  # the count-blind seat
                assert first is None
            else:
                firsts.append(first)
    assert firsts == [None, 3, 4]  # seeded: the same shoes every run


def test_the_variance_is_the_shuffle_covariance_summed_in_full() -> None:
    """Against Var(c'x) = c' V c with V[i][j] = v(the earlier round), written out."""
    rng = random.Random(5)  # noqa: S311 - a test's numbers
    count = ShoeCount(HI_LO_TAGS, 6, DeckKind.STANDARD)
    rounds = [TableRound(n, 1 + n // 8, 1 + (n % 8) * 30, 0, 0, (), count) for n in range(32)]
    counts = {r.round_id: rng.gauss(0, 1) for r in rounds}  # any index will do
    choice = [rng.choice((0.0, 0.0, 1.0, 2.0)) for _ in rounds]
    x = [counts[r.round_id] for r in rounds]
    # c: each round's weight in the sum of (change in choice) * (change in count).
    c = [0.0] * len(rounds)
    for i in range(1, len(rounds)):
        if rounds[i].shoe == rounds[i - 1].shoe:
            change = choice[i] - choice[i - 1]
            c[i] += change
            c[i - 1] -= change
    covariance = [
        [
            count.true_count_variance(min(a.seen, b.seen)) if a.shoe == b.shoe else 0.0
            for b in rounds
        ]
        for a in rounds
    ]
    total = sum(ci * xi for ci, xi in zip(c, x, strict=True))
    spread = sum(c[i] * covariance[i][j] * c[j] for i in range(32) for j in range(32))
    z = shuffle_z(rounds, choice, lambda r: counts[r.round_id], count.true_count_variance)
    assert math.isclose(z, total / math.sqrt(spread), rel_tol=1e-9)


def test_the_true_count_varies_over_the_shuffle_as_its_variance_says() -> None:
    """Monte Carlo over 3,000 shuffles of two Spanish decks (Hi-Lo is unbalanced there)."""
    rng = random.Random(11)  # noqa: S311 - a test's shuffles
    cards = [card for _ in range(2) for card in deck(DeckKind.SPANISH)]
    at = 40
    counts = []
    for _ in range(3_000):
        rng.shuffle(cards)
        count = ShoeCount(HI_LO_TAGS, 2, DeckKind.SPANISH)
        for card in cards[:at]:
            count.seen(card)
        counts.append(count.true_count)
    expected = count.true_count_variance(at)
    assert abs(statistics.fmean(counts)) < 4 * math.sqrt(expected / 3_000)
    assert 0.9 < statistics.pvariance(counts) / expected < 1.1  # 5 SE of a variance


def test_the_watch_state_round_trips() -> None:
    watch = AdvantageWatch(CONFIG)
    watch.observe([ShoeShuffled(1), RoundOpened(1)])
    watch.observe([WagerAccepted(1, 3, WagerKind.BLACKJACK, 2_500)])
    watch.observe([CardDealt(1, 3, 1, deck(DeckKind.STANDARD)[0]), RoundEnded(1)])
    again = AdvantageWatch.from_state(CONFIG, watch.state())
    assert again.state() == watch.state()


HI_LO_TAGS = {card.rank: HI_LO.get(card.rank.value, 0) for card in deck(DeckKind.STANDARD)}


def _rounds_of_wagers(watch: AdvantageWatch, stakes: list[tuple[int, int]]) -> None:
    """One round a stake, seat 3 betting it (main, 20 point bonus), at `watch`'s table."""
    card = deck(DeckKind.STANDARD)[0]
    for round_id, (main, bonus) in enumerate(stakes, start=1):
        outputs: list[Output] = [
            RoundOpened(round_id),
            WagerAccepted(round_id, 3, WagerKind.BLACKJACK, main),
        ]
        if bonus:
            outputs.append(WagerAccepted(round_id, 3, WagerKind.TWENTY_POINT_BONUS, bonus))
        watch.observe([*outputs, CardDealt(round_id, 3, 1, card), RoundEnded(round_id)])


def test_a_table_keeps_every_wager_of_its_rounds_live_and_after_a_checkpoint() -> None:
    """The rounds a table keeps for the surveillance (its latest 600, packed) give back
    every wager as it was bet, stakes past what four bytes hold among them."""
    stakes = [(1_000, 500), (2_500, 0), (2**31, 0), (1_000, 2**40)] * 200
    latest = stakes[-advantage.MAX_ROUNDS :]
    first = len(stakes) - len(latest) + 1  # round ids count from 1
    watch = AdvantageWatch(CONFIG)
    watch.observe([ShoeShuffled(1)])
    _rounds_of_wagers(watch, stakes)
    for rounds in (watch.rounds, AdvantageWatch.from_state(CONFIG, watch.state()).rounds):
        assert [dict(r.seats) for r in rounds] == [{3: stake} for stake in latest]
        assert [r.round_id for r in rounds] == list(range(first, len(stakes) + 1))


def test_a_checkpoint_written_before_the_rounds_were_packed_is_read() -> None:
    """Earlier checkpoints hold each round as its row of whole numbers, seats by name."""
    watch = AdvantageWatch(CONFIG)
    watch.observe([ShoeShuffled(1)])
    _rounds_of_wagers(watch, [(1_000, 500), (2_500, 0)] * 3)
    earlier = {**watch.state(), "rounds": [r.state() for r in watch.rounds]}
    assert earlier["rounds"][0] == [1, 1, 0, 0, 0, {"3": [1_000, 500]}]
    assert AdvantageWatch.from_state(CONFIG, earlier).state() == watch.state()


def test_the_rounds_a_table_keeps_are_not_walked_by_the_cycle_collector() -> None:
    """A floor keeps 600 rounds at each table: kept as bytes, they leave the objects
    Python's cycle collector tracks (and walks at every full collection, holding the event
    loop) as many as they were. As objects of a class, each added one."""
    watch = AdvantageWatch(CONFIG)
    watch.observe([ShoeShuffled(1)])
    _rounds_of_wagers(watch, [(1_000, 500), (2_500, 0)] * 50)
    gc.collect()
    before = len(gc.get_objects())
    _rounds_of_wagers(watch, [(1_000, 500), (2_500, 0)] * 250)
    gc.collect()
    assert len(watch.rounds) == advantage.MAX_ROUNDS
    assert len(gc.get_objects()) - before < 50  # 500 rounds more, none of them tracked


def test_a_round_keeps_the_counts_at_its_start_as_a_counter_works_them_out() -> None:
    """Six standard decks, Hi-Lo: ten low cards seen before the round, none ten-valued. By
    hand: true count = 52 * 10 / (312 - 10); ten-value excess = 100 * (96 / 302 - 16 / 52)."""
    low = next(card for card in deck(DeckKind.STANDARD) if HI_LO.get(card.rank.value) == 1)
    watch = AdvantageWatch(CONFIG)
    watch.observe([ShoeShuffled(1), RoundOpened(1)])
    watch.observe([WagerAccepted(1, 2, WagerKind.BLACKJACK, 1_000)])
    watch.observe([CardDealt(1, 2, n, low) for n in range(10)] + [RoundEnded(1)])
    watch.observe([RoundOpened(2), WagerAccepted(2, 2, WagerKind.BLACKJACK, 1_000)])
    watch.observe([CardDealt(2, 2, 1, low), RoundEnded(2)])
    first, second = watch.rounds
    assert (first.true_count, first.ten_excess) == (0.0, 0.0)
    assert math.isclose(second.true_count, 52 * 10 / 302, rel_tol=1e-12)
    assert math.isclose(second.ten_excess, 100 * (96 / 302 - 16 / 52), rel_tol=1e-12)
    restored = AdvantageWatch.from_state(CONFIG, watch.state()).rounds[1]
    assert (restored.true_count, restored.ten_excess) == (second.true_count, second.ten_excess)


@given(st.lists(st.integers(min_value=-3, max_value=3).map(float), max_size=40))
def test_mid_ranks_are_the_values_below_and_half_the_ties(values: list[float]) -> None:
    """Spearman's ranks by their definition: a value's 1-based mid-rank is the count of
    values below it plus half of (its ties, itself included, plus one)."""
    expected = [
        sum(1 for w in values if w < v) + (sum(1 for w in values if w == v) + 1) / 2 for v in values
    ]
    assert advantage.mid_ranks(values) == expected


def _textbook_spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rho by its definition, apart from the module: each value's mid-rank is the
    count of values below it plus half of (its ties plus one), then Pearson's correlation of
    the ranks by the statistics module; 0 when either side has no spread."""

    def ranks(values: list[float]) -> list[float]:
        return [
            sum(1 for w in values if w < v) + (sum(1 for w in values if w == v) + 1) / 2
            for v in values
        ]

    rx, ry = ranks(xs), ranks(ys)
    if len(set(rx)) < 2 or len(set(ry)) < 2:
        return 0.0
    return statistics.correlation(rx, ry)


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=-4, max_value=4).map(float),
            st.floats(min_value=-10, max_value=10, allow_nan=False).map(lambda f: round(f, 1)),
        ),
        max_size=60,
    )
)
def test_rank_correlation_is_spearmans_rho(pairs: list[tuple[float, float]]) -> None:
    """The weighing's rho (ranks tallied once a value, the ranks' spread in closed form, one
    count's ranks shared by the seats) against the textbook's; the spread is the ranks'
    squared deviations to the bit."""
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    expected = _textbook_spearman(xs, ys)
    assert math.isclose(advantage.rank_correlation(xs, ys), expected, abs_tol=1e-12)
    shared = advantage.ranked(ys)
    assert advantage.rank_correlation(xs, ys, shared) == advantage.rank_correlation(xs, ys)
    mean = (len(ys) + 1) / 2
    assert shared.spread == sum((r - mean) ** 2 for r in shared.ranks)


def test_rank_correlation_refuses_lists_of_two_lengths() -> None:
    with pytest.raises(ValueError, match="3 values beside 2"):
        advantage.rank_correlation([1.0, 2.0, 3.0], [1.0, 2.0])
