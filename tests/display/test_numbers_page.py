"""The shift's numbers in the browser: a tile's pace and bonus result in the pit view, and a
table's numbers page drawn in SVG by the page itself, whole again after a reload (from the
retained `<table>/stats`, not from what the page had seen). Real processes from one TOML
file (tests/display/floor.py) and Debian's Chromium."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing.floor import Pace, write_journal
from rules.config import TableConfig
from rules.games import WagerKind
from tests.daemon.pit import read_example, shoe_script
from tests.display.floor import running_floor

if TYPE_CHECKING:
    from daemon.testing import Mosquitto
    from tests.display.browser import Browser

pytestmark = pytest.mark.timeout(180)
PLAN: dict[int, dict[WagerKind, int]] = {
    seat: {WagerKind.BLACKJACK: 2500, WagerKind.TWENTY_POINT_BONUS: 500 * seat}
    for seat in (1, 2, 4, 6)
}


async def test_the_numbers_page_draws_the_shift_and_survives_a_reload(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    name = table["id"]
    keep = os.environ.get("SHOE2MQTT_SCREENSHOTS")
    tables: dict[str, tuple[dict[str, Any], str | None]] = {name: (table, shoe_script(events))}
    if keep:  # docs/display.md's picture: a table dealt from a shuffled shoe, many rounds
        # the seeded shoe deals eight Spanish decks: a six-deck table would find a foreign card
        tables["bj-2"] = ({**table, "id": "bj-2", "decks": 8}, None)
    async with running_floor(tmp_path, mosquitto, tables) as floor:
        browser.open(floor.url)
        await floor.play_log(name, events)
        tile = browser.until(
            lambda: browser.text(f"#table-{name} .shift .bonus"), "the tile's shift result"
        )
        pace = browser.text(f"#table-{name} .shift .pace")
        settled = [m.body for m in floor.on(name, "settlement") if m.body["result"] != "void"]
        browser.open(floor.url + f"numbers/{name}")
        browser.until(lambda: browser.all("svg.chart polyline.hold"), "the hold's chart")
        first = _page(browser)
        browser.driver.refresh()
        browser.until(lambda: browser.all("tr.round-row"), "the rounds after a reload")
        again = _page(browser)
        drawn = browser.script("return document.querySelectorAll('script[src*=\"//\"]').length")
        if keep:
            await floor.deal("bj-2")  # the burn card
            for _ in range(12):
                await floor.play_round("bj-2", PLAN, random.Random(len(floor.messages)))  # noqa: S311 - a test's players
            browser.open(floor.url + "numbers/bj-2", width=1920, height=1080)
            browser.until(lambda: len(browser.all("tr.round-row")) > 5, "the rounds")
            browser.screenshot(Path(keep) / "display-numbers-1920x1080.png")
    handle = sum(Decimal(s["stake"]) for s in settled)
    assert tile.startswith("twenty point bonus: house ")
    assert "hold" in tile
    assert "theory 24.7%" in tile
    assert pace.startswith("shift 1 round · ")
    assert first == again
    wager, rows, bars = first
    assert f"handle ${handle:,.2f}" in wager
    assert "theoretical 24.7%" in wager
    assert rows == [str(settled[0]["round"])]
    assert bars == 1
    assert drawn == 0  # nothing from elsewhere: the charts are the page's own SVG


async def test_the_numbers_page_draws_the_days_the_daemon_published_and_after_a_reload(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """Days gone by, written by the journal's own store (the oldest archived); the daemon
    counts the closed days at start and publishes `<table>/days`; the page draws each day's
    hold and pace as published, and again after a reload."""
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    name = table["id"]
    keep = os.environ.get("SHOE2MQTT_SCREENSHOTS")
    days, pace = (5, Pace(30, opens=18, hours=3)) if keep else (2, Pace(6, opens=18, hours=1))
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start -= timedelta(days=days + 1)
    config = TableConfig.from_mapping(table)

    async def journal(state: Path) -> None:
        await write_journal(state, [config], start, days, pace, keep_days=1)

    tables: dict[str, tuple[dict[str, Any], str | None]] = {name: (table, shoe_script(events))}
    async with running_floor(tmp_path, mosquitto, tables, journal=journal) as floor:
        topic = f"shoe2mqtt/{name}/days"
        published = (await floor.wait(lambda m: m.topic == topic, within=60)).body
        browser.open(floor.url + f"numbers/{name}")
        browser.until(lambda: browser.all("svg.days-hold circle.day-hold"), "the days' chart")
        first = _days(browser)
        browser.driver.refresh()
        browser.until(lambda: browser.all("svg.days-pace rect.bar"), "the days after a reload")
        again = _days(browser)
        if keep:
            browser.screenshot(Path(keep) / "display-numbers-days-1920x1080.png")
    expected = [
        (d["day"], w["hold"], f"{d['day'][5:]}={d['rounds_per_hour']}")
        for d in published["days"]
        for w in d["wagers"]
        if w["wager"] == "twenty_point_bonus"
    ]
    assert [d["day"] for d in published["days"]] == [
        (start + timedelta(days=i)).date().isoformat() for i in range(days)
    ]
    assert first == again
    holds, paces = first
    assert holds == [(day, hold) for day, hold, _ in expected]
    assert paces == [p for _, _, p in expected]


def _days(browser: Browser) -> tuple[list[tuple[str, float]], list[str]]:
    holds = browser.script(
        "return [...document.querySelectorAll('svg.days-hold circle.day-hold')]"
        ".map(c => [c.dataset.day, Number(c.dataset.hold)])"
    )
    paces = browser.script(
        "return [...document.querySelectorAll('svg.days-pace rect.bar')]"
        ".map(b => b.dataset.label + '=' + b.dataset.value)"
    )
    return [tuple(h) for h in holds], paces


def _page(browser: Browser) -> tuple[str, list[str], int]:
    wager = browser.text("p.wager[data-wager=twenty_point_bonus]")
    rows = browser.script(
        "return [...document.querySelectorAll('tr.round-row')].map(r => r.dataset.round)"
    )
    bars = len(browser.all("svg.pace rect.bar"))
    return wager, rows, bars
