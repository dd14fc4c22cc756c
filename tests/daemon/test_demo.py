"""The README's first command: the demo runs whole rounds of every game end to end."""

from __future__ import annotations

from daemon.cli.demo import run_demo


async def test_the_demo_plays_rounds_of_each_game_through_its_embedded_broker() -> None:
    """amqtt broker, three emulated shoes on ptys, the daemon, the simulators: all real."""
    seen: list[str] = []
    result = await run_demo(rounds=2, seed=11, on_view=lambda topic, _: seen.append(topic))
    assert result.rounds == {"bj-1": 2, "da-1": 2, "ta-1": 2}
    # Every round of a game with a settled wager on the table settles something; the attack
    # wagers are the main wagers of triple attack, so every round there settles.
    assert result.settlements["ta-1"] >= 2
    assert "shoe2mqtt/bridge/demo/state" in seen
    assert {"shoe2mqtt/bj-1/availability", "shoe2mqtt/ta-1/availability"} <= set(seen)
    assert {"shoe2mqtt/bj-1/round", "shoe2mqtt/da-1/round", "shoe2mqtt/ta-1/round"} <= set(seen)
