"""The display's web side over real HTTP: its pages, its stream, HTTPS and the login."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import aiomqtt
import pytest

from daemon.dealer_console.server import STATIC as CONSOLE_STATIC
from daemon.display.config import DisplayConfig, DisplaySettings, Login
from daemon.display.server import STATIC
from daemon.display.service import running_display
from daemon.mqtt.secret import Secret
from daemon.mqtt.settings import MqttSettings
from daemon.testing import free_port
from daemon.web.files import SHARED
from daemon.wire.availability import availability_payload
from tests.display.rounds import BASE, played

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from daemon.testing import Certificates, Mosquitto


@contextlib.asynccontextmanager
async def _display(broker: Mosquitto, **settings: Any) -> AsyncIterator[str]:
    config = DisplayConfig(
        Path("<test>"),
        MqttSettings(host=broker.host, port=broker.port, client_id="display-under-test"),
        DisplaySettings(port=free_port(), **settings),
    )
    async with running_display(config) as display, asyncio.TaskGroup() as group:
        following = group.create_task(display.follow(), name="display-broker")
        try:
            yield display.url
        finally:
            following.cancel()


async def _publish_a_round(broker: Mosquitto) -> None:
    """A finished blackjack round and its table online, as retained and live messages."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.publish(f"{BASE}/bridge/pc-a/state", b"online", qos=1, retain=True)
        await client.publish(
            f"{BASE}/bj-1/availability", availability_payload("online", "pc-a"), 1, retain=True
        )
        for message in played("blackjack-queen-of-hearts.jsonl"):
            await client.publish(message.topic, message.payload, qos=1, retain=message.retain)


async def _events(response: aiohttp.ClientResponse, count: int) -> list[tuple[str, Any]]:
    """The next `count` events of a stream, as (name, data)."""
    events: list[tuple[str, Any]] = []
    async with asyncio.timeout(10):
        while len(events) < count:
            block = (await response.content.readuntil(b"\n\n")).decode()
            fields = dict(line.split(": ", 1) for line in block.strip().splitlines())
            if "event" in fields:
                events.append((fields["event"], json.loads(fields["data"])))
    return events


async def test_the_pages_and_the_stream(mosquitto: Mosquitto) -> None:
    await _publish_a_round(mosquitto)
    async with _display(mosquitto, title="Pit <A>") as url, aiohttp.ClientSession() as http:
        async with http.get(url) as page:
            assert page.status == 200
            html = await page.text()
            assert "<title>Pit &lt;A&gt;</title>" in html  # the title is text, never markup
            assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")
            assert page.headers["X-Content-Type-Options"] == "nosniff"
        async with http.get(f"{url}table/bj-1") as page:
            assert 'data-table="bj-1"' in await page.text()
        async with http.get(f"{url}table/BJ 1") as page:
            assert page.status == 404
        async with http.get(f"{url}static/display.js") as script:
            assert script.status == 200
        async with http.get(f"{url}events?table=bj-1") as stream:
            [(kind, full)] = await _events(stream, 1)
            assert kind == "full"
            table = full["tables"].get("bj-1")
            while table is None or len(table["settlements"]) < 3:  # the retained messages
                [(kind, update)] = await _events(stream, 1)
                table = update["tables"].get("bj-1", table)
            assert set(update["tables"]) <= {"bj-1"}
            assert table["live"] is True
        async with http.get(f"{url}events?table=../x") as stream:
            assert stream.status == 400
        async with http.get(f"{url}history/bj-1") as history:
            assert await history.json() == []  # the round is the current one still
        async with http.get(f"{url}history/bj-9") as history:
            assert history.status == 404
        for state in ("stats", "days"):  # none yet: an answer, not an error in the console
            async with http.get(f"{url}{state}/bj-1") as known:
                assert (known.status, await known.json()) == (200, None)
            async with http.get(f"{url}{state}/bj-9") as unknown:
                assert unknown.status == 404


async def test_a_change_reaches_an_open_stream_as_an_update(mosquitto: Mosquitto) -> None:
    async with (
        _display(mosquitto) as url,
        aiohttp.ClientSession() as http,
        http.get(f"{url}events") as stream,
    ):
        [(kind, full)] = await _events(stream, 1)
        assert (kind, full["tables"]) == ("full", {})
        await _publish_a_round(mosquitto)
        tables: dict[str, Any] = {}
        while "bj-1" not in tables:
            [(kind, update)] = await _events(stream, 1)
            assert kind == "update"
            tables = update["tables"]


async def test_a_login_guards_every_page_and_the_stream(mosquitto: Mosquitto) -> None:
    login = Login("pit", Secret("s3cret"))
    async with _display(mosquitto, login=login) as url, aiohttp.ClientSession() as http:
        for path in ("", "table/bj-1", "events", "static/display.js"):
            async with http.get(url + path) as refused:
                assert refused.status == 401
                assert refused.headers["WWW-Authenticate"].startswith('Basic realm="shoe2mqtt')
            wrong = {"Authorization": aiohttp.encode_basic_auth("pit", "guess")}
            async with http.get(url + path, headers=wrong) as refused:
                assert refused.status == 401
        right = {"Authorization": aiohttp.encode_basic_auth("pit", "s3cret")}
        async with http.get(url, headers=right) as allowed:
            assert allowed.status == 200
        async with http.get(f"{url}static/display.js", headers=right) as allowed:
            assert allowed.status == 200


async def test_https_serves_with_the_sites_certificate(
    mosquitto: Mosquitto, certificates: Certificates
) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates.server_cert, certificates.server_key)
    async with _display(mosquitto, https=context) as url, aiohttp.ClientSession() as http:
        assert url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=certificates.ca)
        async with http.get(url, ssl=trusting) as page:
            assert page.status == 200
        with pytest.raises(aiohttp.ClientError):
            async with http.get(url.replace("https://", "http://")) as plain:
                await plain.read()


_SVG_NAMESPACE = 'xmlns="http://www.w3.org/2000/svg"'


async def test_the_page_names_an_icon_the_display_serves(mosquitto: Mosquitto) -> None:
    """Else every browser asks for `/favicon.ico` and logs its 404 on every pit screen."""
    async with _display(mosquitto) as url, aiohttp.ClientSession() as http:
        async with http.get(url) as page:
            icon = re.search(r'<link rel="icon" href="([^"]+)"', await page.text())
        assert icon is not None
        async with http.get(url + icon[1]) as served:
            assert (served.status, served.content_type) == (200, "image/svg+xml")


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """Self-contained for a casino's closed network: no CDN, no font service, no address;
    the display's files, the console's and the look they share."""
    folders = (STATIC, CONSOLE_STATIC, SHARED)
    for path in sorted(path for folder in folders for path in folder.iterdir()):
        # An SVG names its namespace by a URI, which nothing fetches.
        text = path.read_text(encoding="utf-8").replace(_SVG_NAMESPACE, "")
        for outside in ("http://", "https://", "//cdn", "@import", "fonts.googleapis"):
            assert outside not in text, (path.name, outside)
