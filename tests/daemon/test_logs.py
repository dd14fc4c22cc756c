"""Logging: JSON Lines for journald, and no unrevealed card in any line by default."""

from __future__ import annotations

import io
import json
import logging
from typing import TYPE_CHECKING

import pytest
import structlog

from daemon.system.logs import configure

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_service_logs_are_json_lines_with_table_and_round() -> None:
    stream = io.StringIO()
    configure(fmt="json", level="info", stream=stream)
    structlog.get_logger("daemon.table").info("table.settled", table="bj-1", round=7, won="40.00")
    logging.getLogger("drivers.enq").warning("reconnected to %s after %.1f s", "/dev/ttyUSB0", 2.0)
    first, second = _lines(stream)
    assert {k: first[k] for k in ("event", "table", "round", "won", "level")} == {
        "event": "table.settled",
        "table": "bj-1",
        "round": 7,
        "won": "40.00",
        "level": "info",
    }
    assert second["event"] == "reconnected to /dev/ttyUSB0 after 2.0 s"
    assert second["logger"] == "drivers.enq"


def test_raw_frames_are_hidden_by_default_even_at_debug() -> None:
    stream = io.StringIO()
    configure(fmt="json", level="debug", stream=stream)
    logging.getLogger("drivers.reference").debug("rx %s: %s", "/dev/pts/4", "7e 01 02 00 0c 2b 7e")
    [line] = _lines(stream)
    assert "7e 01" not in str(line["event"])
    assert "7 bytes, hidden" in str(line["event"])


def test_raw_frames_can_be_shown_on_purpose() -> None:
    stream = io.StringIO()
    configure(fmt="json", level="debug", raw_frames=True, stream=stream)
    logging.getLogger("drivers.reference").debug("rx %s: %s", "/dev/pts/4", "7e 01 02")
    assert _lines(stream)[0]["event"] == "rx /dev/pts/4: 7e 01 02"


def test_debug_lines_are_dropped_at_info() -> None:
    stream = io.StringIO()
    configure(fmt="json", level="info", stream=stream)
    structlog.get_logger().debug("noise")
    logging.getLogger("drivers.enq").debug("rx %s: %s", "x", "05")
    assert stream.getvalue() == ""


def test_console_format_is_readable_text() -> None:
    stream = io.StringIO()
    configure(fmt="console", level="info", stream=stream)
    structlog.get_logger().info("connected", table="bj-1")
    text = stream.getvalue()
    assert "connected" in text
    assert "table" in text
    assert not text.startswith("{")
