"""The console's web side: a login, one page, its live stream, and the requests it sends.

- `GET /login`, `POST /login`: a dealer's name and PIN (or password), slowed after wrong ones
  by the login guard the display's has too (daemon/web/login_guard.py); a right one gets a
  session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
  Secure when the page is served over TLS (by this server, or by a proxy on this PC that
  says so with `X-Forwarded-Proto: https`). `POST /logout` ends the session.
- `GET /`: the page (the login's, without a session); `GET /events`: Server-Sent Events,
  `full` on (re)connection then `update` when anything changed, `beat` every 5 s, as the
  display's stream.
- `POST /request/<command>`, `POST /again/<transaction>`, `POST /forget/<transaction>`:
  what the dealer tapped; JSON in and out, from this page only (a JSON content type and
  the cookie, which no other site's page sends).

What it shares with the pit display (the headers, the files and their look, the stream, the
login guard) is daemon/web/'s; its own are the dealers' sessions and the requests.
"""

from __future__ import annotations

import hmac
import html
import ipaddress
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog
from aiohttp import web

from daemon.dealer_console import view
from daemon.dealer_console.contract import NotYet
from daemon.dealer_console.link import NotConnected
from daemon.web.files import add_files
from daemon.web.headers import security_headers
from daemon.web.login_guard import LoginGuard
from daemon.web.stream import EventStream

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.dealer_console.config import ConsoleSettings
    from daemon.dealer_console.contract import Sent
    from daemon.dealer_console.link import ConsoleLink
    from daemon.web.stream import Changes

log = structlog.get_logger("console")

STATIC: Final = Path(__file__).parent / "static"
COOKIE: Final = "shoe2mqtt_console"
SESSION_SECONDS: Final = 12 * 3600.0  # a dealer's shift and then some; logging out ends it
MAX_SESSIONS: Final = 64
# What each command may carry from the page; the daemon judges the values.
FIELDS: Final = {
    "wager": {"seat", "kind", "amount"},
    "withdraw": {"seat", "kind"},
    "close_betting": set(),
    "action": {"seat", "action", "hand"},
    "card": {"card"},
    "resume": {"discard", "burned"},
    "void": {"reason"},
    "shuffle": set(),
    "status": set(),
}
_NOBODY: Final = "\x00"  # compared against when the name is unknown: the same work either way


@dataclass(slots=True)
class _Session:
    dealer: str
    expires: float


@dataclass(slots=True)
class _State:
    settings: ConsoleSettings
    link: ConsoleLink
    changes: Changes
    guard: LoginGuard
    clock: Callable[[], float]
    sessions: dict[str, _Session] = field(default_factory=dict)

    def dealer_of(self, request: web.Request) -> str | None:
        token = request.cookies.get(COOKIE)
        session = self.sessions.get(token) if token else None
        if session is None or session.expires < self.clock():
            return None
        return session.dealer


_STATE: Final = web.AppKey("console", _State)


