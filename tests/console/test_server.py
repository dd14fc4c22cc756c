"""The console's web side without a browser (daemon/dealer_console/server.py): who may send,
what a request must look like, the login's slowing and its cookie."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from aiohttp.test_utils import TestClient, TestServer

from daemon.dealer_console.config import ConsoleSettings
from daemon.dealer_console.contract import Contract
from daemon.dealer_console.link import ConsoleLink
from daemon.dealer_console.server import COOKIE, build_app
from daemon.dealer_console.service import plain_http_warning
from daemon.display.model import PitModel
from daemon.mqtt.secret import Secret
from daemon.mqtt.settings import MqttSettings
from daemon.web.login_guard import LoginGuard
from daemon.web.stream import Changes
from rules.config import TableConfig
from tests.console.table import blackjack

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from typing import TypeAlias

    from aiohttp.web import Application, Request

    Client: TypeAlias = TestClient[Request, Application]

PIN = "2580"


def _app(now: list[float]) -> Application:
    settings = ConsoleSettings(
        TableConfig.from_mapping(blackjack("bj-1")), {"ann": Secret(PIN)}, (500, 2500)
    )
    changes = Changes()
    link = ConsoleLink(
        MqttSettings.from_mapping({"host": "127.0.0.1"}),
        "bj-1",
        PitModel(only_table="bj-1"),
        Contract("c"),
        changes.notify,
    )  # never connected: what it is asked to send finds no broker
    clock = lambda: now[0]  # noqa: E731 - the test's clock
    return build_app(settings, link, changes, guard=LoginGuard(clock=clock), clock=clock)


async def _client(now: list[float]) -> AsyncIterator[Client]:
    async with TestClient(TestServer(_app(now))) as client:
        yield client


async def _login(client: Client, pin: str = PIN, **headers: str) -> int:
    response = await client.post(
        "/login", data={"dealer": "ann", "pin": pin}, allow_redirects=False, headers=headers
    )
    return response.status


async def test_nothing_is_sent_without_a_session_and_the_page_asks_for_one() -> None:
    async for client in _client([0.0]):
        page = await client.get("/", allow_redirects=False)
        assert (page.status, page.headers["Location"]) == (303, "login")
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        sent = await client.post("/request/wager", json={"seat": 1})
        assert sent.status == 401
        assert (await client.get("/events")).status == 401


async def test_the_login_page_names_an_icon_the_server_has() -> None:
    """Before any session: else the browser asks for `/favicon.ico` and shows its 404."""
    async for client in _client([0.0]):
        page = await (await client.get("/login")).text()
        icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
        assert icon is not None, page
        served = await client.get(f"/{icon[1]}")
        assert served.status == 200
        assert (await served.text()).startswith("<svg")


async def test_a_dealer_s_request_is_json_to_a_known_command_and_says_when_nothing_was_sent(
) -> None:  # fmt: skip
    async for client in _client([0.0]):
        assert await _login(client) == 303
        form = await client.post("/request/wager", data={"seat": "1"})
        assert form.status == 415  # another site's form cannot send one
        assert (await client.post("/request/pay_me", json={})).status == 404
        offline = await (await client.post("/request/close_betting", json={})).json()
        assert offline["status"] == "offline"
        assert "nothing was sent" in offline["message"]
        out = await client.post("/logout", allow_redirects=False)
        assert out.status == 303
        assert (await client.post("/request/status", json={})).status == 401


async def test_wrong_pins_are_slowed_per_address_and_even_a_right_one_waits() -> None:
    now = [0.0]
    async for client in _client(now):
        statuses = [await _login(client, "0000") for _ in range(5)]
        waiting = await client.post("/login", data={"dealer": "ann", "pin": PIN})
        text = await waiting.text()
        now[0] += 1.01
        right = await _login(client)
    assert statuses == [401] * 5
    assert (waiting.status, waiting.headers["Retry-After"]) == (429, "1")
    assert "Too many wrong PINs: try again in 1 s." in text
    assert right == 303


async def test_the_cookie_is_secure_behind_a_tls_proxy_on_this_pc() -> None:
    async for client in _client([0.0]):
        response = await client.post(
            "/login",
            data={"dealer": "ann", "pin": PIN},
            allow_redirects=False,
            headers={"X-Forwarded-Proto": "https"},
        )
        cookie = response.cookies[COOKIE]
    assert cookie["secure"] is True
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Strict"


def test_plain_http_beyond_this_pc_is_warned_of() -> None:
    assert plain_http_warning("127.0.0.1", https=False) is None
    assert plain_http_warning("0.0.0.0", https=True) is None  # noqa: S104 - a bind, not ours
    warning = plain_http_warning("0.0.0.0", https=False)  # noqa: S104 - a bind, not ours
    assert warning is not None
    assert "PINs and sessions cross that network in clear" in warning
