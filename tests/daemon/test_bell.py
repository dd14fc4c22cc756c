"""The link publisher's bell: one sleeper, woken at once by the first ring."""

from __future__ import annotations

import asyncio

import pytest

from daemon.mqtt.bell import Bell


async def test_a_ring_wakes_the_sleeper_on_the_loops_next_turn() -> None:
    bell = Bell()
    loop = asyncio.get_running_loop()
    loop.call_soon(bell.ring)
    assert await bell.sleep(5.0) is True


async def test_a_ring_before_the_sleep_is_kept_for_it_once() -> None:
    bell = Bell()
    bell.ring()
    bell.ring()  # two rings, one wake: the sleeper looks at everything that rang
    assert await bell.sleep(5.0) is True
    assert await bell.sleep(0.05) is False


async def test_a_sleep_that_nothing_rings_ends_at_its_limit() -> None:
    bell = Bell()
    started = asyncio.get_running_loop().time()
    assert await bell.sleep(0.1) is False
    assert asyncio.get_running_loop().time() - started >= 0.09


async def test_a_cancelled_sleeper_is_cancelled_and_the_bell_rings_on() -> None:
    bell = Bell()
    sleeper = asyncio.create_task(bell.sleep(None), name="sleeper")
    await asyncio.sleep(0)
    sleeper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sleeper
    bell.ring()  # nobody asleep: kept
    assert await bell.sleep(5.0) is True
