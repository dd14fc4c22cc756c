"""`shoe2mqtt console`: the process: the web server and the broker link, one event loop.

Tasks (named, children of one TaskGroup): `console-broker` follows the table and sends the
dealer's requests, `console-signals` turns SIGTERM/SIGINT into a clean stop, `watchdog`
pings systemd (daemon/web/site.py, as the display's). `running_console` is the same without
the signals and systemd, for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from daemon.dealer_console.contract import Contract
from daemon.dealer_console.link import ConsoleLink
from daemon.dealer_console.server import build_app
from daemon.display.model import PitModel
from daemon.system.notify import Notifier
from daemon.web.site import serving, until_stopped, url_of
from daemon.web.stream import Changes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from daemon.dealer_console.config import ConsoleConfig
    from daemon.web.login_guard import LoginGuard

log = structlog.get_logger("console")


def plain_http_warning(bind: str, *, https: bool) -> str | None:
    """Why serving the console on `bind` deserves a warning, or None: beyond this PC over plain
    HTTP, the dealers' PINs and session cookies cross that network in clear. A warning, not a
    mistake: a site may have TLS in front on another host."""
    if https or ipaddress.ip_address(bind).is_loopback:
        return None
    return (
        f"the dealer console is served over plain HTTP beyond this PC (bind {bind}): the "
        "dealers' PINs and sessions cross that network in clear; set [console.https], or bind "
        "127.0.0.1 behind a TLS reverse proxy (docs/console.md)"
    )


@dataclass(frozen=True, slots=True)
class RunningConsole:
    url: str
    link: ConsoleLink


@contextlib.asynccontextmanager
async def running_console(
    config: ConsoleConfig, *, guard: LoginGuard | None = None
) -> AsyncIterator[RunningConsole]:
    """The page served and the table followed until the block ends."""
    settings = config.console
    table = settings.table.table_id
    changes = Changes()
    model = PitModel(config.mqtt.base_topic, only_table=table)
    link = ConsoleLink(config.mqtt, table, model, Contract(config.mqtt.client_id), changes.notify)
    app = build_app(settings, link, changes, guard=guard)
    url = url_of(settings.bind, settings.port, https=settings.https is not None)
    async with (
        serving(app, settings.bind, settings.port, settings.https),
        asyncio.TaskGroup() as group,
    ):
        follower = group.create_task(link.follow(), name="console-broker")
        try:
            yield RunningConsole(url, link)
        finally:
            follower.cancel()


async def serve(config: ConsoleConfig, *, notifier: Notifier | None = None) -> None:
    """Serve the console until SIGTERM or SIGINT (or cancellation)."""
    notifier = notifier if notifier is not None else Notifier.from_environment()
    async with running_console(config) as console:
        settings = config.console
        warning = plain_http_warning(settings.bind, https=settings.https is not None)
        if warning is not None:
            log.warning("console.plain_http", bind=settings.bind, message=warning)
        log.info("console.serving", url=console.url, table=settings.table.table_id)
        notifier.ready(f"serving {console.url}")
        await until_stopped("console", notifier, {})
    log.info("console.stopped")


def run_console(config: ConsoleConfig) -> int:
    from daemon.system import logs

    logs.configure(fmt=config.log_format, level=config.log_level)
    asyncio.run(serve(config))
    return 0