def build_app(
    settings: ConsoleSettings,
    link: ConsoleLink,
    changes: Changes,
    *,
    guard: LoginGuard | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> web.Application:
    # The login's form posts to this server; no answer is kept by a browser or a proxy.
    app = web.Application(
        middlewares=[security_headers(form_action="'self'", cache_control="no-store")]
    )
    app[_STATE] = _State(settings, link, changes, guard or LoginGuard(clock=clock), clock)
    app.router.add_get("/", _page)
    app.router.add_get("/login", _login_page)
    app.router.add_post("/login", _login)
    app.router.add_post("/logout", _logout)
    app.router.add_get("/events", _events)
    app.router.add_post("/request/{command}", _request)
    app.router.add_post("/again/{transaction}", _again)
    app.router.add_post("/forget/{transaction}", _forget)
    add_files(app, STATIC)
    changes.end_streams_on_shutdown(app)
    return app


# ---------------------------------------------------------------------- pages
def _html(name: str, state: _State, **values: str) -> str:
    text = (STATIC / name).read_text(encoding="utf-8")
    table = state.settings.table
    values = {"table": table.table_id, **values}
    for key, value in values.items():
        text = text.replace("{" + key + "}", html.escape(value))
    return text


async def _page(request: web.Request) -> web.Response:
    state = request.app[_STATE]
    if state.dealer_of(request) is None:
        raise web.HTTPSeeOther("login")
    return web.Response(text=_html("console.html", state), content_type="text/html")


async def _login_page(
    request: web.Request, *, message: str = "", status: int = 200
) -> web.Response:
    state = request.app[_STATE]
    options = "".join(
        f'<option value="{html.escape(name)}">{html.escape(name)}</option>'
        for name in sorted(state.settings.dealers)
    )
    text = _html("login.html", state, message=message).replace("{dealers}", options)
    return web.Response(text=text, content_type="text/html", status=status)


async def _login(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    address = request.remote or "unknown"
    wait = state.guard.wait(address)
    if wait is not None:
        seconds = wait.retry_after
        if wait.first:
            log.warning("console.login_waiting", address=address, seconds=seconds)
        response = await _login_page(
            request, message=f"Too many wrong PINs: try again in {seconds} s.", status=429
        )
        response.headers["Retry-After"] = str(seconds)
        return response
    form = await request.post()
    dealer, secret = str(form.get("dealer", "")), str(form.get("pin", ""))
    known = state.settings.dealers.get(dealer)
    expected = known.reveal() if known is not None else _NOBODY
    if known is None or not hmac.compare_digest(secret.encode(), expected.encode()):
        failure = state.guard.failed(address)
        log.warning("console.login_failed", address=address, failures=failure.failures)
        return await _login_page(request, message="Wrong name or PIN.", status=401)
    state.guard.succeeded(address)
    token = secrets.token_urlsafe(32)
    state.sessions[token] = _Session(dealer, state.clock() + SESSION_SECONDS)
    while len(state.sessions) > MAX_SESSIONS:
        del state.sessions[next(iter(state.sessions))]
    log.info("console.login", dealer=dealer, address=address)
    response = web.HTTPSeeOther("./")
    response.set_cookie(
        COOKIE,
        token,
        httponly=True,
        samesite="Strict",
        secure=_over_tls(request),
        path=request.url.path.removesuffix("login") or "/",
        max_age=int(SESSION_SECONDS),
    )
    raise response


def _over_tls(request: web.Request) -> bool:
    """Served over TLS: by this server, or by a reverse proxy on this PC that says so."""
    if request.secure:
        return True
    try:
        local = ipaddress.ip_address(request.remote or "").is_loopback
    except ValueError:
        local = False
    return local and request.headers.get("X-Forwarded-Proto") == "https"


async def _logout(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    token = request.cookies.get(COOKIE)
    if token:
        session = state.sessions.pop(token, None)
        if session is not None:
            log.info("console.logout", dealer=session.dealer)
    response = web.HTTPSeeOther("login")
    response.del_cookie(COOKIE, path=request.url.path.removesuffix("logout") or "/")
    raise response


# ---------------------------------------------------------------------- the stream
async def _events(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    dealer = state.dealer_of(request)
    if dealer is None:
        raise web.HTTPUnauthorized(text="log in first")
    settings = state.settings
    full = True  # the first event: what the page is set up with, then the table now
    async with EventStream(request) as stream:
        async for changed in state.changes.ticks():
            if full:
                full = False
                setup = view.setup(settings.table, settings.chips, dealer)
                await stream.send("full", {"setup": setup, **_now(state)})
            elif changed:
                await stream.send("update", _now(state))
            elif state.dealer_of(request) is None:  # the session ended: the page logs in again
                await stream.send("logout", {})
                break
            else:
                await stream.send("beat", {"broker": state.link.model.broker})
    return stream.response


def _now(state: _State) -> dict[str, Any]:
    link = state.link
    table = state.settings.table.table_id
    return view.state(link.model, table, link.contract, linked=link.connected)


# ---------------------------------------------------------------------- requests
async def _dealer_json(request: web.Request) -> tuple[_State, str, dict[str, Any]]:
    state = request.app[_STATE]
    dealer = state.dealer_of(request)
    if dealer is None:
        raise web.HTTPUnauthorized(text="log in first")
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(text="JSON only")
    try:
        body = await request.json() if request.can_read_body else {}
    except ValueError:
        raise web.HTTPBadRequest(text="not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="a JSON object")
    return state, dealer, body


async def _request(request: web.Request) -> web.Response:
    state, dealer, body = await _dealer_json(request)
    command = request.match_info["command"]
    allowed = FIELDS.get(command)
    if allowed is None:
        raise web.HTTPNotFound(text="no such command")
    fields = {k: v for k, v in body.items() if k in allowed}
    try:
        sent = await state.link.send(command, fields, dealer)
        if sent.answer is None and command in ("action", "card"):
            # The contract: before an action or a card goes again, ask the table's status.
            await state.link.send("status", {}, dealer)
    except NotConnected:
        return _outcome_offline()
    return _outcome(sent)


async def _again(request: web.Request) -> web.Response:
    state, _, _ = await _dealer_json(request)
    try:
        sent = await state.link.again(request.match_info["transaction"])
    except NotConnected:
        return _outcome_offline()
    except KeyError:
        raise web.HTTPNotFound(text="no such request") from None
    except NotYet as exc:
        return web.json_response({"status": "not_yet", "message": str(exc)})
    return _outcome(sent)


async def _forget(request: web.Request) -> web.Response:
    state, _, _ = await _dealer_json(request)
    state.link.contract.forget(request.match_info["transaction"])
    state.changes.notify()
    return web.json_response({"status": "ok"})


def _outcome(sent: Sent) -> web.Response:
    answer = sent.answer
    if answer is None:
        return web.json_response(
            {
                "status": "unanswered",
                "transaction": sent.transaction,
                "message": f"{view.request_words(sent)}: the table has not answered",
            }
        )
    result: dict[str, Any] = {"status": answer.get("status"), "transaction": sent.transaction}
    error = answer.get("error")
    if isinstance(error, dict):
        result["code"] = error.get("code")
        result["message"] = f"{view.request_words(sent)}: {error.get('message')}"
    else:
        result["data"] = answer.get("data")
    return web.json_response(result)


def _outcome_offline() -> web.Response:
    return web.json_response(
        {
            "status": "offline",
            "message": "the console has no connection to the broker: nothing was sent; "
            "do not deal, and wait until the top corner says live",
        }
    )
