"""The display in a real browser: a headless Chromium on the pages of a running pit.

The daemon deals through emulated shoes on a real mosquitto, the display serves the pages,
both started from one configuration file as a user starts them; the browser is Debian's
Chromium, one for the module. Each test reads the page as a person would (the DOM) and, for
the hole card, every event the page received too.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import signal
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from daemon.display.table_model import ROUND_NOTICES
from daemon.display.views import NOTICE_TEXT
from daemon.display.wording import settlement_text
from daemon.request_gate import AUTOMATED_CONSOLE
from daemon.wire.availability import Availability
from tests.daemon.pit import shoe_script
from tests.display.floor import NODE, Floor, running_floor
from tests.display.rounds import (
    ALL_ATTACKS_7,
    DEALER_STANDS_ON_TWO,
    DOUBLE_ATTACK_1,
    TRIPLE_ATTACK_7,
    example,
    expected_settlements,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.testing import Mosquitto, Received
    from tests.display.browser import Browser

# Started processes, a browser and whole rounds: more than the suite's default minute.
pytestmark = pytest.mark.timeout(120)

ROUNDS_TIMED = 2  # seven-seat rounds whose settlements' latencies are held together
LATENCY_GOAL_MS = 100.0  # docs/display.md: on the page within 100 ms of reaching the display


def _log_table(name: str) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    table, events, _ = example(name)
    return table["id"], table, events


def _key(settlement: dict[str, Any]) -> str:
    return "-".join(str(settlement.get(k)) for k in ("round", "seat", "hand", "wager"))


def _latencies(floor: Floor, browser: Browser, table: str) -> list[float]:
    """Milliseconds from each settlement reaching the test's subscriber on the broker (as it
    reaches the display's) to its line appearing in the page."""
    seen = browser.first_seen()
    return [seen[_key(body)] - at for body, at in floor.settlements(table)]


def _report(what: str, latencies: list[float]) -> None:
    print(  # noqa: T201 - the figure the issue asks the test to print
        f"\n{what}: MQTT message to DOM update over {len(latencies)} settlements: "
        f"median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms "
        f"(goal {LATENCY_GOAL_MS:.0f} ms)"
    )


