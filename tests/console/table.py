"""One table as a user runs it, for the console's browser tests: real processes, one file.

`shoe2mqtt emulate --step` (a shoe per table: a card each time the test presses Enter),
`shoe2mqtt run` and a `shoe2mqtt console` per table, as subprocesses of one configuration
file (each console's a copy with its own `[console]`), on a mosquitto the module shares:
started once for the module, each test playing a table of its own. The test drives the
page in the module's Chromium and deals from the emulator's standard input.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.testing import free_port
from daemon.testing.process import write_service_config

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from daemon.testing.process import Endpoint
    from tests.display.browser import Browser

SHOE2MQTT: Final = (sys.executable, "-m", "daemon.cli")
START: Final = 20.0  # seconds for a process to start
DEALERS: Final = {"alice": "2580", "bob": "correct horse battery"}
CHIPS: Final = ("5.00", "25.00", "100.00")


def blackjack(table_id: str) -> dict[str, Any]:
    """The table's `[[table]]`: blackjack with a hole-card reader, so the dealer's second card
    is dealt face down and must stay off the page until its reveal."""
    return {
        "id": table_id,
        "game": "blackjack",
        "decks": 6,
        "seats": 7,
        "paytable": "A",
        "hole_card_reader": True,
        "limits": {
            "blackjack": {"min": "10", "max": "1000"},
            "twenty_point_bonus": {"min": "5", "max": "100"},
        },
    }


@dataclass
class Table:
    """The running table: its console's address, its shoe's input, its files."""

    table_id: str
    url: str
    directory: Path
    shoe: Shoe

    def deal(self, count: int = 1) -> None:
        """Press Enter at the table's emulator `count` times: a card each."""
        self.shoe.deal(count)

    def journal_show(self, round_id: int) -> list[dict[str, Any]]:
        """`shoe2mqtt journal show --table ID ROUND`, as a user types it: its JSON lines."""
        shown = subprocess.run(  # noqa: S603 - our own command line
            [*SHOE2MQTT, "journal", "show", "--config", str(self.directory / "shoe2mqtt.toml"),
             "--table", self.table_id, str(round_id)],
            capture_output=True, check=True, timeout=START,
        )  # fmt: skip
        return [json.loads(line) for line in shown.stdout.splitlines()]


def console_section(
    table_id: str, port: int, dealers_file: Path, *, user: tuple[str, Path] | None = None
) -> str:
    lines = [
        "[console]",
        f'table = "{table_id}"',
        'bind = "127.0.0.1"',
        f"port = {port}",
        f'dealers_file = "{dealers_file}"',
        "chips = [" + ", ".join(f'"{c}"' for c in CHIPS) + "]",
    ]
    if user is not None:
        lines += [f'username = "{user[0]}"', f'password_file = "{user[1]}"']
    return "\n".join(lines) + "\n"


def write_dealers(path: Path, dealers: Mapping[str, str] = DEALERS) -> Path:
    path.touch(mode=0o600)
    path.write_text("".join(f"{name}:{pin}\n" for name, pin in dealers.items()), "utf-8")
    return path


@contextlib.contextmanager
def running_tables(
    directory: Path, broker: Endpoint, scripts: Mapping[str, str]
) -> Iterator[dict[str, Table]]:
    """A table PC: a shoe per table (dealing its script on Enter), one daemon for them all,
    and a console per table; stopped at the end. Started at once, for a module's tests to
    share: each test plays a table of its own."""
    directory.mkdir(parents=True)
    links = {table_id: directory / f"shoe-{table_id}" for table_id in scripts}
    config = write_service_config(
        directory / "shoe2mqtt.toml",
        broker,
        node="table-pc",
        state_directory=directory / "state",
        tables=[(blackjack(table_id), link) for table_id, link in links.items()],
        reconnect=(0.2, 1.0),
    )
    dealers = write_dealers(directory / "dealers")
    ports: dict[str, int] = {}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        # Started together (each takes a second or more to import on a loaded machine); the
        # daemon once the shoes' links are there, so that its readers find them at once.
        shoes = {
            table_id: _start(
                directory,
                f"emulate-{table_id}",
                ["emulate", "--step", "--cards", script, "--link", str(links[table_id])],
                processes,
            )
            for table_id, script in scripts.items()
        }
        for table_id in scripts:
            ports[table_id] = free_port()
            own = directory / f"{table_id}.toml"
            own.write_text(
                config.read_text("utf-8") + console_section(table_id, ports[table_id], dealers)
            )
            _start(directory, f"console-{table_id}", ["console", "--config", str(own)], processes)
        _until(lambda: all(link.exists() for link in links.values()), "the shoes' links")
        _start(directory, "run", ["run", "--config", str(config)], processes)
        _until(lambda: all(map(_listening, ports.values())), "the consoles to listen")
        yield {
            table_id: Table(table_id, f"http://127.0.0.1:{ports[table_id]}/", directory, Shoe(shoe))
            for table_id, shoe in shoes.items()
        }
    finally:
        stop(processes)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdin is not None:
            process.stdin.close()


