"""The numbers held to a naive recount of the round log they came from.

Rounds are dealt by the real engine and replayed by the daemon's own replay
(daemon.testing.floor), so the lines are those the archive writes. The oracle reads the same
lines with nothing of daemon.numbers: it counts `round_ended` messages, sums each
settlement's stake and won per wager from the decimal strings, and counts card and notice
messages. Every grouping must partition the rounds: the groups' sums are the whole.
"""

from __future__ import annotations

import functools
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.numbers.periods import GROUPINGS, Grouped, Shifts
from daemon.numbers.records import RoundFolder
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import Pace, table_lines
from rules.config import TableConfig
from rules.games import Game

START = datetime(2026, 11, 29, tzinfo=UTC)


@functools.cache
def _lines(game: Game, seed: int, hours: int) -> tuple[dict[str, Any], ...]:
    config = TableConfig.from_mapping(dict(DEMO_TABLES[game]))
    pace = Pace(rounds_per_hour=20, opens=5, hours=hours, dealer_minutes=45)
    return tuple(table_lines(config, START, 1, seed, pace))


def _recount(lines: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    rounds, cards, floorperson = 0, 0, 0
    handle: Counter[str] = Counter()
    house: Counter[str] = Counter()
    for line in lines:
        if line["type"] != "published":
            continue
        message = line["message"]
        kind = message["type"]
        if kind == "round_ended":
            rounds += 1
        elif kind == "card_dealt" and message.get("round") is not None:
            cards += 1
        elif kind == "notice" and message["kind"] == "floorperson_required":
            floorperson += 1
        elif kind == "settlement" and message["result"] != "void":
            cents = int(Decimal(message["stake"]) * 100)
            won = int(Decimal(message["won"]) * 100)
            handle[message["wager"]] += cents
            house[message["wager"]] += {"lose": cents, "win": -won}.get(message["result"], 0)
    return {"rounds": rounds, "cards": cards, "floorperson": floorperson,
            "handle": dict(handle), "house": dict(house)}  # fmt: skip


@settings(max_examples=6, deadline=None)
@given(
    game=st.sampled_from([Game.BLACKJACK, Game.DOUBLE_ATTACK, Game.TRIPLE_ATTACK]),
    seed=st.integers(0, 1),
    by=st.sampled_from(GROUPINGS),
    shifts=st.lists(
        st.sampled_from(["00:00", "05:30", "06:00", "07:15", "22:00"]), min_size=1, unique=True
    ).map(sorted),
)
def test_every_grouping_sums_to_a_naive_recount(
    game: Game, seed: int, by: str, shifts: list[str]
) -> None:
    lines = _lines(game, seed, 2)
    expected = _recount(lines)
    folder = RoundFolder(lines[0]["id"])
    grouped = Grouped(by, Shifts.parse(shifts))
    for line in lines:
        for record in folder.feed(line):
            grouped.add(record)
    groups = grouped.numbers()
    assert sum(g.rounds for g in groups) == expected["rounds"] > 0
    assert sum(g.cards for g in groups) == expected["cards"]
    assert sum(g.floorperson_calls for g in groups) == expected["floorperson"]
    handle: Counter[str] = Counter()
    house: Counter[str] = Counter()
    for group in groups:
        for wager, money in group.wagers.items():
            handle[wager] += money.handle
            house[wager] += money.house_win
    assert dict(handle) == expected["handle"]
    assert dict(house) == expected["house"]


def test_pace_and_dealers_follow_the_simulated_table() -> None:
    """20 rounds an hour for three hours, dealers changing every 45 minutes."""
    lines = _lines(Game.BLACKJACK, 1, 3)
    folder = RoundFolder("bj-1")
    table = Grouped("table")
    dealers = Grouped("dealer")
    for line in lines:
        for record in folder.feed(line):
            table.add(record)
            dealers.add(record)
    [numbers] = table.numbers()
    assert numbers.rounds == 60
    assert numbers.rounds_per_hour is not None
    assert abs(numbers.rounds_per_hour - 20) < 0.5
    named = {g.key["dealer"]: g.rounds for g in dealers.numbers()}
    assert named == {"ana": 15, "ben": 15, "carla": 15, "dev": 15}
    assert numbers.shoes >= 1
    assert numbers.penetration is not None
    assert 0.7 < numbers.penetration < 0.8  # the simulated dealer cuts at three quarters


def test_shift_and_day_labels() -> None:
    shifts = Shifts.parse(["06:00", "14:00", "22:00"], "America/New_York")
    # 03:00 UTC on 30 November is 22:00 on the 29th in New York: the night shift of the 29th.
    night = datetime(2026, 11, 30, 3, tzinfo=UTC)
    assert shifts.shift_label(night) == "2026-11-29 22:00"
    assert shifts.day_label(night) == "2026-11-29"
    # 10:00 UTC is 05:00 in New York: still the night shift of the 29th.
    assert shifts.shift_label(datetime(2026, 11, 30, 10, tzinfo=UTC)) == "2026-11-29 22:00"
    assert shifts.shift_label(datetime(2026, 11, 30, 11, tzinfo=UTC)) == "2026-11-30 06:00"
