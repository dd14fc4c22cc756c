"""The display's web side: two pages, their files, and one live stream of Server-Sent Events.

Server-Sent Events rather than a WebSocket: the page only listens (a display cannot move
money), and the browser's EventSource reconnects by itself when the display process
restarts. The stream's first event after every (re)connection is `full`: every table the
display knows, replacing what the page had; then `update` events carry the tables changed
since, as soon as a message changed them (an update waits for nothing but the event loop);
a `beat` every `HEARTBEAT` seconds lets the page notice a dead connection that never closed.

Everything is served from the package (static/): no CDN, no build step, nothing from the
internet, and a Content-Security-Policy that lets the page load nothing from elsewhere.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog
from aiohttp import web

from daemon.display.login_guard import LoginGuard
from daemon.wire.topics import valid_segment

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from daemon.display.config import DisplaySettings, Login
    from daemon.display.login_guard import Wait
    from daemon.display.model import PitModel

log = structlog.get_logger("display")

STATIC: Final = Path(__file__).parent / "static"
HEARTBEAT: Final = 5.0  # seconds between `beat` events; the page gives up after three missed
RETRY_MS: Final = 1000  # how soon EventSource reconnects after the stream ends
_SECURITY_HEADERS: Final = {
    # Only this server's own files, scripts and stream; no inline script, no framing.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Changes:
    """Wakes every open stream when the model changes: `notify()` after each change."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    def next(self) -> asyncio.Event:
        """The event the next `notify()` sets; take it before looking at the model."""
        return self._event


@dataclass(slots=True)
class _State:
    model: PitModel
    changes: Changes
    settings: DisplaySettings
    page: str
    guard: LoginGuard
    closing: asyncio.Event = field(default_factory=asyncio.Event)


_STATE: Final = web.AppKey("display", _State)


def build_app(
    model: PitModel,
    changes: Changes,
    settings: DisplaySettings,
    *,
    guard: LoginGuard | None = None,
) -> web.Application:
    """`guard`: who may try the login's password when (a test's own clock; one by default)."""
    app = web.Application(middlewares=[_security_headers, _login_required])
    app[_STATE] = _State(
        model,
        changes,
        settings,
        (STATIC / "page.html").read_text(encoding="utf-8"),
        guard if guard is not None else LoginGuard(),
    )
    app.router.add_get("/", _pit_page)
    app.router.add_get("/table/{table}", _table_page)
    app.router.add_get("/events", _events)
    app.router.add_get("/history/{table}", _history)
    app.router.add_get("/numbers/{table}", _numbers_page)  # the shift's numbers, drawn
    app.router.add_get("/stats/{table}", _stats)
    app.router.add_get("/days/{table}", _days)
    app.router.add_static("/static/", STATIC)
    app.on_shutdown.append(_close_streams)
    return app


# ---------------------------------------------------------------------- pages
async def _pit_page(request: web.Request) -> web.Response:
    return _page(request.app[_STATE], view="pit", table="", root="./")


async def _table_page(request: web.Request) -> web.Response:
    table = request.match_info["table"]
    if not valid_segment(table):
        raise web.HTTPNotFound(text="no such table id")
    return _page(request.app[_STATE], view="table", table=table, root="../")


async def _numbers_page(request: web.Request) -> web.Response:
    table = request.match_info["table"]
    if not valid_segment(table):
        raise web.HTTPNotFound(text="no such table id")
    return _page(request.app[_STATE], view="numbers", table=table, root="../")


async def _days(request: web.Request) -> web.Response:
    """The table's retained `<table>/days` as the display last received it."""
    days = request.app[_STATE].model.days.get(request.match_info["table"])
    if days is None:
        raise web.HTTPNotFound(text="no closed days for this table yet")
    return web.json_response(days, headers={"Cache-Control": "no-store"}, dumps=_dumps)


async def _stats(request: web.Request) -> web.Response:
    """The table's retained `<table>/stats` as the display last received it."""
    stats = request.app[_STATE].model.stats.get(request.match_info["table"])
    if stats is None:
        raise web.HTTPNotFound(text="no numbers for this table yet")
    return web.json_response(stats, headers={"Cache-Control": "no-store"}, dumps=_dumps)


