"""The leak fixture itself must catch leaks, or it proves nothing."""

from __future__ import annotations

import asyncio
import subprocess
import time

import psutil
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


def test_a_child_the_test_started_is_found_but_not_one_a_process_from_before_started() -> None:
    """A module's daemon, running before the test, may start a process of its own meanwhile
    (its days counted at the lowest priority): that one is the daemon's, not the test's."""
    me = psutil.Process()
    earlier = subprocess.Popen(["sh", "-c", "sleep 0.2; sleep 30 & wait"])  # noqa: S607 - sh
    try:
        deadline = time.monotonic() + 10
        while not psutil.Process(earlier.pid).children() and time.monotonic() < deadline:
            time.sleep(0.02)
        [its_own] = psutil.Process(earlier.pid).children()
        assert conftest._new_descendants(me, {earlier.pid}) == []
        found = {p.pid for p in conftest._new_descendants(me, set())}
        assert {earlier.pid, its_own.pid} <= found
    finally:
        started = psutil.Process(earlier.pid).children(recursive=True)
        for process in started:
            process.kill()
        earlier.kill()
        earlier.wait()
        psutil.wait_procs(started, timeout=5)
