"""The open-loop load (bench/e2e/load.py): rules-valid steps, on a timetable that keeps each
request between the card before it and the card after it, and settlements a replay agrees with."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING

import pytest

from bench.e2e.harness import table_mapping
from bench.e2e.load import CardStep, RequestStep, RoundLogWriter, TableLoad
from daemon.round_log import replay
from rules.config import TableConfig
from rules.events import event_to_mapping
from rules.games import Game

if TYPE_CHECKING:
    from pathlib import Path

    from bench.e2e.load import Step


def steps(game: Game, count: int, *, pace: float = 4.0, phase: float = 0.1) -> list[Step]:
    config = TableConfig.from_mapping(table_mapping(game, "t-1"))
    load = TableLoad(config, seed=7, pace=pace, phase=phase)
    return list(itertools.islice(load.steps(), count))


@pytest.mark.parametrize("game", list(Game))
def test_the_round_log_of_the_steps_replays_to_their_settlements(
    game: Game, tmp_path: Path
) -> None:
    config = TableConfig.from_mapping(table_mapping(game, "t-1"))
    load = TableLoad(config, seed=3, pace=2.0, phase=0.0)
    writer = RoundLogWriter(config, tmp_path / "log.jsonl")
    played = list(itertools.islice(load.steps(), 1500))  # several shoes' worth of rounds
    for step in played:
        writer.played(step)
    writer.close()
    replayed = list(replay((tmp_path / "log.jsonl").read_text().splitlines()))
    assert [r for r in replayed if r["type"] == "rejected"] == []
    assert [r for r in replayed if r["type"] == "settlement"] == [
        record for step in played for record in step.settles
    ]
    assert sum(step.shuffled for step in played if isinstance(step, CardStep)) >= 2


@pytest.mark.parametrize("game", list(Game))
def test_each_request_goes_out_half_way_between_the_card_before_it_and_the_card_after_it(
    game: Game,
) -> None:
    pace, phase = 4.0, 0.1
    played = steps(game, 600, pace=pace, phase=phase)
    cards = 0
    for step in played:
        if isinstance(step, CardStep):
            cards += 1
            assert step.number == cards
            assert step.at == pytest.approx(phase + cards / pace)
        else:
            assert step.cards_before == cards
            assert step.at == pytest.approx(phase + (cards + 0.5) / pace)
    assert any(isinstance(step, RequestStep) and step.command == "action" for step in played)


def test_triple_attack_wagers_go_out_in_the_middle_of_the_deal() -> None:
    """The second and third attack windows open after cards of the deal (13:69F-36.5(f)):
    the timetable must send their layouts between the cards that open and close them."""
    played = steps(Game.TRIPLE_ATTACK, 300)
    late_layouts = [
        step
        for step in played
        if isinstance(step, RequestStep)
        and step.command == "close_betting"
        and any(w["kind"] in {"second_attack", "third_attack"} for w in step.body["wagers"])
    ]
    assert late_layouts
    assert all(step.cards_before > 0 for step in late_layouts)


@pytest.mark.parametrize("game", list(Game))
def test_the_layout_only_groups_what_the_console_sends_one_by_one(game: Game) -> None:
    """Each window's wagers go with its close in one request, or each on its own before it:
    the same events, in the same order, deciding the same settlements, at the same cards."""
    config = TableConfig.from_mapping(table_mapping(game, "t-1"))
    both = [
        list(itertools.islice(TableLoad(config, 7, pace=4.0, phase=0.1, layout=g).steps(), 900))
        for g in (True, False)
    ]
    layout, one_by_one = both
    for played in both:
        assert any(isinstance(s, RequestStep) and s.command == "close_betting" for s in played)
    assert not [s for s in layout if isinstance(s, RequestStep) and s.command == "wager"]
    assert [s for s in one_by_one if isinstance(s, RequestStep) and s.command == "wager"]
    assert all("wagers" not in s.body for s in one_by_one if isinstance(s, RequestStep))

    def flat(played: list[Step]) -> list[tuple[str, int]]:
        return [
            (json.dumps(event_to_mapping(event)), step.cards_before)
            for step in played
            if isinstance(step, RequestStep)
            for event in step.events
        ]

    grouped, separate = flat(layout), flat(one_by_one)
    common = min(len(grouped), len(separate)) - 12  # both cut off mid-round; compare before
    assert grouped[:common] == separate[:common]
    dealt = [[(s.card, s.burned, s.settles) for s in p if isinstance(s, CardStep)] for p in both]
    shorter = min(len(cards) for cards in dealt)
    assert dealt[0][:shorter] == dealt[1][:shorter]


def test_each_request_carries_its_own_transaction() -> None:
    transactions = [
        s.body["transaction"] for s in steps(Game.BLACKJACK, 400) if isinstance(s, RequestStep)
    ]
    assert len(set(transactions)) == len(transactions)
