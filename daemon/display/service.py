"""`shoe2mqtt display`: the process: the web server and the broker subscriber, one loop.

Tasks (named, children of one TaskGroup): `display-broker` follows the broker into the
model, `display-signals` turns SIGTERM/SIGINT into a clean stop, `watchdog` pings systemd.
`running_display` is the same without the process's signals and systemd, for the demo.
The web server runs beside them on the same loop (aiohttp's runner), so a message that
changes the model wakes the page streams in the same loop iteration.

Under systemd (Type=notify) READY=1 is sent once the page is served: the pages work before
the broker answers, and say so, which is what a kiosk should show while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn

import structlog
from aiohttp import web

from daemon.display.broker import follow_broker
from daemon.display.config import plain_http_warning
from daemon.display.model import PitModel
from daemon.display.server import Changes, build_app
from daemon.system.notify import Notifier

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Coroutine

    from daemon.display.config import DisplayConfig

log = structlog.get_logger("display")
# How long a stop waits for open requests; the streams end at once (server._close_streams).
_SHUTDOWN_TIMEOUT: Final = 2.0


class _Stop(Exception):
    """Raised inside the TaskGroup to end it: the display was asked to stop."""


def url_of(config: DisplayConfig) -> str:
    """Where a browser finds the pit view (the table view is `<url>table/<id>`)."""
    settings = config.display
    scheme = "https" if settings.https is not None else "http"
    host = f"[{settings.bind}]" if ":" in settings.bind else settings.bind
    return f"{scheme}://{host}:{settings.port}/"


@dataclass(frozen=True, slots=True)
class RunningDisplay:
    """A display serving its pages; `follow()` (run it in the caller's TaskGroup) keeps its
    model up to date from the broker."""

    url: str
    follow: Callable[[], Coroutine[Any, Any, NoReturn]]


@contextlib.asynccontextmanager
async def running_display(config: DisplayConfig) -> AsyncIterator[RunningDisplay]:
    """The pages served until the block ends (the demo runs one beside its daemon)."""
    model = PitModel(config.mqtt.base_topic)
    changes = Changes()
    runner = web.AppRunner(
        build_app(model, changes, config.display),
        shutdown_timeout=_SHUTDOWN_TIMEOUT,
        access_log=None,  # a kiosk's one long request per page says nothing worth a line
        handle_signals=False,
    )
    await runner.setup()
    try:
        site = web.TCPSite(
            runner, config.display.bind, config.display.port, ssl_context=config.display.https
        )
        await site.start()
        yield RunningDisplay(
            url_of(config), lambda: follow_broker(config.mqtt, model, changes.notify)
        )
    finally:
        await runner.cleanup()


async def serve(config: DisplayConfig, *, notifier: Notifier | None = None) -> None:
    """Serve the pages until SIGTERM or SIGINT (or cancellation)."""
    notifier = notifier if notifier is not None else Notifier.from_environment()
    async with running_display(config) as display:
        settings = config.display
        warning = plain_http_warning(
            settings.bind, https=settings.https is not None, login=settings.login is not None
        )
        if warning is not None:
            log.warning("display.plain_http", bind=settings.bind, message=warning)
        log.info(
            "display.serving", url=display.url, broker=f"{config.mqtt.host}:{config.mqtt.port}"
        )
        notifier.ready(f"serving {display.url}")
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(display.follow(), name="display-broker")
                group.create_task(_signals(notifier), name="display-signals")
                group.create_task(notifier.watchdog_loop(), name="watchdog")
        except* _Stop:
            pass
    log.info("display.stopped")


async def _signals(notifier: Notifier) -> None:
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
    log.info("display.stopping")
    notifier.stopping("stopping")
    raise _Stop


def run_display(config: DisplayConfig) -> int:
    from daemon.system import logs

    logs.configure(fmt=config.log_format, level=config.log_level)
    asyncio.run(serve(config))
    return 0
