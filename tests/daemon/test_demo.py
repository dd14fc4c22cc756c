"""The README's first command: the demo runs whole rounds of every game end to end."""

from __future__ import annotations

import asyncio
import functools
import io

import aiohttp
from rich.console import Console

from daemon.cli.demo import _in_view, run_demo
from daemon.testing import free_port


async def test_the_demo_plays_rounds_of_each_game_through_its_embedded_broker() -> None:
    """amqtt broker, three emulated shoes on ptys, the daemon, the simulators, the pit
    display: all real."""
    seen: list[str] = []
    urls: list[str] = []
    serving = asyncio.Event()
    port = free_port()

    def on_display(url: str) -> None:
        urls.append(url)
        serving.set()

    async with asyncio.TaskGroup() as group:
        demo = group.create_task(
            run_demo(
                rounds=2,
                seed=11,
                on_view=lambda topic, _: seen.append(topic),
                display_port=port,
                on_display=on_display,
            )
        )
        async with asyncio.timeout(10):
            await serving.wait()
            page, stream = await _read_the_display(urls[0])
    result = demo.result()
    assert result.rounds == {"bj-1": 2, "da-1": 2, "ta-1": 2}
    # Every round of a game with a settled wager on the table settles something; the attack
    # wagers are the main wagers of triple attack, so every round there settles.
    assert result.settlements["ta-1"] >= 2
    # Every wager and decision the players make is one the table takes: the same attack
    # wager three times at Triple Attack, no bonus above its main wager at Double Attack.
    assert result.refused == {"bj-1": 0, "da-1": 0, "ta-1": 0}
    assert "shoe2mqtt/bridge/demo/state" in seen
    assert {"shoe2mqtt/bj-1/availability", "shoe2mqtt/ta-1/availability"} <= set(seen)
    assert {"shoe2mqtt/bj-1/round", "shoe2mqtt/da-1/round", "shoe2mqtt/ta-1/round"} <= set(seen)
    assert urls == [f"http://127.0.0.1:{port}/"]
    assert "<title>shoe2mqtt demo</title>" in page
    assert stream.startswith("retry: 1000\n\nevent: full\n")


async def _read_the_display(url: str) -> tuple[str, str]:
    """The pit page and the first two blocks of its event stream."""
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as response:
            page = await response.text()
        async with session.get(f"{url}events") as response:
            stream = (await response.content.readuntil(b"\n\n")).decode()
            stream += (await response.content.readuntil(b"\n\n")).decode()
    return page, stream


async def test_the_demo_view_shows_its_broker_connected_and_every_table_live() -> None:
    """What `./scripts/demo` draws: the pit as `watch` draws it, never "connecting" once the
    view's own client hears the pit (a new user saw every table OFFLINE for a whole run)."""
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    demo = functools.partial(run_demo, rounds=1, seed=5)
    result = await _in_view(demo, console)
    assert result.rounds == {"bj-1": 1, "da-1": 1, "ta-1": 1}
    drawn = out.getvalue()
    assert "broker: connected" in drawn
    assert "OFFLINE" not in drawn
