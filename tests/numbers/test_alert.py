"""A table configured to pay suited 20 at 19 to 1 while its sign posts paytable A: its hold
falls below the band of the posted paytable, and the numbers say so with the chance in words.

The rounds are dealt by the real engine (rules.analysis.simulation.FastRoundPlayer: seven
seats, every seat on the 20 point bonus) under the misconfigured paytable; the numbers hold
their hold against paytable A, as `report --posted bj-1=A` does. Paying 19 to 1 for suited 20
takes the 6-deck house edge from 24.71 % to 3.93 %; the 99.9 % band's lower edge is so far
below the theoretical hold (a 1,000 to 1 line) that one full table's shift (about 3,400 bonus
wagers) shows it only now and then: about 27,000 wagers (four thousand rounds, a week of
shifts at one busy table) show it every time (docs/math.md).
"""

from __future__ import annotations

import functools
import random
from datetime import UTC, datetime, timedelta

from daemon.numbers.records import RoundRecord, Settled, TableSettings
from daemon.numbers.tally import Numbers
from daemon.simulator.tables import DEMO_TABLES
from rules.analysis.simulation import FastRoundPlayer
from rules.config import TableConfig
from rules.games import Game
from rules.outputs import Settlement

ROUNDS = 4000
A_LINES = {
    "queen_of_hearts_pair_dealer_blackjack": "1000 to 1", "queen_of_hearts_pair": "125 to 1",
    "matched_20": "19 to 1", "suited_20": "9 to 1", "any_20": "4 to 1",
}  # fmt: skip


@functools.cache
def _rounds(suited_20: str, seed: int) -> tuple[RoundRecord, ...]:
    settings = {**DEMO_TABLES[Game.BLACKJACK], "paytable": {**A_LINES, "suited_20": suited_20}}
    config = TableConfig.from_mapping(settings)
    player = FastRoundPlayer(config, random.Random(seed))  # noqa: S311 - a seeded shoe
    recorded = TableSettings.from_line(config.to_mapping())
    start = datetime(2026, 11, 29, 6, tzinfo=UTC)
    rounds = []
    for index in range(ROUNDS):
        outputs = player.play().outputs
        settled = tuple(
            Settled(o.wager.value, o.seat, o.stake, o.won, o.result.value, o.outcome)
            for o in outputs
            if isinstance(o, Settlement)
        )
        at = start + timedelta(minutes=index)
        rounds.append(RoundRecord("bj-1", index + 1, at, at + timedelta(seconds=50), recorded,
                                  settled=settled))  # fmt: skip
    return tuple(rounds)


def _numbers(suited_20: str, posted: str | None, seed: int) -> Numbers:
    numbers = Numbers(posted={"bj-1": posted} if posted else {})
    for record in _rounds(suited_20, seed):
        numbers.add(record)
    return numbers


def test_suited_20_paid_at_19_to_1_raises_the_alert_against_the_posted_paytable() -> None:
    numbers = _numbers("19 to 1", posted="A", seed=3)
    money = numbers.wagers["twenty_point_bonus"]
    assert money.settlements == 7 * ROUNDS
    [alert] = numbers.alerts()
    assert alert.direction == "below"
    assert alert.chance < 0.0005
    assert abs(alert.band.theoretical - 0.2471) < 0.0001
    words = alert.words()
    assert "below its 99.9% band" in words
    assert "comes by chance about 1 in" in words


def test_the_same_table_held_against_its_own_configuration_raises_none() -> None:
    """Without the posted paytable, the figures are the configuration's: the hold agrees."""
    numbers = _numbers("19 to 1", posted=None, seed=3)
    assert numbers.alerts() == []
    money = numbers.wagers["twenty_point_bonus"]
    found = money.band()
    assert found is not None
    assert abs(found.theoretical - 0.0393) < 0.0001


def test_an_honest_table_raises_none() -> None:
    numbers = _numbers("9 to 1", posted="A", seed=3)
    assert numbers.alerts() == []
