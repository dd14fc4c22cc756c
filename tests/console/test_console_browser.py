"""The dealer console in a real browser: a headless Chromium, touched as a dealer touches it.

Each test runs a table as a user runs it (tests/console/table.py): `emulate --step`, whose
cards the test deals by pressing Enter; `run`; and `console`, all from one configuration
file, on the module's mosquitto. The test logs in and touches the page's buttons (touch
events at their centres), and reads the page as a person would (the DOM); for the hole card,
every event the page received too.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from daemon.testing import free_port
from tests.console.table import (
    DEALERS,
    SHOE2MQTT,
    log_in,
    running_commands,
    running_console,
    running_tables,
    screen,
    submit_login,
    tap,
)
from tests.security.conftest import BASE, CONSOLE_1

if TYPE_CHECKING:
    from collections.abc import Iterator

    from daemon.testing import Mosquitto
    from tests.console.table import Table
    from tests.display.browser import Browser
    from tests.security.conftest import SecureBroker

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
# Each test's table and what its shoe deals.
SCRIPTS = {
    "bj-1": "5D 7S 6H QC 9C",  # a whole round: seat 1 5D 6H (11) hits 9C; dealer 7S, QC down
    "bj-2": "KD 7S KH QC",  # a held round: KD dealt before any wager
    "bj-3": "KD",  # a wager outside its window
    "bj-4": "KD",  # the login
    "bj-5": "KD 7S ?? QC",  # seat 1's second card unreadable (the dealer reads K♥)
}


@pytest.fixture(scope="module")
def tables(
    tmp_path_factory: pytest.TempPathFactory, shared_mosquitto: Mosquitto
) -> Iterator[dict[str, Table]]:
    directory = tmp_path_factory.mktemp("console") / "pc"
    with running_tables(directory, shared_mosquitto, SCRIPTS) as running:
        yield running


def _seat_text(browser: Browser, seat: int) -> str:
    return browser.text(f"#seat-{seat}")


def _settled(browser: Browser) -> list[str]:
    found: list[str] = browser.script(
        "return [...document.querySelectorAll('.pay .settlement')].map(e => e.dataset.text)"
    )
    return found


def _place(browser: Browser, seat: int, chip: int, kind: str) -> None:
    tap(browser, f"chip-{chip}")
    tap(browser, f"add-{seat}-{kind}")


def _screenshot(browser: Browser, name: str) -> None:
    if os.environ.get("SHOE2MQTT_SCREENSHOTS") == "docs":
        browser.screenshot(DOCS / name)


def _hole_card_shown(browser: Browser, received: list[tuple[str, str]]) -> bool:
    """The hole card QC anywhere in the page or in what the page received."""
    page = browser.html()
    return "Q♣" in page or "QC" in page or any("QC" in data for _, data in received)


def _betting_closed(browser: Browser) -> None:
    """Until the page shows the table's betting window closed: No more bets answered (the
    contract: the dealer deals only then)."""
    browser.until(
        lambda: (
            browser.script("return document.querySelector('.controls').dataset.betting") == "closed"
        ),
        "No more bets answered",
    )


def test_a_whole_round_played_with_touches_never_shows_the_hole_card_before_its_reveal(
    tables: dict[str, Table], browser: Browser
) -> None:
    """Seat 1: 5D 6H (11), hits 9C (20), stands; the dealer: 7S up, QC down (17)."""
    table = tables["bj-1"]
    log_in(browser, table.url)
    browser.received()  # what the page received from here on
    _place(browser, 1, 1, "blackjack")  # $25
    _place(browser, 1, 0, "twenty_point_bonus")  # $5
    browser.until(lambda: "$5.00" in _seat_text(browser, 1), "the wagers placed")
    tap(browser, "close_betting")
    _betting_closed(browser)
    table.deal(4)
    browser.until(lambda: browser.all("#seat-1 [data-name='action-hit']"), "seat 1's turn")
    received = browser.received()
    assert not _hole_card_shown(browser, received)
    _screenshot(browser, "console-1280x800.png")
    screen(browser, 390, 844)
    _screenshot(browser, "console-390x844.png")
    screen(browser, 1280, 800)
    tap(browser, "action-hit", "#seat-1")
    table.deal()
    browser.until(lambda: "9♣" in _seat_text(browser, 1), "the hit card")
    received += browser.received()
    assert not _hole_card_shown(browser, received)
    tap(browser, "action-stand", "#seat-1")
    browser.until(lambda: "Q♣" in browser.text(".dealer"), "the hole card revealed")
    browser.until(lambda: _settled(browser), "the settlement")
    settled = _settled(browser)
    assert settled == ["seat 1 — 20 point bonus, no 20: collect $5.00"], settled
    # Who sent each request is in the journal, as `journal show` prints the round.
    shown = table.journal_show(1)
    requests = [line for line in shown if line.get("kind") == "request"]
    sent = [json.loads(line["body"]["payload"]) for line in requests]
    assert [(body.get("by"), command) for body, command in
            zip(sent, [line["body"]["command"] for line in requests], strict=True)] == [
        ("alice", "wager"), ("alice", "wager"), ("alice", "close_betting"),
        ("alice", "action"), ("alice", "action"),
    ]  # fmt: skip


def test_a_held_round_is_resolved_from_the_page(tables: dict[str, Table], browser: Browser) -> None:
    """The dealer deals before any wager: the table holds the card; the page says what to do,
    and the round goes on from the page."""
    table = tables["bj-2"]
    log_in(browser, table.url)
    table.deal()  # before any wager
    browser.until(lambda: browser.text("#doubts .doubt"), "the held card")
    doubt = browser.text("#doubts .doubt")
    _place(browser, 1, 1, "blackjack")
    tap(browser, "close_betting")
    tap(browser, "resume")
    browser.until(lambda: "K♦" in _seat_text(browser, 1), "the held card placed at seat 1")
    browser.until(lambda: not browser.text("#doubts .doubt"), "the doubt resolved")
    table.deal(3)
    tap(browser, "action-stand", "#seat-1")
    browser.until(lambda: "Q♣" in browser.text(".dealer"), "the hole card revealed")
    hand = _seat_text(browser, 1)
    assert doubt.startswith("HOLD")
    assert "a card came before any wager" in doubt
    assert "What to do: " in doubt
    assert "K♦" in hand
    assert "K♥" in hand


def test_an_unreadable_card_is_entered_from_the_page(
    tables: dict[str, Table], browser: Browser
) -> None:
    table = tables["bj-5"]
    log_in(browser, table.url)
    _place(browser, 1, 1, "blackjack")
    tap(browser, "close_betting")
    _betting_closed(browser)
    table.deal(3)  # KD, 7S, and one the shoe cannot read
    browser.until(lambda: browser.text("#doubts .alert.entry"), "the card to enter")
    alert = browser.text("#doubts .alert.entry")
    tap(browser, "rank-K")
    tap(browser, "suit-H")
    tap(browser, "enter")
    browser.until(lambda: "K♥" in _seat_text(browser, 1), "the card entered at seat 1")
    table.deal()  # the hole card
    tap(browser, "action-stand", "#seat-1")
    browser.until(lambda: "Q♣" in browser.text(".dealer"), "the hole card revealed")
    assert alert.startswith("ENTER CARD")
    assert "What to do: read the card's face and enter it: Enter card" in alert


def test_a_wager_outside_its_window_is_refused_with_the_rules_words(
    tables: dict[str, Table], browser: Browser
) -> None:
    table = tables["bj-3"]
    log_in(browser, table.url)
    _place(browser, 1, 1, "blackjack")
    browser.until(lambda: "$25.00" in _seat_text(browser, 1), "the wager placed")
    tap(browser, "chip-2")  # $100, twice: the second above the bonus's $100 maximum
    for _ in range(2):
        tap(browser, "add-1-twenty_point_bonus")
    browser.until(lambda: browser.text("#doubts .refused"), "the limit said")
    limit = browser.text("#doubts .refused")
    tap(browser, "close_betting")
    _place(browser, 1, 1, "blackjack")
    browser.until(lambda: "betting is closed" in browser.text("#doubts .refused"), "refusal")
    refused = browser.text("#doubts .refused")
    amount = _seat_text(browser, 1)
    assert limit == ("seat 1 20 point bonus $200.00: outside the table's limits, $5 to $100")
    assert refused.startswith("seat 1 blackjack $50.00: "), refused
    assert "No more bets" in refused
    assert "13:69F-2.3(a)" in refused  # the rule's own words and citation
    assert "$25.00" in amount  # unchanged


def test_wrong_pins_are_slowed_and_the_session_cookie_is_kept_from_scripts(
    tables: dict[str, Table], browser: Browser
) -> None:
    table = tables["bj-4"]
    browser.driver.delete_all_cookies()
    browser.driver.get(table.url)  # no session: the login
    assert browser.all(".login-form")
    said = []
    for guess in ("0000", "1111", "2222", "3333", "4444", DEALERS["bob"]):
        submit_login(browser, "bob", guess)
        said.append(browser.text("#message"))
    started = time.monotonic()
    browser.until(lambda: time.monotonic() - started > 1.1, "a second's wait", within=3)
    log_in(browser, table.url, "bob")
    cookies = browser.driver.get_cookies()
    script_sees = browser.script("return document.cookie")
    assert said[:5] == ["Wrong name or PIN."] * 5
    assert said[5].startswith("Too many wrong PINs: try again in ")  # even the right PIN
    [cookie] = cookies
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["secure"] is False  # plain HTTP on this PC; Secure behind TLS
    assert script_sees == ""


def test_the_console_of_one_table_cannot_act_on_another(
    tmp_path: Path, secure_broker: SecureBroker, browser: Browser
) -> None:
    """A console given table bj-2 with bj-1's broker user (a copied file, a stolen password):
    the example broker (docs/mosquitto) delivers it nothing of bj-2 and drops what it sends
    there; the page says so rather than pretending."""
    mqtt = (
        f'[mqtt]\nhost = "{secure_broker.host}"\nport = {secure_broker.port}\n'
        f'[mqtt.tls]\nca_file = "{secure_broker.ca}"\n'
    )
    user = (CONSOLE_1, secure_broker.passwords[CONSOLE_1])
    with running_console(tmp_path / "c", mqtt, "bj-2", user) as url:
        log_in(browser, url, live=False)
        # The page says it once it has drawn itself: read it then, not at the first look.
        browser.until(lambda: "nothing heard" in browser.text("#doubts"), "the page's warning", 15)
        nothing = browser.text("#doubts")
        _place(browser, 1, 1, "blackjack")
        browser.until(lambda: browser.text("#doubts .unanswered"), "the request unanswered", 15)
        unanswered = browser.text("#doubts .unanswered")
        tap(browser, "again", "#doubts .unanswered")  # a wager may go again as it is
        browser.until(lambda: len(_denied(secure_broker)) == 2, "the wager sent again", 15)
        tap(browser, "forget", "#doubts .unanswered")  # and the dealer lets it go
        browser.until(lambda: not browser.all("#doubts .unanswered"), "the request let go")
    assert "nothing heard of this table yet: do not deal" in nothing
    assert unanswered.startswith("NO ANSWER")
    assert "seat 1 blackjack $25.00: the table has not answered" in unanswered
    denied = _denied(secure_broker)
    assert all(f"from {CONSOLE_1} " in line for line in denied)
    assert all(f"'{BASE}/bj-2/request/wager'" in line for line in denied)


def _denied(broker: SecureBroker) -> list[str]:
    return [line for line in broker.log().splitlines() if "Denied PUBLISH" in line]


# ---------------------------------------------------------------------- the README
WALKTHROUGH = "## A table on one PC"


def _walkthrough() -> tuple[list[list[str]], str]:
    """The README's walk-through: its `shoe2mqtt` command lines (as a shell splits them) and
    its text."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(WALKTHROUGH) :]
    section = section[: section.index("\n## ", len(WALKTHROUGH))]
    commands = [
        shlex.split(line, comments=True)
        for line in section.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
        if line.startswith("shoe2mqtt ")
    ]
    return commands, section


