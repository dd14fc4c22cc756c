"""The Prometheus endpoint: off by default, on localhost by default, and moving as the pit
plays (docs/deploy.md, "Metrics")."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from daemon.configuration.file import ConfigErrors
from daemon.configuration.service_config import MetricsConfig, load_config
from daemon.metrics import READER_LINKS, DaemonMetrics, Readings, serve_metrics
from daemon.testing import free_port, until
from drivers import events as shoe
from drivers.noise import LineCounts
from tests.daemon.tables import SEEN, drawn, make_service, request

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

# What a scrape says, by series: (name, sorted label pairs) → value.
Scrape = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Scrape:
    """The exposition read by prometheus-client's own parser, not by ours."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(scrape: Scrape, name: str, **labels: str) -> float:
    """The sum of the series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, series), v in scrape.items() if n == name and wanted <= set(series))


async def curl(url: str) -> str:
    """`curl -sf URL`, as docs/deploy.md shows it; raises on a refused or failed request."""
    process = await asyncio.create_subprocess_exec(
        "/usr/bin/curl", "-sf", "--max-time", "5", url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    if process.returncode != 0:
        raise ConnectionError(f"curl exited {process.returncode}: {err.decode()}")
    return out.decode()


@contextlib.asynccontextmanager
async def demo(metrics_port: int) -> AsyncIterator[asyncio.subprocess.Process]:
    """`shoe2mqtt demo` with its metrics on, as a person types it; Ctrl-C at the end."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "daemon.cli", "demo", "--no-view", "--no-display",
        "--pace", "0.02", "--seed", "7", "--metrics-port", str(metrics_port),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        try:
            _, stderr = await asyncio.wait_for(process.communicate(), 15)
        except TimeoutError:
            process.kill()
            _, stderr = await process.communicate()
        assert process.returncode == 0, stderr.decode()


async def scrape_until(url: str, ready: Callable[[Scrape], bool]) -> Scrape:
    async with asyncio.timeout(30):
        while True:
            with contextlib.suppress(ConnectionError):
                scrape = parse(await curl(url))
                if ready(scrape):
                    return scrape
            await asyncio.sleep(0.2)


async def test_curl_on_the_demo_shows_the_counters_moving() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    async with demo(port):
        first = await scrape_until(url, lambda s: total(s, "shoe2mqtt_settlements_total") > 0)
        cards = total(first, "shoe2mqtt_cards_read_total")
        settled = total(first, "shoe2mqtt_settlements_total")
        commits = total(first, "shoe2mqtt_journal_commit_seconds_count")
        later = await scrape_until(
            url,
            lambda s: (
                total(s, "shoe2mqtt_settlements_total") > settled
                and total(s, "shoe2mqtt_cards_read_total") > cards
            ),
        )
    assert total(later, "shoe2mqtt_journal_commit_seconds_count") > commits
    assert total(later, "shoe2mqtt_mqtt_connected") == 1
    assert total(later, "shoe2mqtt_info", node="demo") == 1
    for table in ("bj-1", "da-1", "ta-1"):
        assert total(later, "shoe2mqtt_reader_link", table=table, state="connected") == 1
        assert total(later, "shoe2mqtt_reader_link", table=table) == 1  # one state at a time
        assert total(later, "shoe2mqtt_cards_read_total", table=table) > 0
        assert 0 <= total(later, "shoe2mqtt_seconds_since_last_card", table=table) < 30
    assert ("shoe2mqtt_outbox_backlog", ()) in later
    assert total(later, "process_resident_memory_bytes") > 0


class _Daemon:
    """What the metrics read at a scrape, set by hand."""

    def __init__(self) -> None:
        self.now = Readings(broker_connected=False, backlog=3, reader_links={"bj1": "starting"})

    def __call__(self) -> Readings:
        return self.now


def _scrape(metrics: DaemonMetrics) -> Scrape:
    from prometheus_client import generate_latest

    return parse(generate_latest(metrics.registry).decode())


