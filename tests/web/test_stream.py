"""The ticks a page's stream runs on: at once, after each change, a heartbeat after quiet,
and none after the server closes; a change made while the stream writes is not missed."""

from __future__ import annotations

import asyncio

from daemon.web.stream import Changes

QUIET = 0.05  # a heartbeat short enough for a test, long beside one turn of the loop


async def test_a_tick_at_once_then_one_per_change_or_heartbeat_until_closed() -> None:
    changes = Changes()
    ticks = changes.ticks(QUIET)
    assert await anext(ticks) is True  # at once: the stream's first event
    loop = asyncio.get_running_loop()
    loop.call_later(QUIET / 5, changes.notify)
    assert await anext(ticks) is True  # the change, well before the heartbeat
    assert await anext(ticks) is False  # nothing for QUIET seconds: a beat
    loop.call_later(QUIET / 5, changes.close)
    assert [tick async for tick in ticks] == []  # closed: the stream ends at once


async def test_a_change_while_the_last_tick_is_handled_comes_as_the_next_tick() -> None:
    changes = Changes()
    ticks = changes.ticks(heartbeat=60.0)
    assert await anext(ticks) is True
    changes.notify()  # as if the model changed while the stream wrote its event
    assert await asyncio.wait_for(anext(ticks), 1.0) is True


async def test_every_open_stream_is_woken_by_one_change() -> None:
    changes = Changes()
    streams = [changes.ticks(heartbeat=60.0) for _ in range(3)]
    for ticks in streams:
        assert await anext(ticks) is True
    waiting = [asyncio.ensure_future(anext(ticks)) for ticks in streams]
    await asyncio.sleep(0)
    changes.notify()
    assert await asyncio.wait_for(asyncio.gather(*waiting), 1.0) == [True, True, True]
