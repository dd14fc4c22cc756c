"""The leak fixture itself must catch leaks, or it proves nothing."""

from __future__ import annotations

import asyncio

import pytest

from tests import conftest


def test_a_pending_task_at_loop_shutdown_is_recorded() -> None:
    loop = conftest.new_leak_aware_loop()
    try:
        loop.create_task(asyncio.sleep(3600), name="leaky")
        runner_cancel = asyncio.runners._cancel_all_tasks  # type: ignore[attr-defined]
        runner_cancel(loop)
    finally:
        loop.close()
    assert any("leaky" in t for t in conftest._LEAKED_TASKS)
    conftest._LEAKED_TASKS.clear()


def test_a_task_cancelled_by_its_owner_is_not_a_leak() -> None:
    async def owner() -> None:
        task = asyncio.create_task(asyncio.sleep(3600))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    loop = conftest.new_leak_aware_loop()
    try:
        loop.run_until_complete(owner())
    finally:
        loop.close()
    assert conftest._LEAKED_TASKS == []
