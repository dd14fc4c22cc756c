"""Logging: structlog for the daemon, the standard library's records routed through it.

JSON Lines on stdout under systemd (journald keeps them), a readable console on a terminal.
Every line about a round carries `table` and `round` (the table service binds them).

Raw frames: the drivers log every received byte at DEBUG, which is what a technician needs
on a shoe out of play, but the bytes of a live shoe include the hole card before its reveal.
So the hex of frames stays hidden unless `[logging] raw_frames = true` is set on purpose
(docs/mqtt.md, "Logging"): the line still says how many bytes went by. The drivers' own lines
carry the bytes as `drivers.logs.WireBytes`, hidden unless `reveal_wire_bytes` is among the
processors; `RawFrameGuard` does the same for a plugin that logs hex through the standard
library.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import TextIO

import structlog

from drivers.logs import reveal_wire_bytes

_HEX = re.compile(r"^[0-9a-f]{2}( [0-9a-f]{2})*$")


class RawFrameGuard(logging.Filter):
    """Replaces hex byte dumps in `drivers.*` DEBUG records with their length."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("drivers") and record.levelno <= logging.DEBUG:
            args = record.args if isinstance(record.args, tuple) else ()
            if args and isinstance(args[-1], str) and _HEX.match(args[-1]):
                hidden = (
                    f"<{args[-1].count(' ') + 1} bytes, hidden: they may hold an unrevealed card>"
                )
                record.args = (*args[:-1], hidden)
        return True


def configure(
    *,
    fmt: str = "auto",
    level: str = "info",
    raw_frames: bool = False,
    stream: TextIO | None = None,
) -> None:
    """Set up structlog and the standard library's logging for the daemon's process."""
    out = stream or sys.stdout
    console = fmt == "console" or (fmt == "auto" and out.isatty())
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if raw_frames:
        shared.append(reveal_wire_bytes)
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer(colors=out.isatty())
        if console
        else structlog.processors.JSONRenderer()
    )
    numeric = logging.getLevelNamesMapping()[level.upper()]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    if not raw_frames:
        handler.addFilter(RawFrameGuard())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