def test_the_readme_s_table_on_one_pc_plays_as_it_says(
    tmp_path: Path, mosquitto: Mosquitto, browser: Browser
) -> None:
    """Every command of the walk-through run as typed, from the clone's root; only what must
    differ on a test machine is put elsewhere: the broker's port, the console's, the shoe's
    link and the journal's directory (each a line of the example file, replaced whole). A
    broker of its own: its table is bj-1, as the module's first table is."""
    commands, section = _walkthrough()
    assert [c[:2] for c in commands] == [
        ["shoe2mqtt", "emulate"], ["shoe2mqtt", "run"], ["shoe2mqtt", "console"],
    ]  # fmt: skip
    example = (ROOT / "examples/config/one-pc.toml").read_text(encoding="utf-8")
    link, config, port = tmp_path / "shoe-bj-1", tmp_path / "one-pc.toml", free_port()
    moved = {
        "port = 1883": f"port = {mosquitto.port}",
        "port = 8090": f"port = {port}",
        '"/tmp/shoe2mqtt-one-pc"': f'"{tmp_path / "state"}"',
        '"/tmp/shoe-bj-1"': f'"{link}"',
    }
    for line, there in moved.items():
        assert example.count(line) == 1, line
        example = example.replace(line, there)
    config.write_text(example, "utf-8")
    swap = {
        "/tmp/shoe-bj-1": str(link),  # noqa: S108 - the README's path, moved for the test
        "examples/config/one-pc.toml": str(config),
    }
    typed = [[swap.get(word, word) for word in command[1:]] for command in commands]
    with running_commands(tmp_path, typed, ROOT, port) as shoe:
        url = f"http://127.0.0.1:{port}/"
        assert "<http://127.0.0.1:8090/>" in section
        assert "log in as `dealer` with the PIN `1234`" in section
        log_in(browser, url, "dealer", pin="1234")
        shoe.deal()  # 1. the burn card
        _place(browser, 1, 1, "blackjack")  # 2. $25 and $5 at seat 1, No more bets
        _place(browser, 1, 0, "twenty_point_bonus")
        browser.until(lambda: "$5.00" in _seat_text(browser, 1), "the wagers placed")
        tap(browser, "close_betting")
        _betting_closed(browser)
        shoe.deal(4)  # 3. four cards
        browser.until(lambda: _settled(browser), "what to pay")
        paid, hand, dealer = _settled(browser), _seat_text(browser, 1), browser.text(".dealer")
        tap(browser, "action-stand", "#seat-1")  # 4. stand
        browser.until(lambda: "Q♦" in browser.text(".dealer"), "the hole card revealed")
        revealed = browser.text(".dealer")
        shown = subprocess.run(  # noqa: S603 - the README's command, as typed
            [*SHOE2MQTT, "journal", "show", "--config", str(config), "--table", "bj-1", "1"],
            capture_output=True, text=True, check=True, timeout=60, cwd=ROOT,
        )  # fmt: skip
    assert "`shoe2mqtt journal show --config examples/config/one-pc.toml --table bj-1 1`" in section
    assert paid == ["seat 1 — 20 point bonus, suited 20, 9 to 1: pay $45.00"]
    assert f"`{paid[0]}`" in section
    assert ("K♥" in hand, "Q♥" in hand, "8♣" in dealer) == (True, True, True)
    assert "seat 1 gets K♥ and Q♥, the dealer 8♣ up" in section
    assert "Q♦" in revealed
    assert "18" in revealed
    assert "(Q♦: 18)" in section
    assert '\\"by\\":\\"dealer\\"' in shown.stdout or '"by":"dealer"' in shown.stdout
