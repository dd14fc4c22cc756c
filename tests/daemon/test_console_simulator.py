"""The console simulator's own behaviour: the wagers it makes and what it keeps of the broker.

The demo's and the harness's dealers had drifted apart on the wagers (one made Triple
Attack's later attack wagers at any amount, the table refusing them); the plan is held here to
the procedures (docs/procedures.md, 13:69F-26.6(b)) and the posted limits as the demo's table
file writes them, not to the rules' wager table the simulator reads.
"""

from __future__ import annotations

import asyncio
import json
import random
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.simulator import TableLog, wager_plan
from daemon.simulator.sight import Stalled
from daemon.simulator.tables import DEMO_TABLES
from daemon.wire.topics import Topics
from rules.config import TableConfig
from rules.games import Game, WagerKind
from tests.test_import_cycles import project_graph


def cents(dollars: str) -> int:
    return int(Decimal(dollars) * 100)


def posted(game: Game) -> dict[str, tuple[int, int]]:
    """The demo table's limits, in cents, from its mapping as written."""
    limits = DEMO_TABLES[game]["limits"]
    return {kind: (cents(limit["min"]), cents(limit["max"])) for kind, limit in limits.items()}


@settings(max_examples=60, deadline=None)
@given(game=st.sampled_from(list(Game)), seed=st.integers(0, 2**32 - 1))
def test_every_planned_wager_is_within_the_posted_limits(game: Game, seed: int) -> None:
    config = TableConfig.from_mapping(DEMO_TABLES[game])
    plan = wager_plan(config, random.Random(seed))  # noqa: S311 - a test's players
    limits = posted(game)
    assert 2 <= len(plan) <= 5
    assert all(1 <= seat <= config.seats for seat in plan)
    for wagers in plan.values():
        for kind, amount in wagers.items():
            low, high = limits[kind.value]
            assert low <= amount <= high, (kind, amount)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_second_attack_wager_equals_the_first(seed: int) -> None:
    """docs/procedures.md: "an optional second attack wager equal to the first"."""
    config = TableConfig.from_mapping(DEMO_TABLES[Game.TRIPLE_ATTACK])
    for wagers in wager_plan(config, random.Random(seed)).values():  # noqa: S311 - as above
        first = wagers[WagerKind.FIRST_ATTACK]
        assert wagers.get(WagerKind.SECOND_ATTACK, first) == first


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_an_optional_bonus_wager_is_a_dollar_to_the_initial_wager(seed: int) -> None:
    """13:69F-26.6(b): not less than $1.00 and not more than the initial wager (or the posted
    maximum); the double attack wager is up to the initial wager (docs/procedures.md)."""
    config = TableConfig.from_mapping(DEMO_TABLES[Game.DOUBLE_ATTACK])
    for wagers in wager_plan(config, random.Random(seed)).values():  # noqa: S311 - as above
        initial = wagers[WagerKind.INITIAL]
        bonus = wagers.get(WagerKind.OPTIONAL_BONUS)
        assert bonus is None or 100 <= bonus <= initial
        assert wagers.get(WagerKind.DOUBLE_ATTACK, 0) <= initial


def test_the_players_make_the_bonus_wagers_often_and_not_always() -> None:
    """Seats with and without each bonus wager, so both paths of a round are played."""
    config = TableConfig.from_mapping(DEMO_TABLES[Game.TRIPLE_ATTACK])
    rng = random.Random(3)  # noqa: S311 - as above
    seats = [w for _ in range(200) for w in wager_plan(config, rng).values()]
    made = sum(WagerKind.SECOND_ATTACK in w for w in seats) / len(seats)
    assert 0.5 < made < 0.9


def message(table: str, suffix: str, **body: Any) -> tuple[str, bytes]:
    return f"shoe2mqtt/{table}/{suffix}", json.dumps({"table": table, **body}).encode()


async def test_a_table_log_keeps_its_tables_messages_from_the_last_mark_on() -> None:
    sent: list[tuple[str, str]] = []

    async def send(topic: str, payload: str) -> None:
        sent.append((topic, payload))

    log = TableLog(Topics("shoe2mqtt"), "bj-1", send)
    assert not log.owns("shoe2mqtt/bj-10/round")
    log.take(*message("bj-1", "round", as_of=4, round={"id": 1}))
    log.take(*message("bj-1", "event/card_dealt", seq=5))
    log.take(*message("bj-1", "round", as_of=3))  # an older state, arrived late
    assert log.seen("bj-1") == 5  # the highest seq or as_of: what each request says it saw
    assert log.latest_state("bj-1") == {"table": "bj-1", "as_of": 4, "round": {"id": 1}}
    mark = log.mark()  # what came before is forgotten, the state and `seen` are kept
    asyncio.get_running_loop().call_later(0.01, log.take, *message("bj-1", "round", as_of=5))
    found = await log.wait(lambda m: m.topic.endswith("/round"), after=mark, within=1)
    assert found.body["as_of"] == 5
    with pytest.raises(Stalled):
        await log.wait(lambda m: m.topic.endswith("/card_dealt"), after=mark, within=0.05)
    await log.publish("shoe2mqtt/bj-1/request/status", "{}")
    assert sent == [("shoe2mqtt/bj-1/request/status", "{}")]


def test_the_simulator_is_a_client_of_the_daemon_and_never_reaches_into_it() -> None:
    """It plays a table as any console does: through the wire contract, with the rules'
    player and the emulated shoe; never the service, and never the development-only harness
    (the wheel ships it)."""
    may = ("daemon.simulator", "daemon.wire", "rules.", "drivers.")
    reaching = sorted(
        f"{name} imports {other}"
        for name, imported in project_graph().items()
        if name.startswith("daemon.simulator")
        for other in imported
        if not other.startswith(may)
    )
    assert reaching == []
