"""Round logs: write one, read one, run it through the rules core, say what happened.

A round log is JSON Lines (docs/events.md): a first `table` line with the configuration,
then one table event per line. `shoe2mqtt journal export` writes one from the journal and an
auditor replays it with `shoe2mqtt replay`: the same engine, the same outputs, every time.
This module is the format's one home; the commands (daemon/cli/) only open files and print.

Format 2 adds what the journal's archive needs (daemon/journal/archive.py): the `table` line
may carry the table's state where the log begins (`checkpoint`), a later `table` line puts
new settings in force between rounds, and `journal` and `published` lines (the journaled
event and the messages it caused) ride between the table events; the replay reads past them.
Format 3 adds the dealer's "No more bets" (`close_betting`), which the daemon now waits for
before it deals (docs/rules.md, decision 15). Every format 1 log is a format 2 log, and every
format 2 log a format 3 log: without `close_betting`, the first card of a window closes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.config import TableConfig
from rules.engine import TableEngine
from rules.engine_state import restore_engine
from rules.errors import ConfigError, EventError, MalformedEvent, RulesError
from rules.events import event_from_mapping, event_to_mapping
from rules.outputs import Notice, Settlement

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from rules.events import TableEvent

LOG_FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
# Lines the journal's archive adds for auditors; the rules core has nothing to do with them.
ANNOTATIONS = frozenset({"journal", "published"})


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
    return _table_line(number, _json_object(number, text))[0]


def _table_line(number: int, record: dict[str, Any]) -> tuple[TableConfig, TableEngine | None]:
    """The settings of a `table` line, and the engine in the state it carries, if any."""
    if record.get("type") != "table":
        raise ReplayError(number, "type", "the first line of a round log is the 'table' line")
    version = record.get("format", 1)
    if version not in READABLE_FORMATS:
        raise ReplayError(number, "format", f"this shoe2mqtt reads formats 1 to 3, not {version!r}")
    settings = {k: v for k, v in record.items() if k not in ("type", "format", "checkpoint")}
    try:
        config = TableConfig.from_mapping(settings)
    except ConfigError as exc:
        raise ReplayError(number, exc.field, exc.message.removeprefix(f"{exc.field}: ")) from None
    checkpoint = record.get("checkpoint")
    if checkpoint is None:
        return config, None
    try:
        return config, restore_engine(config, checkpoint["state"]["service"]["engine"])
    except (KeyError, TypeError, RulesError) as exc:
        raise ReplayError(number, "checkpoint", f"not a table state ({exc})") from None


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
        record = _json_object(number, text)
        if engine is None:
            config, restored = _table_line(number, record)
            engine = restored or TableEngine(config)
        elif record.get("type") not in ANNOTATIONS:
            engine, outputs = _apply_line(engine, number, record, everything=everything)
            yield from outputs
    if engine is None:
        raise ReplayError(1, "type", "the log is empty: it needs a 'table' line first")


def _apply_line(
    engine: TableEngine, number: int, record: dict[str, Any], *, everything: bool
) -> tuple[TableEngine, list[dict[str, Any]]]:
    """One line after the first: new settings (a `table` line, between rounds) or a table
    event. Returns the engine from then on and what the line caused (or its rejection)."""
    try:
        if record.get("type") == "table":
            return engine.reconfigured(_table_line(number, record)[0]), []
        try:
            event = event_from_mapping(record)
        except MalformedEvent as exc:
            raise ReplayError(
                number, exc.field, exc.message.removeprefix(f"{exc.field}: ")
            ) from None
        outputs = engine.apply(event)
    except EventError as exc:
        return engine, [
            {"type": "rejected", "line": number, "code": exc.code, "message": exc.message}
        ]
    return engine, [
        o.to_mapping() for o in outputs if everything or isinstance(o, Settlement | Notice)
    ]


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