def test_a_table_tells_its_cards_settlements_notices_and_refusals_and_a_replay_tells_none() -> None:
    clock = iter(float(t) for t in range(100, 200))
    daemon = _Daemon()
    metrics = DaemonMetrics(
        node="pit-a", version="1.2.3", tables=["bj1"], readings=daemon, clock=lambda: next(clock)
    )
    service = make_service()
    service.observer = metrics
    before = _scrape(metrics)
    assert total(before, "shoe2mqtt_cards_read_total", table="bj1") == 0
    assert total(before, "shoe2mqtt_mqtt_connected") == 0
    assert total(before, "shoe2mqtt_outbox_backlog") == 3
    assert total(before, "shoe2mqtt_reader_link", table="bj1", state="starting") == 1
    assert ("shoe2mqtt_seconds_since_last_card", (("table", "bj1"),)) not in before
    assert {s for (n, labels), _ in before.items() if n == "shoe2mqtt_reader_link"
            for k, s in labels if k == "state"} == set(READER_LINKS)  # fmt: skip

    service.on_shoe_event(shoe.CardUnreadable(seq=1, burned=True), seen_at=SEEN)
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "wager", seat=1, kind="twenty_point_bonus", amount="10")
    request(service, "wager", seat=2, kind="blackjack", amount="0.01")  # below the minimum
    request(service, "teleport")
    request(service, "close_betting")
    drawn(service, "KD 7S KH QH")  # seat 1: any 20, its bonus settled at once
    scrape = _scrape(metrics)
    assert total(scrape, "shoe2mqtt_cards_read_total", readable="true") == 4
    assert total(scrape, "shoe2mqtt_cards_read_total", readable="false") == 1
    assert total(scrape, "shoe2mqtt_notices_total", kind="card_unreadable") == 1
    assert total(scrape, "shoe2mqtt_notices_total", kind="wager_rejected") == 1
    assert total(scrape, "shoe2mqtt_rejected_events_total", source="request") == 2
    assert total(scrape, "shoe2mqtt_rejected_events_total", code="wager_rejected") == 1
    assert total(scrape, "shoe2mqtt_rejected_events_total", code="unknown_command") == 1
    assert total(scrape, "shoe2mqtt_settlements_total", result="win") == 1
    assert total(scrape, "shoe2mqtt_settlements_total") == 1
    # The last card was read at the clock's 104; the scrape reads it at 105.
    assert total(scrape, "shoe2mqtt_seconds_since_last_card", table="bj1") == 1

    # The journal replayed after a restart: everything applied again, nothing counted again.
    counted = {
        k: v for k, v in scrape.items() if k[0].startswith("shoe2mqtt_") and k[0].endswith("_total")
    }
    replayed = make_service()
    replayed.observer = metrics
    with replayed.replaying():
        request(replayed, "wager", seat=1, kind="blackjack", amount="25")
        request(replayed, "teleport")
        request(replayed, "close_betting")
        drawn(replayed, "KD 7S KH QH")
    again = _scrape(metrics)
    assert {
        k: v for k, v in again.items() if k[0].startswith("shoe2mqtt_") and k[0].endswith("_total")
    } == counted


def test_metrics_are_off_by_default_and_on_localhost_when_on(tmp_path: Path) -> None:
    base = '[mqtt]\nhost = "broker"\n[[table]]\nid = "bj-1"\ngame = "blackjack"\n'
    base += 'limits.blackjack = { min = "10", max = "500" }\n'
    base += 'limits.twenty_point_bonus = { min = "5", max = "100" }\n'
    base += 'shoe = { protocol = "reference", transport = "serial", port = "/dev/ttyUSB0" }\n'
    path = tmp_path / "shoe2mqtt.toml"
    path.write_text(base, encoding="utf-8")
    assert load_config(path).metrics == MetricsConfig(enabled=False, host="127.0.0.1", port=9917)
    path.write_text(base + "[metrics]\nenabled = true\n", encoding="utf-8")
    assert load_config(path).metrics == MetricsConfig(enabled=True, host="127.0.0.1", port=9917)
    path.write_text(
        base + '[metrics]\nenabled = "yes"\nhost = ""\nport = 70000\nlisten = 1\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigErrors) as caught:
        load_config(path)
    assert [e.field for e in caught.value.errors] == [
        "metrics.enabled",
        "metrics.host",
        "metrics.port",
        "metrics.listen",
    ]


async def test_a_port_in_use_is_an_error_line_and_the_daemon_goes_on() -> None:
    """Metrics are never worth a table: the endpoint retries, it does not stop the daemon."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        metrics = DaemonMetrics(node="n", version="v", tables=[], readings=_Daemon())
        with capture_logs() as logs:
            serving = asyncio.create_task(
                serve_metrics(metrics, MetricsConfig(enabled=True, port=port))
            )
            await until(lambda: bool(logs))
            assert not serving.done()
            serving.cancel()
            await asyncio.wait([serving])
    [line] = logs
    assert (line["event"], line["log_level"]) == ("metrics.bind_failed", "error")
    assert (line["port"], line["retry_in"]) == (port, 30.0)
    assert "address already in use" in line["error"]


def test_what_each_shoe_line_dropped_is_counted_by_reason() -> None:
    """Noise is counted, never journaled (docs/protocol.md §2.4): the counts are the metrics'."""
    daemon = _Daemon()
    line = LineCounts(
        bytes_read=10_000, garbage_bytes=9_000, bad_checksum=3, malformed=40,
        unknown_message=1, unsolicited_replies=39,
    )  # fmt: skip
    daemon.now = Readings(
        broker_connected=True, backlog=0, reader_links={"bj1": "connected"},
        lines={"bj1": line}, overflowed={"bj1": 7},
    )  # fmt: skip
    scrape = _scrape(DaemonMetrics(node="n", version="v", tables=["bj1"], readings=daemon))
    assert total(scrape, "shoe2mqtt_line_bytes_total", table="bj1") == 10_000
    assert total(scrape, "shoe2mqtt_line_garbage_bytes_total", table="bj1") == 9_000
    dropped = {
        reason: total(scrape, "shoe2mqtt_line_frames_dropped_total", table="bj1", reason=reason)
        for reason in ("bad_checksum", "malformed", "unknown_message", "unsolicited_reply")
    }
    assert dropped == {"bad_checksum": 3, "malformed": 40, "unknown_message": 1,
                       "unsolicited_reply": 39}  # fmt: skip
    assert total(scrape, "shoe2mqtt_line_frames_dropped_total", reason="overflow") == 7
