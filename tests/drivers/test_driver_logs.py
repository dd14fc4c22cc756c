"""What the driver logs: structlog lines with fields, every one naming its table and endpoint,
and never the bytes of a frame unless the site opted in (a live frame carries the hole card).
"""

from __future__ import annotations

import io
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
import structlog

from daemon.system.logs import configure
from daemon.testing import SocatPair
from drivers.driver import Connected, Disconnected, LinkFault, Reconnected
from drivers.events import CardDrawn
from drivers.logs import WireBytes
from drivers.transports import SerialSettings, transport_factory
from tests.drivers.test_driver import HELLO, driver_for, reference, running
from tests.drivers.test_transports import Pty

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from drivers.driver import ShoeDriver

CODEC_AND_READER = ("drivers.reader", "drivers.codecs.reference")


async def _deal_a_noisy_card(driver: ShoeDriver, pty: Pty) -> None:
    async with running(driver) as shoe:
        await shoe.next(Connected)
        frame = reference("AS", 1)
        # The answer to the greeting, garbage, a broken frame, a card.
        pty.write(HELLO + b"\x00\x01" + frame[:-3] + b"\x7e" + frame)
        await shoe.next(CardDrawn)


async def test_every_line_about_a_reader_names_its_table_and_endpoint(
    tmp_path: Path, driver_logs: list[dict[str, Any]]
) -> None:
    socat = SocatPair(tmp_path)
    await socat.start()
    try:
        driver = driver_for(transport_factory(SerialSettings(str(socat.host_path))), table="bj-1")
        async with running(driver) as shoe:
            await shoe.next(Connected)
            socat.write(reference("AS", 1) + HELLO + b"\x00\x01" + reference("KD", 3))
            await shoe.next(CardDrawn)
            await socat.stop()
            await shoe.next(Disconnected)
            await shoe.next(LinkFault)
            await socat.start()
            await shoe.next(Reconnected)
    finally:
        await socat.stop()
    events = {line["event"] for line in driver_logs}
    assert {
        "reader.connected",
        "reader.received",
        "codec.garbage_skipped",
        "reader.sent",
        "reader.before_greeting_dropped",
        "reader.link_lost",
        "reader.retrying",
        "reader.reconnected",
    } <= events
    assert {line["logger"] for line in driver_logs} == set(CODEC_AND_READER)
    for line in driver_logs:
        assert (line["table"], line["endpoint"]) == ("bj-1", str(socat.host_path)), line
        assert line["event"].split(".")[0] in {"reader", "codec"}, line


async def test_one_line_per_retry_with_the_delay_rounded(
    driver_logs: list[dict[str, Any]],
) -> None:
    driver = driver_for(transport_factory(SerialSettings("/dev/ttyUSB9-not-here")), table="bj-2")
    async with running(driver) as shoe:
        faults = [await shoe.next(LinkFault) for _ in range(3)]
    retries = [line for line in driver_logs if line["event"] == "reader.retrying"][:3]
    assert [(r["attempt"], r["retry_in"]) for r in retries] == [
        (f.attempt, round(f.retry_in, 2)) for f in faults
    ]
    assert {(r["log_level"], r["reason"], r["table"]) for r in retries} == {
        ("warning", faults[0].reason, "bj-2")
    }


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    saved = structlog.get_config()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**saved)


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize("raw_frames", [False, True])
async def test_frame_bytes_are_shown_only_where_the_site_opted_in(raw_frames: bool) -> None:  # noqa: FBT001 - a parameter of the test
    stream = io.StringIO()
    configure(fmt="json", level="debug", raw_frames=raw_frames, stream=stream)
    with Pty() as pty:
        await _deal_a_noisy_card(driver_for(transport_factory(SerialSettings(pty.path))), pty)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    dumps = [
        line for line in lines if line["logger"] in CODEC_AND_READER and line["level"] == "debug"
    ]
    card = reference("AS", 1).hex(" ")
    shown = [value for line in dumps for value in line.values() if card in str(value)]
    hidden = [v for line in dumps for v in line.values() if "bytes, hidden" in str(v)]
    assert {line["event"] for line in dumps} >= {"reader.received", "codec.frame_dropped"}
    assert (bool(shown), bool(hidden)) == (raw_frames, not raw_frames)


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize(("level", "built"), [("info", False), ("debug", True)])
async def test_a_frames_debug_line_is_built_only_when_the_level_shows_it(
    level: str,
    built: bool,  # noqa: FBT001 - a parameter of the test
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The driver asks the level before it makes a frame's DEBUG line (a card's bytes read,
    its acknowledgement written): at info, a card costs none of it."""
    made: list[bytes] = []

    class Counted(WireBytes):
        __slots__ = ()

        def __init__(self, data: bytes) -> None:
            made.append(data)
            super().__init__(data)

    monkeypatch.setattr("drivers.driver.WireBytes", Counted)
    configure(fmt="json", level=level, stream=io.StringIO())
    with Pty() as pty:
        await _deal_a_noisy_card(driver_for(transport_factory(SerialSettings(pty.path))), pty)
    assert bool(made) == built, made