def _start(
    directory: Path,
    name: str,
    args: list[str],
    processes: list[subprocess.Popen[bytes]],
    *,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """`shoe2mqtt ARGS…`, its output in `<name>.log`; an emulator's input a pipe (Enter)."""
    log = (directory / f"{name}.log").open("wb")
    process = subprocess.Popen(  # noqa: S603 - our own command line
        [*SHOE2MQTT, *args],
        stdin=subprocess.PIPE if args[0] == "emulate" else subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=cwd,
    )
    log.close()  # the child has its own copy
    processes.append(process)
    return process


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _until(condition: Any, what: str, within: float = START) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {within} s")
        time.sleep(0.05)


# ---------------------------------------------------------------------- the page
def log_in(
    browser: Browser, url: str, dealer: str = "alice", *, pin: str | None = None, live: bool = True
) -> None:
    """Open the console's login at a tablet's size, log in as `dealer`, and wait until the
    page is live (`live`), or only there."""
    screen(browser, 1280, 800)
    browser.cdp("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    browser.driver.delete_all_cookies()
    browser.driver.get(url + "login")
    submit_login(browser, dealer, DEALERS[dealer] if pin is None else pin)
    if live:
        browser.until(lambda: browser.text("#link") == "live", "the console to be live")
    else:
        browser.until(lambda: browser.all("#main"), "the console's page")


def screen(browser: Browser, width: int, height: int) -> None:
    browser.cdp(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def submit_login(browser: Browser, dealer: str, pin: str) -> None:
    """Fill in the login form and send it; return once the next page has loaded."""
    browser.script(
        "window.__leaving = true;"
        "document.getElementById('dealer').value = arguments[0];"
        "document.getElementById('pin').value = arguments[1];"
        "document.querySelector('.login-form').submit();",
        dealer,
        pin,
    )
    browser.until(
        lambda: browser.script("return !window.__leaving && document.readyState === 'complete'"),
        "the next page",
    )


_QUIET_MS: Final = 150  # the page has not changed for this long: nothing moves under a finger
# Notes when the page last changed, and where the centre of a button is once it has been
# still for _QUIET_MS and is the element at that point (null until then).
_FIND = """
const main = document.getElementById('main');
if (!window.__changedAt) {
  window.__changedAt = performance.now();
  new MutationObserver(() => { window.__changedAt = performance.now(); })
    .observe(main, {childList: true, subtree: true, attributes: true, characterData: true});
}
const b = document.querySelector(arguments[0]);
if (b === null || b.disabled) return null;
b.scrollIntoView({block: 'center'});
if (performance.now() - window.__changedAt < arguments[1]) return null;
const r = b.getBoundingClientRect();
const x = r.x + r.width / 2, y = r.y + r.height / 2;
const there = document.elementFromPoint(x, y);
return there !== null && there.closest('button') === b ? [x, y] : null;
"""


def tap(browser: Browser, name: str, within: str = "") -> None:
    """Touch the button named `name` (its data-name) as a finger would: a touch start and end
    at its centre, which the browser turns into a click; once the page has been still for a
    moment, so that nothing moves under the finger."""
    selector = f"{within} button[data-name='{name}']".strip()
    x, y = browser.until(
        lambda: browser.script(_FIND, selector, _QUIET_MS), f"an enabled, still {selector}"
    )
    point = [{"x": x, "y": y}]
    browser.cdp("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
    browser.cdp("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


@contextlib.contextmanager
def running_console(
    directory: Path, mqtt: str, table_id: str, user: tuple[str, str]
) -> Iterator[str]:
    """A console alone for `table_id`, as broker `user` (name, password), on the broker the
    `[mqtt]` lines describe; its address."""
    directory.mkdir(parents=True)
    password = directory / "console-password"
    password.touch(mode=0o600)
    password.write_text(user[1] + "\n", "utf-8")
    port = free_port()
    config = directory / "console.toml"
    table = "\n".join(_table_lines(blackjack(table_id)))
    config.write_text(
        mqtt
        + console_section(
            table_id, port, write_dealers(directory / "dealers"), user=(user[0], password)
        )
        + table
        + "\n",
        "utf-8",
    )
    processes: list[subprocess.Popen[bytes]] = []
    try:
        _start(directory, "console", ["console", "--config", str(config)], processes)
        _until(lambda: _listening(port), "the console to listen")
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop(processes)


def _table_lines(mapping: Mapping[str, Any]) -> list[str]:
    lines = ["[[table]]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in mapping.items() if not isinstance(v, dict)]
    for kind, limit in mapping["limits"].items():
        lines += [f"[table.limits.{kind}]", *(f"{k} = {json.dumps(v)}" for k, v in limit.items())]
    return lines


@dataclass
class Shoe:
    """An emulator's standard input: Enter deals a card."""

    process: subprocess.Popen[bytes]

    def deal(self, count: int = 1) -> None:
        assert self.process.stdin is not None
        for _ in range(count):
            self.process.stdin.write(b"\n")
            self.process.stdin.flush()


@contextlib.contextmanager
def running_commands(
    directory: Path, commands: list[list[str]], cwd: Path, console_port: int
) -> Iterator[Shoe]:
    """`shoe2mqtt` with each argument list, in order, from `cwd` (an emulator first); until
    the console listens on `console_port`."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for number, args in enumerate(commands):
            _start(directory, f"{number}-{args[0]}", args, processes, cwd=cwd)
            if args[0] == "emulate":
                link = Path(args[args.index("--link") + 1])
                _until(link.exists, "the shoe's link")
        _until(lambda: _listening(console_port), "the console to listen")
        yield Shoe(processes[0])
    finally:
        stop(processes)
