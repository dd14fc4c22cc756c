"""A web server beside the broker on one event loop, run as a service: what the pit display
and the dealer console share as processes.

`serving` runs the app (aiohttp's runner, on the caller's loop, so a message that changes a
model wakes the pages' streams in the same loop iteration) until its block ends;
`until_stopped` runs the process's tasks, named, in one TaskGroup beside a task that turns
SIGTERM/SIGINT into a clean stop and systemd's watchdog.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any, Final

import structlog
from aiohttp import web

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Coroutine, Mapping

    from daemon.system.notify import Notifier

# How long a stop waits for open requests; the streams end at once (Changes.close).
SHUTDOWN_TIMEOUT: Final = 2.0


class _Stop(Exception):
    """Raised inside the TaskGroup to end it: the process was asked to stop."""


def url_of(bind: str, port: int, *, https: bool) -> str:
    """Where a browser finds the server's first page."""
    scheme = "https" if https else "http"
    host = f"[{bind}]" if ":" in bind else bind
    return f"{scheme}://{host}:{port}/"


@contextlib.asynccontextmanager
async def serving(
    app: web.Application, bind: str, port: int, https: ssl.SSLContext | None
) -> AsyncIterator[None]:
    """`app` served on `bind`:`port` (over TLS with `https`) until the block ends."""
    runner = web.AppRunner(
        app,
        shutdown_timeout=SHUTDOWN_TIMEOUT,
        access_log=None,  # a kiosk's one long request per page says nothing worth a line
        handle_signals=False,
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, bind, port, ssl_context=https)
        await site.start()
        yield
    finally:
        await runner.cleanup()


async def until_stopped(
    name: str, notifier: Notifier, tasks: Mapping[str, Coroutine[Any, Any, object]]
) -> None:
    """Run `tasks` (by their names) until SIGTERM or SIGINT (or cancellation); `name` is the
    process's, for its logger (`<name>.stopping`) and its signal task (`<name>-signals`)."""
    try:
        async with asyncio.TaskGroup() as group:
            for task_name, task in tasks.items():
                group.create_task(task, name=task_name)
            group.create_task(_signals(name, notifier), name=f"{name}-signals")
            group.create_task(notifier.watchdog_loop(), name="watchdog")
    except* _Stop:
        pass


async def _signals(name: str, notifier: Notifier) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    stopping = (signal.SIGTERM, signal.SIGINT)
    for signum in stopping:
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        for signum in stopping:
            loop.remove_signal_handler(signum)
    structlog.get_logger(name).info(f"{name}.stopping")
    notifier.stopping("stopping")
    raise _Stop
