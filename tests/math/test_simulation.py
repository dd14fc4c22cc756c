"""Seeded rounds through the daemon's engine agree with the exact figures, game by game.

The engine settles; the tally only counts. A line more than four standard errors from the
exact probability is a bug in the engine or in the analysis: the seeds are fixed, so these
tests are deterministic, and each was chosen blind (seed 1).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from daemon.cli.simulate import run_simulation
from rules.analysis.simulation import (
    DEALER_STOPPED_SHORT,
    FastRoundPlayer,
    ReturnSums,
    Tally,
    plan_chunks,
    simulate_chunk,
    wager_plan,
)
from rules.analysis.statistics import estimate_return
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.games import GAMES, Game, WagerKind
from rules.player import Dealer

WORKERS = 2  # the CI machine's cores


def table(game: Game, **settings: Any) -> TableConfig:
    limits = {rule.kind.value: {"min": "1.00", "max": "1000.00"} for rule in GAMES[game].wagers}
    return TableConfig.from_mapping({"id": "t", "game": game.value, "limits": limits, **settings})


@pytest.mark.parametrize("game", list(Game))
@pytest.mark.parametrize(
    "settings",
    [{}, {"hole_card_reader": False, "decks": 2}, {"seats": 3, "decks": 2, "surrender": False}],
)
def test_fast_player_deals_exactly_what_the_simulated_round_deals(
    game: Game, settings: dict[str, Any]
) -> None:
    """Event for event and output for output, shuffles and burns included."""
    if game is Game.TRIPLE_ATTACK:
        settings = {k: v for k, v in settings.items() if k != "surrender"}
    config = table(game, **settings)
    plan = wager_plan(config)
    fast = FastRoundPlayer(config, random.Random(7), plan)  # noqa: S311 - a test shoe
    driven = Dealer(TableEngine(config), random.Random(7))  # noqa: S311 - a test shoe
    for _ in range(250):
        ours, theirs = fast.play(), driven.play(plan)
        assert ours.events == theirs.events
        assert ours.outputs == theirs.outputs


def test_wager_plan_respects_the_limits_and_the_regulations() -> None:
    config = TableConfig.from_mapping(
        {
            "id": "da",
            "game": "double_attack",
            "limits": {
                "initial": {"min": "5.00", "max": "8.00"},
                "optional_bonus": {"min": "1.00", "max": "100.00"},
                "double_attack": {"min": "5.00", "max": "8.00"},
            },
        }
    )
    plan = wager_plan(config, seats=2)
    # The initial wager at its maximum; the bonus no more than it (13:69F-26.6(b)1).
    assert plan == {
        1: {WagerKind.INITIAL: 800, WagerKind.OPTIONAL_BONUS: 800},
        2: {WagerKind.INITIAL: 800, WagerKind.OPTIONAL_BONUS: 800},
    }
    attack = wager_plan(table(Game.TRIPLE_ATTACK), seats=1)[1]
    assert set(attack.values()) == {2500}  # second and third equal the first (36.5)


def test_chunks_depend_on_the_seed_and_table_only() -> None:
    config = table(Game.BLACKJACK)
    chunks = plan_chunks(config, 12_001, seed=3, chunk_rounds=5_000)
    assert [c.rounds for c in chunks] == [5_000, 5_000, 2_001]
    assert len({c.seed for c in chunks}) == 3
    assert plan_chunks(config, 12_001, seed=3, chunk_rounds=5_000) == chunks
    assert simulate_chunk(chunks[2]) == simulate_chunk(chunks[2])


def test_the_tally_is_the_same_on_one_worker_or_two() -> None:
    """Four chunks a table, the last one short, played on one worker or shared by two."""
    configs = [table(Game.DOUBLE_ATTACK), table(Game.TRIPLE_ATTACK)]
    alone = run_simulation(configs, 1_500, seed=11, workers=1, chunk_rounds=400)
    shared = run_simulation(configs, 1_500, seed=11, workers=WORKERS, chunk_rounds=400)
    assert [c.tally.rounds for c in alone] == [1_500, 1_500]
    assert [c.tally for c in alone] == [c.tally for c in shared]


def test_a_tally_merges_by_adding() -> None:
    config = table(Game.BLACKJACK)
    first, second = (simulate_chunk(c) for c in plan_chunks(config, 600, 5, chunk_rounds=300))
    merged = Tally("blackjack")
    merged.merge(first)
    merged.merge(second)
    assert merged.rounds == 600
    assert merged.trials == first.trials + second.trials
    assert merged.returns["twenty_point_bonus"].staked == 600 * 7 * 1_000
    with pytest.raises(ValueError, match="cannot merge"):
        merged.merge(Tally("triple_attack"))


def test_return_interval_of_a_known_round_sequence() -> None:
    # Two rounds: +10 on 10 staked, -10 on 10 staked: return 0, residuals +10 and -10.
    sums = ReturnSums()
    sums.add_round(net=10, staked=10, settlements=1)
    sums.add_round(net=-10, staked=10, settlements=1)
    estimate = estimate_return("w", sums, exact=None)
    assert estimate.simulated == 0
    # variance = (100 + 100) * 2 / 1 / 20 ** 2 = 1
    assert estimate.standard_error == pytest.approx(1.0)
    assert estimate.agrees()


# About 10 s alone on two cores; the suite may share them. 30,000 rounds find a common line
# off by a few per cent of its chance; `shoe2mqtt simulate --rounds 1000000` looks closer.
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("game", "settings", "rounds"),
    [
        (Game.BLACKJACK, {"decks": 6, "paytable": "A"}, 30_000),
        (Game.DOUBLE_ATTACK, {"decks": 8, "deck_kind": "spanish"}, 30_000),
        (Game.TRIPLE_ATTACK, {"decks": 8, "deck_kind": "spanish"}, 15_000),
    ],
)
def test_simulation_agrees_with_the_exact_figures(
    game: Game, settings: dict[str, Any], rounds: int
) -> None:
    (comparison,) = run_simulation([table(game, **settings)], rounds, seed=1, workers=WORKERS)
    tally = comparison.tally
    assert tally.rounds == rounds
    assert tally.voided_rounds == 0
    disagreeing = [line.to_mapping() for line in comparison.lines if not line.agrees()]
    assert disagreeing == []
    assert all(line.exact is not None for line in comparison.lines)  # nothing unforeseen
    assert all(estimate.agrees() for estimate in comparison.returns)
    if game is Game.TRIPLE_ATTACK:
        # Seven seats all done before the dealer is rare; those rounds are left out.
        assert tally.trials[DEALER_STOPPED_SHORT] < rounds / 1000
    else:
        (estimate,) = comparison.returns
        assert estimate.exact is not None
        assert estimate.interval_95[0] - 0.02 < estimate.exact < estimate.interval_95[1] + 0.02
