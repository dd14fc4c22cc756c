"""The truth's rounds as the dealer taps them: in a round of an even number each window's
wagers go with its "No more bets" (the layout, docs/mqtt.md), in the others one by one, so
every interleaving run drives both ways of wagering."""

from __future__ import annotations

import random

import pytest

from daemon.testing.interleaving.truth import TruthTable
from rules.games import Game
from tests.rules.tables import make_config


@pytest.mark.parametrize("game", list(Game))
def test_every_other_round_taps_its_layouts_and_the_rest_each_wager(game: Game) -> None:
    table = TruthTable(make_config(game), random.Random(3))  # noqa: S311 - a test's table
    for _ in range(8):
        round_ = table.next_round()
        taps = [step for step in round_.steps if step.kind == "tap"]
        layouts = [s for s in taps if s.command == "close_betting" and "wagers" in s.body]
        wagers = [s for s in taps if s.command == "wager"]
        if round_.round_id % 2:
            assert (layouts, bool(wagers)) == ([], True)
        else:
            assert (bool(layouts), wagers) == (True, [])
            assert all(
                len({(w["seat"], w["kind"]) for w in s.body["wagers"]}) == len(s.body["wagers"])
                for s in layouts
            )
