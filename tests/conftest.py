"""Suite-wide fixtures: every test must leave no task, thread, process or socket behind,
and any test may have a real mosquitto (daemon.testing) of its own.

Borrowed idea (not code) from pymodbus's autouse leak check: a test that leaks is a bug
even when its assertions pass, because a daemon that leaks does not run for months.
"""

from __future__ import annotations

import asyncio
import functools
import shlex
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar

import psutil
import pytest

from daemon.testing import Certificates, Mosquitto, Subscribe, make_certificates, subscriber

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Generator, Iterator
    from pathlib import Path

_T = TypeVar("_T")
_LEAKED_TASKS: list[str] = []


class _LeakAwareTask(asyncio.Task[_T]):
    """A task that notices when asyncio.Runner has to cancel it at loop shutdown.

    A task still pending when the test's event loop shuts down was leaked by the test or a
    fixture: structured concurrency means every task is awaited or cancelled by its owner.
    """

    def cancel(self, msg: Any | None = None) -> bool:
        if sys._getframe(1).f_code.co_name == "_cancel_all_tasks":  # caller: leak or not
            _LEAKED_TASKS.append(repr(self))
        return super().cancel(msg)


def _task_factory(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, _T], /, **kwargs: Any
) -> asyncio.Task[_T]:
    return _LeakAwareTask(coro, loop=loop, **kwargs)


def new_leak_aware_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    # typeshed's protocol omits the context= keyword that 3.11 passes to a task factory
    loop.set_task_factory(_task_factory)  # type: ignore[arg-type]
    return loop


def pytest_asyncio_loop_factories(
    config: pytest.Config,  # noqa: ARG001 - the hook's signature
    item: pytest.Item,  # noqa: ARG001 - the hook's signature
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """pytest-asyncio's hook: every test loop records the tasks it had to cancel."""
    return {"loop": new_leak_aware_loop}


def _inet_sockets() -> set[tuple[Any, ...]]:
    return {
        (c.family, c.type, c.laddr, c.status) for c in psutil.Process().net_connections(kind="inet")
    }


def _settle(check: Any, timeout: float = 2.0) -> Any:
    """Give short-lived threads and exiting children a moment before calling them leaks."""
    deadline = time.monotonic() + timeout
    leftover = check()
    while leftover and time.monotonic() < deadline:
        time.sleep(0.02)
        leftover = check()
    return leftover


def _new_descendants(me: psutil.Process, before: set[int]) -> list[psutil.Process]:
    """The test's processes still running: those it started, and theirs. What a process
    running before the test started meanwhile is that process's, and its fixture's (a
    module's daemon counting its days at the lowest priority, exiting as the test ends)."""
    found = []
    for process in me.children(recursive=True):
        try:
            if process.pid in before or process.status() == psutil.STATUS_ZOMBIE:
                continue
            if not any(parent.pid in before for parent in process.parents()):
                found.append(process)
        except psutil.NoSuchProcess:
            continue  # gone while it was looked at
    return found


def _described(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {shlex.join(process.cmdline())}"
    except psutil.NoSuchProcess:
        return f"{process.pid} (exited as it was named)"


@pytest.fixture(autouse=True)
def no_leaks() -> Generator[None]:
    """Fail the test that leaves tasks, threads, child processes or sockets behind."""
    threads_before = set(threading.enumerate())
    sockets_before = _inet_sockets()
    me = psutil.Process()
    children_before = {p.pid for p in me.children(recursive=True)}
    _LEAKED_TASKS.clear()
    yield
    problems: list[str] = []
    threads = _settle(
        lambda: [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    )
    if threads:
        problems.append(f"threads left running: {threads}")
    children = _settle(lambda: _new_descendants(me, children_before))
    if children:
        problems.append(f"child processes left running: {[_described(p) for p in children]}")
    sockets = _settle(lambda: _inet_sockets() - sockets_before)
    if sockets:
        problems.append(f"sockets left open: {sorted(map(str, sockets))}")
    if _LEAKED_TASKS:
        problems.append(f"tasks left pending at loop shutdown: {_LEAKED_TASKS}")
        _LEAKED_TASKS.clear()
    if problems:
        pytest.fail("resource leak: " + "; ".join(problems))


# ---------------------------------------------------------------- brokers
def _running(broker: Mosquitto) -> Iterator[Mosquitto]:
    with broker:  # started here, stopped and waited for at teardown
        yield broker


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A fresh broker that forgets everything (retained messages too) when restarted."""
    yield from _running(Mosquitto(tmp_path / "mosquitto"))


@pytest.fixture
def persistent_mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker that keeps sessions and queued messages across `stop()` and `start()`.

    Lets a subscriber with a persistent session receive what was published while it was
    offline, so a test need not race the link to be subscribed first after a restart.
    """
    yield from _running(Mosquitto(tmp_path / "mosquitto", persistence=True))


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    """A throwaway CA, a server certificate it signed for 127.0.0.1, and a client pair."""
    return make_certificates(tmp_path / "pki")


@pytest.fixture
def tls_mosquitto(tmp_path: Path, certificates: Certificates) -> Iterator[Mosquitto]:
    """A broker speaking only TLS, with a certificate for 127.0.0.1 from `certificates.ca`."""
    yield from _running(Mosquitto(tmp_path / "mosquitto", tls=certificates))


@pytest.fixture
def subscribe(mosquitto: Mosquitto) -> Subscribe:
    """`async with subscribe("a/#", "b") as subscriber:` on the `mosquitto` broker.

    `identifier=..., persistent=True` asks for a session the broker keeps while the
    subscriber is away (useful only with `persistent_mosquitto`).
    """
    return functools.partial(subscriber, mosquitto)


@pytest.fixture
def subscribe_persistent(persistent_mosquitto: Mosquitto) -> Subscribe:
    """`subscribe`, on the `persistent_mosquitto` broker."""
    return functools.partial(subscriber, persistent_mosquitto)
