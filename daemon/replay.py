"""Round logs: write one, read one, run it through the rules core, say what happened.

A round log is JSON Lines (docs/events.md): a first `table` line with the configuration,
then one table event per line. `shoe2mqtt journal export` writes one from the journal and an
auditor replays it with `shoe2mqtt replay`: the same engine, the same outputs, every time.
This module is the format's one home; the commands (daemon/cli/) only open files and print.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.config import TableConfig
from rules.engine import TableEngine
from rules.errors import ConfigError, EventError, MalformedEvent
from rules.events import event_from_mapping, event_to_mapping
from rules.outputs import Notice, Settlement

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from rules.events import TableEvent

LOG_FORMAT = 1


@dataclass(frozen=True, slots=True)
class ReplayError(Exception):
    """A line of the log that cannot be read: which line, which field, and why."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


def round_log(config: TableConfig, events: Iterable[TableEvent]) -> list[str]:
    """The lines of a round log: the table line, then each event; what `replay` reads back."""
    table = json.dumps({"type": "table", "format": LOG_FORMAT, **config.to_mapping()})
    return [table, *(json.dumps(event_to_mapping(event)) for event in events)]


def read_table_line(number: int, text: str) -> TableConfig:
    record = _json_object(number, text)
    if record.get("type") != "table":
        raise ReplayError(number, "type", "the first line of a round log is the 'table' line")
    version = record.get("format", LOG_FORMAT)
    if version != LOG_FORMAT:
        raise ReplayError(
            number, "format", f"this shoe2mqtt reads format {LOG_FORMAT}, not {version!r}"
        )
    settings = {k: v for k, v in record.items() if k not in ("type", "format")}
    try:
        return TableConfig.from_mapping(settings)
    except ConfigError as exc:
        raise ReplayError(number, exc.field, exc.message.removeprefix(f"{exc.field}: ")) from None


def replay(lines: Iterable[str], *, everything: bool = False) -> Iterator[dict[str, Any]]:
    """Yield, in order, every settlement and notice (or, with `everything`, every output).

    An event the engine rejects is reported as a `rejected` record and the replay goes on,
    exactly as the daemon goes on at the table; a line that cannot be read stops the
    replay with `ReplayError`.
    """
    engine: TableEngine | None = None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        if engine is None:
            engine = TableEngine(read_table_line(number, text))
            continue
        try:
            event = event_from_mapping(_json_object(number, text))
        except MalformedEvent as exc:
            raise ReplayError(
                number, exc.field, exc.message.removeprefix(f"{exc.field}: ")
            ) from None
        try:
            outputs = engine.apply(event)
        except EventError as exc:
            yield {"type": "rejected", "line": number, "code": exc.code, "message": exc.message}
            continue
        for output in outputs:
            if everything or isinstance(output, Settlement | Notice):
                yield output.to_mapping()
    if engine is None:
        raise ReplayError(1, "type", "the log is empty: it needs a 'table' line first")


def _json_object(number: int, text: str) -> dict[str, Any]:
    try:
        # Without its line ending: a line cut short in quoted text is then named as such,
        # not as a line break inside the text.
        record = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise ReplayError(number, "json", json_problem(exc)) from None
    if not isinstance(record, dict):
        raise ReplayError(number, "json", "each line is one JSON object")
    return record


# What the json module's terse messages mean to a person reading a round log; the column is
# added after. Unknown messages are shown as they are.
_JSON_PROBLEMS: dict[str, str] = {
    "Unterminated string starting at": (
        "the line ends inside the quoted text that opens at column {column}: it was cut "
        "short, or a closing quote is missing"
    ),
    "Expecting value": "a value is missing at column {column}",
    "Expecting ',' delimiter": "a comma is missing at column {column}",
    "Expecting ':' delimiter": "a colon is missing after the field name, at column {column}",
    "Expecting property name enclosed in double quotes": (
        "a field name in double quotes is missing at column {column}"
    ),
    "Extra data": "more text follows the JSON object, at column {column}: one object a line",
    "Invalid control character at": (
        "a control character (a tab or a line break) inside quoted text, at column {column}"
    ),
    "Invalid \\escape": "a backslash that escapes nothing, at column {column}",
}


def json_problem(error: json.JSONDecodeError) -> str:
    """What is wrong with a line that is not JSON, in words, with its column.

    A line that stops where more must follow was cut short (a copy that lost its end, a disk
    that filled up): that is said first, because it is what a person can act on.
    """
    problem = _JSON_PROBLEMS.get(error.msg, f"{error.msg} (column {{column}})").format(
        column=error.colno
    )
    if error.pos >= len(error.doc.rstrip()):
        return f"the line ends too soon, as if cut short: {problem}"
    return f"not JSON: {problem}"
