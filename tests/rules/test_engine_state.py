"""An engine's state as data, and back: the round trip is exact, at any moment of play.

The oracle is the engine that never stopped: rounds are played on one engine; at a random
event its state is written out (through JSON, as a checkpoint stores it), read back into a
second engine, and both then take the same remaining events. Every output of the two must be
equal, and so must the public view and the state written again at the end.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.engine import TableEngine
from rules.engine_state import (
    STATE_VERSION,
    StateError,
    copy_engine,
    engine_state,
    restore_engine,
)
from rules.games import GAMES, Game
from rules.player import Dealer
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from rules.config import TableConfig
    from rules.events import TableEvent


def _played(game: Game, seed: int, rounds: int) -> list[TableEvent]:
    config = make_config(game.value)
    rules = GAMES[game]
    plan = {
        seat: {rule.kind: config.limits[rule.kind].minimum for rule in rules.wagers}
        for seat in (1, 3, 7)
    }
    dealer = Dealer(TableEngine(config), random.Random(seed), reshuffle_at=0.9)  # noqa: S311 - a test's shoe
    events: list[TableEvent] = []
    for _ in range(rounds):
        events += dealer.play(plan).events
    return events


@st.composite
def part_played(draw: st.DrawFn) -> tuple[TableConfig, TableEngine, list[TableEvent]]:
    """A table's engine some way into its rounds (1 to 6 of them, of any game), and the
    events that are still to come."""
    game = draw(st.sampled_from(list(Game)))
    events = _played(game, draw(st.integers(0, 2**32)), draw(st.integers(1, 6)))
    config = make_config(game.value)
    engine = TableEngine(config)
    split = int(draw(st.floats(0, 1)) * len(events))
    for event in events[:split]:
        engine.apply(event)
    return config, engine, events[split:]


@settings(max_examples=30, deadline=None)
@given(part_played())
def test_an_engine_restored_from_its_state_goes_on_exactly_as_the_original(
    played: tuple[TableConfig, TableEngine, list[TableEvent]],
) -> None:
    config, original, rest = played
    state = json.loads(json.dumps(engine_state(original)))
    restored = restore_engine(config, state)
    assert engine_state(restored) == engine_state(original)
    for event in rest:
        expected = [o.to_mapping() for o in original.apply(event)]
        assert [o.to_mapping() for o in restored.apply(event)] == expected
        assert restored.public_view() == original.public_view()
    assert engine_state(restored) == engine_state(original)


@settings(max_examples=30, deadline=None)
@given(part_played())
def test_a_copy_goes_on_exactly_as_the_original_and_shares_nothing_it_changes(
    played: tuple[TableConfig, TableEngine, list[TableEvent]],
) -> None:
    """The copy a layout is judged on (daemon: "No more bets" with its wagers): the rest of
    the deal played on the copy leaves the original as it was, and played on the original
    then makes what it made on the copy."""
    _config, original, rest = played
    before = engine_state(original)
    copy = copy_engine(original)
    assert engine_state(copy) == before
    made = [[o.to_mapping() for o in copy.apply(event)] for event in rest]
    assert engine_state(original) == before
    assert [[o.to_mapping() for o in original.apply(event)] for event in rest] == made
    assert engine_state(original) == engine_state(copy)


def test_a_state_of_another_version_or_shape_is_refused_with_a_reason() -> None:
    config = make_config("blackjack")
    state = engine_state(TableEngine(config))
    with pytest.raises(StateError, match=f"version 99; this code reads {STATE_VERSION}"):
        restore_engine(config, {**state, "version": 99})
    with pytest.raises(StateError, match="KeyError"):
        restore_engine(config, {"version": STATE_VERSION})
    with pytest.raises(StateError, match="ValueError"):
        restore_engine(config, {**state, "remaining": {"XX": 1}} | {"shoe": "x"})
