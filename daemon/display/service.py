"""`shoe2mqtt display`: the process: the web server and the broker subscriber, one loop.

Tasks (named, children of one TaskGroup): `display-broker` follows the broker into the
model, `display-signals` turns SIGTERM/SIGINT into a clean stop, `watchdog` pings systemd.
`running_display` is the same without the process's signals and systemd, for the demo.
The web server runs beside them on the same loop (aiohttp's runner), so a message that
changes the model wakes the page streams in the same loop iteration (daemon/web/site.py).

Under systemd (Type=notify) READY=1 is sent once the page is served: the pages work before
the broker answers, and say so, which is what a kiosk should show while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import structlog

from daemon.display.broker import follow_broker
from daemon.display.config import plain_http_warning
from daemon.display.model import PitModel
from daemon.display.server import build_app
from daemon.system.notify import Notifier
from daemon.web.site import serving, until_stopped, url_of
from daemon.web.stream import Changes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Coroutine

    from daemon.display.config import DisplayConfig

log = structlog.get_logger("display")


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
    settings = config.display
    app = build_app(model, changes, settings)
    # The pit view; a table's is `<url>table/<id>`.
    url = url_of(settings.bind, settings.port, https=settings.https is not None)
    async with serving(app, settings.bind, settings.port, settings.https):
        yield RunningDisplay(url, lambda: follow_broker(config.mqtt, model, changes.notify))


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
        await until_stopped("display", notifier, {"display-broker": display.follow()})
    log.info("display.stopped")


def run_display(config: DisplayConfig) -> int:
    from daemon.system import logs

    logs.configure(fmt=config.log_format, level=config.log_level)
    asyncio.run(serve(config))
    return 0
