"""The shift's numbers in the browser: a tile's pace and bonus result in the pit view, and a
table's numbers page drawn in SVG by the page itself, whole again after a reload (from the
retained `<table>/stats`, not from what the page had seen). Real processes from one TOML
file (tests/display/floor.py) and Debian's Chromium."""

from __future__ import annotations

import os
import random
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

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
        tables["bj-2"] = ({**table, "id": "bj-2"}, None)
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
    assert pace.startswith("shift 1 rounds")
    assert first == again
    wager, rows, bars = first
    assert f"handle ${handle:,.2f}" in wager
    assert "theoretical 24.7%" in wager
    assert rows == [str(settled[0]["round"])]
    assert bars == 1
    assert drawn == 0  # nothing from elsewhere: the charts are the page's own SVG


def _page(browser: Browser) -> tuple[str, list[str], int]:
    wager = browser.text("p.wager[data-wager=twenty_point_bonus]")
    rows = browser.script(
        "return [...document.querySelectorAll('tr.round-row')].map(r => r.dataset.round)"
    )
    bars = len(browser.all("svg.pace rect.bar"))
    return wager, rows, bars