def _page(state: _State, *, view: str, table: str, root: str) -> web.Response:
    # Relative to <base href>: the pages work behind a reverse proxy under any path.
    text = (
        state.page.replace("{root}", root)
        .replace("{view}", view)
        .replace("{table}", html.escape(table))
        .replace("{title}", html.escape(state.settings.title))
    )
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})


async def _history(request: web.Request) -> web.Response:
    state = request.app[_STATE]
    table = request.match_info["table"]
    if table not in state.model.tables:
        raise web.HTTPNotFound(text="no such table")
    return web.json_response(
        state.model.history(table), headers={"Cache-Control": "no-store"}, dumps=_dumps
    )


# ---------------------------------------------------------------------- the stream
async def _events(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    only = request.query.get("table")
    if only is not None and not valid_segment(only):
        raise web.HTTPBadRequest(text="table: not a table id")
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",  # nginx: pass each event on at once
        }
    )
    await response.prepare(request)
    model = state.model
    seen: int | None = None
    try:
        await response.write(f"retry: {RETRY_MS}\n\n".encode())
        while not state.closing.is_set():
            wake = state.changes.next()
            if seen != model.version:
                tables = (
                    list(model.tables) if seen is None else model.changed_since(seen)
                )  # every table on (re)connection, then what changed
                if only is not None:
                    tables = [t for t in tables if t == only]
                body = {
                    "broker": model.broker,
                    "tables": {table: model.view(table) for table in tables},
                }
                kind = "full" if seen is None else "update"
                seen = model.version
                await response.write(_event(kind, body))
                continue
            try:
                await asyncio.wait_for(wake.wait(), HEARTBEAT)
            except TimeoutError:
                await response.write(_event("beat", {"broker": model.broker}))
    except ConnectionResetError:  # the page went away
        pass
    return response


def _event(kind: str, body: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {_dumps(body)}\n\n".encode()


def _dumps(body: object) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


async def _close_streams(app: web.Application) -> None:
    """On shutdown, end every stream at once rather than after its next heartbeat."""
    state = app[_STATE]
    state.closing.set()
    state.changes.notify()


# ---------------------------------------------------------------------- middleware
@web.middleware
async def _security_headers(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(_SECURITY_HEADERS)
        raise
    if not response.prepared:  # a stream has sent its headers already: they are set there
        response.headers.update(_SECURITY_HEADERS)
    return response


@web.middleware
async def _login_required(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """HTTP Basic, slowed after wrong passwords (daemon/display/login_guard.py): a client
    that must wait gets 429 with Retry-After, and its password is not looked at."""
    state = request.app[_STATE]
    login = state.settings.login
    if login is None:
        return await handler(request)
    address = request.remote or "unknown"
    wait = state.guard.wait(address)
    if wait is not None:
        raise _too_many(address, wait)
    header = request.headers.get("Authorization")
    if header is None:  # no password tried yet: the browser asks the person for one
        raise _challenge()
    if not _authorised(header, login):
        failure = state.guard.failed(address)
        log.warning(
            "display.login_failed",
            address=address,
            failures=failure.failures,
            wait=round(failure.wait, 1),
        )
        raise _challenge()
    state.guard.succeeded(address)
    return await handler(request)


def _challenge() -> web.HTTPUnauthorized:
    return web.HTTPUnauthorized(
        headers={"WWW-Authenticate": 'Basic realm="shoe2mqtt display", charset="UTF-8"'}
    )


def _too_many(address: str, wait: Wait) -> web.HTTPTooManyRequests:
    seconds = max(1, math.ceil(wait.seconds))
    where = "at this display" if wait.overall else f"from {address}"
    if wait.first:  # once a wait, however many requests it refuses
        log.warning("display.login_waiting", address=address, seconds=seconds, overall=wait.overall)
    return web.HTTPTooManyRequests(
        headers={"Retry-After": str(seconds)},
        text=f"too many wrong passwords {where}: try again in {seconds} s\n",
    )


def _authorised(header: str | None, login: Login) -> bool:
    """RFC 7617: `Basic base64(user ":" password)`, the password after the first colon.

    Parsed here rather than by aiohttp's BasicAuth, which aiohttp 3.14 deprecates."""
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    # Both compared in constant time, and both always compared: no early exit to time.
    name_ok = hmac.compare_digest(user.encode(), login.username.encode())
    password_ok = hmac.compare_digest(password.encode(), login.password.reveal().encode())
    return bool(colon) and name_ok and password_ok
