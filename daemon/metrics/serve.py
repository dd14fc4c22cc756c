"""`/metrics` over HTTP, served by the daemon's own event loop, for Prometheus to scrape.

In the event loop rather than on prometheus-client's threaded server: the states are read
from the daemon at each scrape (its tables, its outbox, its link), and those belong to the
loop; a second thread reading them would race it. aiohttp is already the display's server,
and prometheus-client ships a handler for it. A scrape renders a few hundred lines in well
under a millisecond for a PC's tables (docs/deploy.md, "Metrics"), so it never holds a card
back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final, NoReturn

import structlog
from aiohttp import web
from prometheus_client.aiohttp import make_aiohttp_handler

if TYPE_CHECKING:
    from daemon.config import MetricsConfig
    from daemon.metrics.collect import DaemonMetrics

PATH: Final = "/metrics"
# A port that cannot be bound now (another process has it) may be free later; the tables go
# on meanwhile, so this is a slow retry, not a stop.
BIND_RETRY: Final = 30.0
_SHUTDOWN_TIMEOUT: Final = 1.0  # a scrape in flight at stop is not worth waiting for

log = structlog.get_logger("metrics")


def metrics_url(settings: MetricsConfig) -> str:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{settings.port}{PATH}"


async def serve_metrics(metrics: DaemonMetrics, settings: MetricsConfig) -> NoReturn:
    """Serve `metrics` at `settings`' address until cancelled.

    An address that cannot be bound (the port in use, not an address of this PC) is logged
    as an error and tried again every `BIND_RETRY` seconds: metrics never stop a table.
    """
    app = web.Application()
    app.router.add_get(PATH, make_aiohttp_handler(metrics.registry))
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=_SHUTDOWN_TIMEOUT
    )
    await runner.setup()
    try:
        while True:
            site = web.TCPSite(runner, settings.host, settings.port)
            try:
                await site.start()
            except OSError as exc:
                await site.stop()  # the runner forgets it: a retry is a new site
                log.error(  # noqa: TRY400 - the reason is the message; a traceback adds nothing
                    "metrics.bind_failed",
                    host=settings.host,
                    port=settings.port,
                    error=exc.strerror or str(exc),
                    retry_in=BIND_RETRY,
                )
                await asyncio.sleep(BIND_RETRY)
                continue
            log.info("metrics.serving", url=metrics_url(settings))
            await asyncio.get_running_loop().create_future()  # until cancelled
    finally:
        await runner.cleanup()