@pytest.mark.serial  # a latency figure: measured alone (scripts/test)
async def test_settlements_appear_in_order_with_their_amounts_and_a_floorperson_stands_out(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    table, settings, events = _log_table("blackjack-queen-of-hearts.jsonl")
    async with running_floor(
        tmp_path, mosquitto, {table: (settings, shoe_script(events))}
    ) as floor:
        browser.open(floor.url)
        await floor.play_log(table, events)
        expected = [
            settlement_text(s) for s in expected_settlements("blackjack-queen-of-hearts.jsonl")
        ]
        await _until(lambda: browser.settlements(table) == expected, browser, "the settlements")
        latencies = _latencies(floor, browser, table)
        # The floorperson's settlement and the call itself, in colour and in words.
        highlighted = browser.script(
            "const line = document.querySelector(arguments[0] + ' .settlement.floor');"
            "const alert = document.querySelector(arguments[0] + ' .alert.floor');"
            "const normal = document.querySelector(arguments[0] + ' .settlement:not(.floor)');"
            "const bg = (e) => getComputedStyle(e).backgroundColor;"
            "return [line.dataset.text, line.innerText, alert.innerText, bg(line), bg(alert),"
            " bg(normal)]",
            f"#table-{table}",
        )
    assert expected[1] == "seat 3 — 20 point bonus, suited 20, 9 to 1: pay $225.00"
    text, shown, alert, line_colour, alert_colour, normal_colour = highlighted
    assert text == expected[2]
    assert "FLOORPERSON" in shown
    assert alert.startswith("FLOORPERSON ")
    assert normal_colour != line_colour
    assert alert_colour not in (normal_colour, "rgba(0, 0, 0, 0)")
    _report("blackjack", latencies)
    assert max(latencies) < LATENCY_GOAL_MS


async def test_no_hole_card_in_the_page_nor_in_anything_it_received_before_the_reveal(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """Triple Attack's dealer hole card QC is the round's only queen of clubs."""
    table, settings, events = _log_table("triple-attack-dealer-22.jsonl")
    hidden = ("QC", "Q♣")
    async with running_floor(
        tmp_path, mosquitto, {table: (settings, shoe_script(events))}
    ) as floor:
        played = 6  # mid-round: the page opened now must show the round at once
        await floor.play_log(table, events[:played])
        browser.open(f"{floor.url}table/{table}")
        received: list[tuple[str, str]] = []
        for event in events[played:]:
            await _caught_up(floor, browser, table)
            received += browser.received()
            assert not any(h in browser.html() for h in hidden)
            assert not any("QC" in data for _, data in received), received
            await floor.play_log(table, [event])
            if any(m.topic.endswith("/event/hole_card_revealed") for m in floor.messages):
                break
        else:
            pytest.fail("the hole card was never revealed")
        # The check can fail: once face up, the queen of clubs is on the page.
        await _until(lambda: "Q♣" in browser.html(), browser, "the revealed hole card")
    assert any("QC" in data for _, data in browser.received())


# Every time the table's part of the page changes: how many settlements it lists, and how
# many of the dealer's cards it shows face down (the page draws once a frame).
_WATCH_THE_HOLE_CARD = """
window.__moments = [];
const box = () => document.querySelector(arguments[0]);
const moment = () => {
  const table = box();
  if (!table) return;
  window.__moments.push([
    table.querySelectorAll('.settlements > .settlement').length,
    table.querySelectorAll('.dealer .card.down').length,
  ]);
};
new MutationObserver(moment).observe(document.getElementById('main'),
  {childList: true, subtree: true, characterData: true});
moment();
"""


async def test_the_hole_card_is_face_up_in_every_view_that_lists_a_settlement(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """The dealer stands on two cards: the daemon publishes `hole_card_revealed`, then the
    optional bonus wagers' settlements (26.6(d)1), then the round state. Every rendering of
    the table that lists a settlement shows the hole card face up, and so does every view
    the page received over its stream; a face-down hole card was on the page before."""
    table = DOUBLE_ATTACK_1["id"]
    script = shoe_script(DEALER_STANDS_ON_TWO)
    async with running_floor(tmp_path, mosquitto, {table: (DOUBLE_ATTACK_1, script)}) as floor:
        browser.open(f"{floor.url}table/{table}")
        browser.script(_WATCH_THE_HOLE_CARD, f"#table-{table}")
        await floor.play_log(table, DEALER_STANDS_ON_TWO)
        await _until(lambda: len(browser.settlements(table)) == 2, browser, "the settlements")
        moments: list[list[int]] = browser.script("return window.__moments")
        received = browser.received()
    assert [m for m in moments if m[0] and m[1]] == []  # settlements beside a face-down card
    assert any(down for _, down in moments)  # the hole card was face down on the page first
    assert any(settled for settled, _ in moments)
    views = [
        view
        for name, data in received
        if name in ("full", "update")
        for tid, view in json.loads(data)["tables"].items()
        if tid == table and view["round"] is not None
    ]
    listing = [v for v in views if v["settlements"]]
    assert listing
    assert [v for v in listing if None in v["round"]["dealer"]["cards"]] == []
    assert {s["phase"] for v in listing for s in v["settlements"]} == {"dealer_two_cards"}


async def test_no_view_asks_the_server_for_what_it_has_not(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """The pit view, a table's and its numbers page: every file each loads is served (a
    browser asks for `/favicon.ico` unless the page names its icon, and the 404 is an error
    in its console on every pit screen)."""
    table, settings, events = _log_table("blackjack-queen-of-hearts.jsonl")
    async with running_floor(
        tmp_path, mosquitto, {table: (settings, shoe_script(events))}
    ) as floor:
        browser.refused.clear()
        for path in ("", f"table/{table}", f"numbers/{table}"):
            browser.open(floor.url + path)
            browser.until(
                lambda: browser.script("return document.readyState") == "complete", "the load"
            )
            await asyncio.sleep(0.5)  # a favicon is asked for after the load
            browser.received()
    assert browser.refused == []


async def test_a_killed_daemon_turns_its_tables_offline(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    bj, bj_settings, bj_events = _log_table("blackjack-queen-of-hearts.jsonl")
    da, da_settings, da_events = _log_table("double-attack-three-eights.jsonl")
    tables = {bj: (bj_settings, shoe_script(bj_events)), da: (da_settings, shoe_script(da_events))}
    async with running_floor(tmp_path, mosquitto, tables) as floor:
        browser.open(floor.url)
        # Once the page has drawn its tables (a fresh-clone run read it before, and found none).
        await _until(
            lambda: browser.texts(".table .badge") == ["LIVE", "LIVE"], browser, "both tables live"
        )
        assert await floor.stop("daemon", signal.SIGKILL) == -signal.SIGKILL
        await _until(
            lambda: browser.texts(".table .badge") == ["OFFLINE", "OFFLINE"],
            browser,
            "both tables offline",
        )
        assert browser.texts(".alert.offline") == [f"OFFLINE daemon {NODE} is gone"] * 2
        await floor.start_daemon()  # back: live again, without touching the page
        await _until(
            lambda: browser.texts(".table .badge") == ["LIVE", "LIVE"],
            browser,
            "both tables live again",
        )


async def test_a_table_another_daemon_claims_is_contested_then_live_again(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """A second daemon (here the test's client, as node `lab-pc`) claims the table: the real
    daemon says `conflict`, and the page shows CONTESTED with both nodes, never OFFLINE; when
    the other's bridge goes offline the daemon takes the table back and the page says LIVE."""
    table, settings, events = _log_table("double-attack-three-eights.jsonl")
    async with running_floor(
        tmp_path, mosquitto, {table: (settings, shoe_script(events))}
    ) as floor:
        browser.open(floor.url)
        await _until(lambda: browser.text(".badge") == "LIVE", browser, "the table live")
        other = Availability("online", "lab-pc").payload()
        await floor.client.publish("shoe2mqtt/bridge/lab-pc/state", b"online", qos=1, retain=True)
        await floor.client.publish(f"shoe2mqtt/{table}/availability", other, qos=1, retain=True)
        await _until(lambda: browser.text(".badge") == "CONTESTED", browser, "the table contested")
        assert browser.texts(".alert.contested") == [
            f"CONTESTED claimed by two daemons at once: lab-pc and {NODE}"
        ]
        assert browser.texts(".alert.offline") == []
        await floor.client.publish("shoe2mqtt/bridge/lab-pc/state", b"offline", qos=1, retain=True)
        await _until(lambda: browser.text(".badge") == "LIVE", browser, "the table live again")


async def test_broker_and_display_restarts_are_survived_without_a_reload(
    tmp_path: Path, persistent_mosquitto: Mosquitto, browser: Browser
) -> None:
    table, settings, events = _log_table("double-attack-three-eights.jsonl")
    script = shoe_script(events)
    async with running_floor(tmp_path, persistent_mosquitto, {table: (settings, script)}) as floor:
        browser.open(floor.url)
        browser.script("window.sameLoad = 'yes'")
        persistent_mosquitto.stop()
        # The page may show the table OFFLINE a moment before the display's link says it lost
        # the broker (two updates of the page, seen once in that order): wait for both.
        await _until(
            lambda: (
                browser.text(".badge") == "OFFLINE" and "lost the broker" in browser.text("#link")
            ),
            browser,
            "the table offline and the display without its broker",
        )
        persistent_mosquitto.start()
        await floor.connect_console()  # the test's own console does not reconnect by itself
        await _until(lambda: browser.text(".badge") == "LIVE", browser, "the table live again")
        assert await floor.stop("display") == 0
        await _until(lambda: "unreachable" in browser.text("#link"), browser, "the page alone")
        assert browser.text(".badge") == "OFFLINE"  # it cannot know, so it does not claim
        await floor.start_display()
        await _until(lambda: browser.text(".badge") == "LIVE", browser, "the table live again")
        await floor.play_log(table, events)
        expected = [
            settlement_text(s) for s in expected_settlements("double-attack-three-eights.jsonl")
        ]
        await _until(lambda: browser.settlements(table) == expected, browser, "the settlements")
        assert browser.script("return window.sameLoad") == "yes"  # never reloaded


async def _seven_seats_shown(floor: Floor, browser: Browser, players: random.Random) -> list[str]:
    """A round of seven seats of Triple Attack, until the page shows its every settlement;
    the lines the page shows."""
    before = len(floor.settlements("ta-1"))
    await floor.play_round("ta-1", ALL_ATTACKS_7, players)
    settled = [body for body, _ in floor.settlements("ta-1")[before:]]
    delivered = [settlement_text(body) for body in settled]
    await _until(lambda: browser.settlements("ta-1") == delivered, browser, "every line")
    assert len(delivered) == 21  # seven seats, three attacks each, each settled once
    assert len({body["seat"] for body in settled}) == 7
    return delivered


@pytest.mark.serial  # a latency figure: measured alone (scripts/test)
async def test_seven_seats_of_triple_attack_settlements_are_all_shown(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    players = random.Random(5)  # noqa: S311 - a test's players
    async with running_floor(tmp_path, mosquitto, {"ta-1": (TRIPLE_ATTACK_7, None)}) as floor:
        browser.open(floor.url)
        await floor.deal("ta-1")  # the shoe's shuffle and burn card
        for _ in range(ROUNDS_TIMED):
            delivered = await _seven_seats_shown(floor, browser, players)
        latencies = _latencies(floor, browser, "ta-1")
        # A page opened after the round shows it all at once, from the retained snapshot.
        browser.open(f"{floor.url}table/ta-1", width=1280, height=800)
        assert browser.settlements("ta-1") == delivered
    _report("triple attack, seven seats", latencies)
    # A round's end arrives as one burst and is drawn at once (median and max within 2 ms of
    # each other): 34-66 ms over 8 quiet runs, against 50-102 before the burst woke the page
    # once and the fit stopped trying every size (docs/display.md). A loaded machine (CI's)
    # has doubled it, so the tail is held to twice the goal. The median is over two rounds'
    # bursts: over one, a single pause of the machine's (one run in eight: 18 of 21 lines at
    # 105 ms, the other 3 at 6) decided it.
    assert statistics.median(latencies) < LATENCY_GOAL_MS
    assert max(latencies) < 2 * LATENCY_GOAL_MS


async def test_both_views_fit_both_screens_with_nothing_cut_off(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """A busy pit: a seven-seat Triple Attack round, a floorperson call, a round in play.

    Set SHOE2MQTT_SCREENSHOTS to a directory (docs/) to keep the screenshots."""
    bj, bj_settings, bj_events = _log_table("blackjack-queen-of-hearts.jsonl")
    da, da_settings, da_events = _log_table("double-attack-three-eights.jsonl")
    tables = {
        bj: (bj_settings, shoe_script(bj_events)),
        da: (da_settings, shoe_script(da_events)),
        "ta-1": (TRIPLE_ATTACK_7, None),
    }
    keep = os.environ.get("SHOE2MQTT_SCREENSHOTS")
    target = Path(keep) if keep else tmp_path
    async with running_floor(tmp_path, mosquitto, tables) as floor:
        await floor.play_log(bj, bj_events)
        await floor.play_log(da, da_events[:-4])  # a round in play
        await floor.deal("ta-1")
        await floor.play_round("ta-1", ALL_ATTACKS_7, random.Random(5))  # noqa: S311 - a test's players
        for width, height in ((1920, 1080), (1280, 800)):
            for view, url in (("pit", floor.url), ("table", f"{floor.url}table/ta-1")):
                browser.open(url, width=width, height=height)
                size = browser.script(
                    "const d = document.documentElement;"
                    "return [d.scrollWidth, d.scrollHeight, innerWidth, innerHeight]"
                )
                browser.screenshot(target / f"display-{view}-{width}x{height}.png")
                assert size == [width, height, width, height], (view, size)
                assert _largest_scale_that_fits(browser), (view, width, height)
        # A screen that changes size: the type follows it down and back up, to the sizes a
        # page opened at each size chose.
        browser.open(floor.url, width=1920, height=1080)
        large = _scale(browser)
        browser.open(floor.url, width=1920, height=640)
        small = _scale(browser)
        assert small < large
        browser.open(floor.url, width=1920, height=1080)
        for width, height, scale in ((1920, 640, small), (1920, 1080, large)):
            browser.cdp(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
            browser.until(functools.partial(_scale_is, browser, scale), f"--scale {scale}")
            assert _largest_scale_that_fits(browser)


def _scale(browser: Browser) -> float:
    value = browser.script(
        "return getComputedStyle(document.documentElement).getPropertyValue('--scale')"
    )
    return float(value)


def _scale_is(browser: Browser, scale: float) -> bool:
    return _scale(browser) == scale


def _largest_scale_that_fits(browser: Browser) -> bool:
    """The page fits at its --scale and overflows a twentieth above it (or is at 1)."""
    fits: bool = browser.script(
        "const root = document.documentElement;"
        "const fits = () => root.scrollHeight <= innerHeight + 1;"
        "const scale = parseFloat(getComputedStyle(root).getPropertyValue('--scale'));"
        "if (!fits()) return false;"
        "if (scale >= 1) return true;"
        "root.style.setProperty('--scale', String(Math.round(scale * 20 + 1) / 20));"
        "const above = fits();"
        "root.style.setProperty('--scale', String(scale));"
        "return !above;"
    )
    return fits


REFUSED_WAGERS = 1000
FLOOD_BATCH = 100  # refusals the test's client lets queue before it waits for the last answer
# One table's view in an update: its round and alerts, and `ROUND_NOTICES` notices of at most
# `NOTICE_TEXT` characters (four bytes each at worst) with their label and kind.
UPDATE_BOUND = 8_000 + ROUND_NOTICES * (4 * NOTICE_TEXT + 200)


async def test_a_flood_of_refused_wagers_keeps_the_page_and_its_updates_bounded(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """A console that fills a round with wagers at seats the table has not: each a notice
    of its own (the seat differs), and the display keeps the latest `ROUND_NOTICES`, as the
    daemon's snapshot does; no update the page receives grows with the flood."""
    table, settings, events = _log_table("blackjack-queen-of-hearts.jsonl")
    async with running_floor(
        tmp_path, mosquitto, {table: (settings, shoe_script(events))}, requests=AUTOMATED_CONSOLE
    ) as floor:
        await floor.play_log(table, events[:3])  # the shuffle, the burn card, the first wager
        browser.open(f"{floor.url}table/{table}")
        for seat in range(100, 100 + REFUSED_WAGERS):
            wager = {"transaction": f"w{seat}", "seat": seat, "kind": "blackjack", "amount": "25"}
            await floor.client.publish(f"shoe2mqtt/{table}/request/wager", json.dumps(wager))
            if (seat + 1) % FLOOD_BATCH == 0:
                # The test's own client hears every answer at QoS 1, two a refusal: once
                # mosquitto queues more than its 1,000 for a client that lags (a loaded
                # machine), it drops the rest, the last response among them. The page
                # still gets the whole flood; the test's client takes it in batches.
                await floor.wait(_answer_to(f"w{seat}"))
        # Served in order: once the page shows this one, it has had every refusal before it.
        await floor.request(table, "wager", seat=2, kind="blackjack", amount="25.00")
        received: list[tuple[str, str]] = []

        def caught_up() -> bool:
            received.extend(browser.received())
            return any(_shows_seat(data, table, 2) for _, data in received[-3:])

        await _until(caught_up, browser, "the wager after the flood", within=60)
    updates = [data for name, data in received if name in ("full", "update")]
    sizes = [len(data.encode()) for data in updates]
    print(  # noqa: T201 - the figure the test is about
        f"\n{REFUSED_WAGERS} refused wagers: {len(updates)} updates, {sum(sizes):,} bytes, "
        f"largest {max(sizes):,} bytes (bound {UPDATE_BOUND:,})"
    )
    view = json.loads(updates[-1])["tables"][table]
    assert len(view["notices"]) == ROUND_NOTICES
    latest = range(100 + REFUSED_WAGERS - ROUND_NOTICES, 100 + REFUSED_WAGERS)
    assert [n["text"] for n in view["notices"]] == [
        f"seat {seat} blackjack: this table has seats 1 to 7" for seat in latest
    ]
    assert max(sizes) <= UPDATE_BOUND


def _answer_to(transaction: str) -> Callable[[Received], bool]:
    def answered(m: Received) -> bool:
        return m.topic.endswith("/response/wager") and m.body.get("transaction") == transaction

    return answered


def _shows_seat(data: str, table: str, seat: int) -> bool:
    view = json.loads(data).get("tables", {}).get(table) or {}
    return any(s["seat"] == seat for s in (view.get("round") or {}).get("seats") or [])


# ---------------------------------------------------------------------- waiting
async def _until(condition: Any, browser: Browser, what: str, within: float = 10.0) -> None:
    """Wait (letting the pit's tasks run) until `condition()` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            pytest.fail(f"the page did not show {what} within {within} s:\n{browser.html()}")
        await asyncio.sleep(0.02)


async def _caught_up(floor: Floor, browser: Browser, table: str) -> None:
    """Until the page shows as many cards (face-down ones too) as the latest snapshot."""
    round_ = floor.snapshot(table).get("round") or {}
    cards = len((round_.get("dealer") or {}).get("cards") or []) + sum(
        len(hand["cards"]) for seat in round_.get("seats") or [] for hand in seat["hands"]
    )
    await _until(lambda: len(browser.all(f"#table-{table} .card")) == cards, browser, "it")
