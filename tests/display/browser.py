"""A headless Chromium from Debian's packages, driven by Debian's chromedriver (selenium).

One browser per test module (starting one costs about two seconds). chromedriver is started
detached (`setsid -f`), so the browser's processes are not children of the test process and
the suite's leak check judges each test by what the test itself started; the module's
teardown quits the browser and shuts chromedriver down, and fails if either lingers.

The page is watched from outside its own code: the Chrome performance log records every
Server-Sent Event the page receives (`Network.eventSourceMessageReceived`), and a
MutationObserver added after load records when each settlement's element first appears.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import psutil
import pytest
from selenium import webdriver
from selenium.webdriver.chromium.remote_connection import ChromiumRemoteConnection
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.client_config import ClientConfig

from daemon.testing import free_port

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from selenium.webdriver.remote.webelement import WebElement

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMEDRIVER: Final = Path("/usr/bin/chromedriver")
# Without these the browser reaches for the network (updates, sync, QUIC probes), which on a
# closed network hangs it; a fresh profile per module keeps runs apart.
FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
)
WAIT: Final = 10.0  # seconds a page has to show what the test waits for

# Records when each settlement first appears in the page, in epoch milliseconds (the clock
# the test's MQTT recorder uses too), whether it was added alone or with its list.
_OBSERVE = """
window.__firstSeen = window.__firstSeen || {};
const note = (node) => {
  if (node.nodeType !== 1) return;
  const now = performance.timeOrigin + performance.now();
  const found = node.matches('[data-key]') ? [node] : [...node.querySelectorAll('[data-key]')];
  for (const item of found) {
    if (!(item.dataset.key in window.__firstSeen)) window.__firstSeen[item.dataset.key] = now;
  }
};
new MutationObserver((changes) => {
  for (const change of changes) change.addedNodes.forEach(note);
}).observe(document.getElementById('main'), {childList: true, subtree: true});
note(document.getElementById('main'));
"""


@dataclass
class Browser:
    driver: webdriver.Remote
    # What the browser asked for and was refused (status 400 or more), from its network log
    # as each `received()` reads it: a page that asks for a missing file (a favicon) shows an
    # error in the browser's console.
    refused: list[str] = field(default_factory=list)

    def open(self, url: str, *, width: int = 1920, height: int = 1080) -> None:
        """Load `url` in a viewport of `width` by `height`, wait for the stream, start observing."""
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.driver.get(url)
        self.until(lambda: self.text("#link") == "live", "the page to be live")
        self.driver.execute_script(_OBSERVE)
        self.received()  # start the log of received events from this page

    def cdp(self, command: str, params: dict[str, Any]) -> dict[str, Any]:
        result = self.driver.execute("executeCdpCommand", {"cmd": command, "params": params})
        value: dict[str, Any] = result["value"]
        return value

    def until(self, condition: Callable[[], object], what: str, within: float = WAIT) -> Any:
        deadline = time.monotonic() + within
        while not (result := condition()):
            if time.monotonic() > deadline:
                pytest.fail(f"the page did not show {what} within {within} s")
            time.sleep(0.02)
        return result

    def text(self, selector: str) -> str:
        """The text of the first element `selector` finds ("" if none), read in one step:
        the page rebuilds a table's elements whenever it changes."""
        texts = self.texts(selector)
        return texts[0] if texts else ""

    def texts(self, selector: str) -> list[str]:
        found: list[str] = self.script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText)",
            selector,
        )
        return found

    def all(self, selector: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def script(self, source: str, *args: object) -> Any:
        return self.driver.execute_script(source, *args)

    def settlements(self, table: str) -> list[str]:
        """The settlement lines of `table`, as the page shows them, top to bottom."""
        result: list[str] = self.script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.dataset.text)",
            f"#table-{table} .settlement",
        )
        return result

    def first_seen(self) -> dict[str, float]:
        seen: dict[str, float] = self.script("return window.__firstSeen || {}")
        return seen

    def html(self) -> str:
        source: str = self.script("return document.documentElement.outerHTML")
        return source

    def received(self) -> list[tuple[str, str]]:
        """(event name, data) of every Server-Sent Event the page received since the last
        call, from the browser's own network log."""
        entries = self.driver.execute("getLog", {"type": "performance"})["value"]
        events = []
        for entry in entries:
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.eventSourceMessageReceived":
                params = message["params"]
                events.append((params["eventName"], params["data"]))
            elif message["method"] == "Network.responseReceived":
                response = message["params"]["response"]
                if response["status"] >= 400:
                    self.refused.append(f"{response['status']} {response['url']}")
        return events

    def screenshot(self, path: Path) -> None:
        png = self.cdp("Page.captureScreenshot", {"format": "png"})["data"]
        import base64

        path.write_bytes(base64.b64decode(png))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    for binary, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not binary.exists():
            pytest.fail(f"{binary} is missing: apt-get install {package} (scripts/test does)")
    port = free_port()
    profile = Path(tempfile.mkdtemp(prefix="display-browser-"))
    subprocess.run(  # noqa: S603 - a fixed binary; detached so it is no child of ours
        ["/usr/bin/setsid", "-f", CHROMEDRIVER, f"--port={port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    driver_process = _listener(port)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    address = f"http://127.0.0.1:{port}"
    # keep_alive off: no connection to chromedriver outlives a command, so none is left
    # open across a test for the leak check to find.
    connection = ChromiumRemoteConnection(
        address,
        "goog",
        "chrome",
        client_config=ClientConfig(remote_server_addr=address, keep_alive=False),
    )
    try:
        driver = webdriver.Remote(command_executor=connection, options=options)
        try:
            yield Browser(driver)
        finally:
            driver.quit()
    finally:
        _stop(driver_process, address)
        _stop_browsers_of(profile)
        shutil.rmtree(profile, ignore_errors=True)


def _listener(port: int) -> psutil.Process:
    """The process listening on `port`, once it listens."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for connection in psutil.net_connections(kind="tcp"):
            laddr, pid = connection.laddr, connection.pid
            if laddr and laddr.port == port and pid and connection.status == psutil.CONN_LISTEN:
                return psutil.Process(pid)
        time.sleep(0.05)
    pytest.fail(f"chromedriver did not listen on port {port}")


def _stop(process: psutil.Process, address: str) -> None:
    try:
        with urllib.request.urlopen(f"{address}/shutdown", timeout=5):  # noqa: S310 - our own
            pass
    except OSError:
        process.kill()
    _, alive = psutil.wait_procs([process], timeout=5)
    for leftover in alive:
        leftover.kill()


def _stop_browsers_of(profile: Path) -> None:
    """Any browser process of this profile that outlived `quit()` (none should)."""
    marker = f"--user-data-dir={profile}"
    strays = [p for p in psutil.process_iter(["cmdline"]) if marker in (p.info["cmdline"] or [])]
    for stray in strays:
        stray.kill()
    psutil.wait_procs(strays, timeout=5)
