"""`/metrics` over HTTP, served by the daemon's own event loop, for Prometheus to scrape.

In the event loop rather than on prometheus-client's threaded server: the states are read
from the daemon at each scrape (its tables, its outbox, its link), and those belong to the
loop; a second thread reading them would race it. aiohttp is already the display's server.
The text itself is rendered in a worker thread, once the states are read: it takes 0.5 ms
for three tables but 30 ms for 256 (measured, docs/deploy.md), and a card must not wait
that long behind a scrape. The counters are prometheus-client's, which lock their values,
so that thread reads them safely while the loop counts on.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final, NoReturn

import structlog
from prometheus_client.exposition import choose_encoder

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp import web

    from daemon.configuration.service_config import MetricsConfig
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
    # Imported here: aiohttp is a fifth of the daemon's imports (about 0.25 s of a core at
    # every start, docs/performance.md), and `[metrics]` is off unless enabled.
    from aiohttp import web

    app = web.Application()
    app.router.add_get(PATH, _scrape_handler(metrics))
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


def _scrape_handler(metrics: DaemonMetrics) -> Callable[[web.Request], Awaitable[web.Response]]:
    from aiohttp import hdrs, web  # loaded already by `serve_metrics`, which calls this

    rendering = asyncio.Lock()  # one scrape's readings at a time

    async def scrape(request: web.Request) -> web.Response:
        # The Prometheus text format, or OpenMetrics when the scraper asks for it.
        encode, content_type = choose_encoder(",".join(request.headers.getall(hdrs.ACCEPT, [])))
        async with rendering:
            metrics.take_readings()  # here, in the loop that owns the daemon's state
            body = await asyncio.to_thread(encode, metrics.registry)
        response = web.Response(body=body, headers={hdrs.CONTENT_TYPE: content_type})
        response.enable_compression()  # when the scraper accepts it, as Prometheus does
        return response

    return scrape
