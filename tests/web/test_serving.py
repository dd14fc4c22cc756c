"""The web parts on a real server: every answer carries the security headers, an error too;
a stream carries its own (its headers are sent before any middleware sees it), `retry:`
first, then its events as compact JSON, beyond-ASCII characters as they are."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from daemon.testing import free_port
from daemon.web.headers import security_headers
from daemon.web.site import serving, url_of
from daemon.web.stream import EventStream


async def _page(_request: web.Request) -> web.Response:
    return web.Response(text="a page")


async def _missing(_request: web.Request) -> web.Response:
    raise web.HTTPNotFound(text="no such page")


async def _stream(request: web.Request) -> web.StreamResponse:
    async with EventStream(request) as stream:
        await stream.send("full", {"table": "bj-1", "dealer": "Ana · 2"})
    return stream.response


async def test_answers_errors_and_streams_carry_their_headers() -> None:
    app = web.Application(
        middlewares=[security_headers(form_action="'self'", cache_control="no-store")]
    )
    app.router.add_get("/", _page)
    app.router.add_get("/missing", _missing)
    app.router.add_get("/events", _stream)
    port = free_port()
    async with serving(app, "127.0.0.1", port, None), aiohttp.ClientSession() as http:
        url = url_of("127.0.0.1", port, https=False)
        for path, status in (("", 200), ("missing", 404)):
            async with http.get(url + path) as answer:
                assert answer.status == status
                policy = answer.headers["Content-Security-Policy"]
                assert "default-src 'none'" in policy
                assert "form-action 'self'" in policy
                assert answer.headers["X-Content-Type-Options"] == "nosniff"
                assert answer.headers["Referrer-Policy"] == "no-referrer"
                assert answer.headers["Cache-Control"] == "no-store"
        async with http.get(url + "events") as events:
            assert events.headers["Content-Type"] == "text/event-stream"
            assert events.headers["Cache-Control"] == "no-store"
            text = (await events.read()).decode()
    assert text == ('retry: 1000\n\nevent: full\ndata: {"table":"bj-1","dealer":"Ana · 2"}\n\n')


@pytest.mark.parametrize(
    ("bind", "https", "url"),
    [
        ("127.0.0.1", False, "http://127.0.0.1:8080/"),
        ("0.0.0.0", True, "https://0.0.0.0:8080/"),  # noqa: S104 - a bind, not ours
        ("::1", False, "http://[::1]:8080/"),
    ],
)
def test_the_url_brackets_an_ipv6_address(bind: str, https: bool, url: str) -> None:  # noqa: FBT001 - pytest passes it
    assert url_of(bind, 8080, https=https) == url
