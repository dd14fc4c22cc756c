"""The display's web side: two pages, their files, and one live stream of Server-Sent Events.

The page only listens (a display cannot move money). The stream's first event after every
(re)connection is `full`: every table the display knows, replacing what the page had; then
`update` events carry the tables changed since, as soon as a message changed them (an
update waits for nothing but the event loop); a `beat` every few seconds lets the page
notice a dead connection that never closed (daemon/web/stream.py).

What it shares with the dealer console (the headers, the files, the stream, the login
guard) is daemon/web/'s; its own are the pages, the tables' history and numbers, and the
login by HTTP Basic.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog
from aiohttp import web

from daemon.web.files import add_files
from daemon.web.headers import security_headers
from daemon.web.login_guard import LoginGuard
from daemon.web.stream import EventStream, dumps
from daemon.wire.topics import valid_segment

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from daemon.display.config import DisplaySettings, Login
    from daemon.display.model import PitModel
    from daemon.web.login_guard import Wait
    from daemon.web.stream import Changes

log = structlog.get_logger("display")

STATIC: Final = Path(__file__).parent / "static"


@dataclass(slots=True)
class _State:
    model: PitModel
    changes: Changes
    settings: DisplaySettings
    page: str
    guard: LoginGuard


_STATE: Final = web.AppKey("display", _State)


def build_app(
    model: PitModel,
    changes: Changes,
    settings: DisplaySettings,
    *,
    guard: LoginGuard | None = None,
) -> web.Application:
    """`guard`: who may try the login's password when (a test's own clock; one by default)."""
    app = web.Application(middlewares=[security_headers(form_action="'none'"), _login_required])
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
    add_files(app, STATIC)
    changes.end_streams_on_shutdown(app)
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
    return _retained(request, request.app[_STATE].model.days)


async def _stats(request: web.Request) -> web.Response:
    """The table's retained `<table>/stats` as the display last received it."""
    return _retained(request, request.app[_STATE].model.stats)


def _retained(request: web.Request, kept: Mapping[str, Any]) -> web.Response:
    """A table's state from `kept`, or `null` while a table the display knows has none yet
    (before its first round's end, its first closed day): an answer, not a 404 that every
    pit screen's console would show as an error. 404: a table the display has not seen."""
    table = request.match_info["table"]
    if table not in kept and table not in request.app[_STATE].model.tables:
        raise web.HTTPNotFound(text="no such table")
    return web.json_response(kept.get(table), headers={"Cache-Control": "no-store"}, dumps=dumps)


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
        state.model.history(table), headers={"Cache-Control": "no-store"}, dumps=dumps
    )


# ---------------------------------------------------------------------- the stream
async def _events(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    only = request.query.get("table")
    if only is not None and not valid_segment(only):
        raise web.HTTPBadRequest(text="table: not a table id")
    model = state.model
    seen: int | None = None
    async with EventStream(request) as stream:
        async for changed in state.changes.ticks():
            if not changed:
                await stream.send("beat", {"broker": model.broker})
            elif seen != model.version:
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
                await stream.send(kind, body)
    return stream.response


# ---------------------------------------------------------------------- middleware
@web.middleware
async def _login_required(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """HTTP Basic, slowed after wrong passwords (daemon/web/login_guard.py): a client
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
    seconds = wait.retry_after
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
