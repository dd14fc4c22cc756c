"""A table's journaled events, applied, as lines of a round log (docs/events.md, format 2):
the table's settings and state where the log begins, the journaled event itself with its
hash, the rules events it made, the messages it caused. The journal's archive writes them
(daemon.history.archiver), `shoe2mqtt journal show` and `export` print them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from daemon.journal.chain import body_text
from daemon.journal.rows import Checkpoint, JournalEvent
from daemon.round_log import LOG_FORMAT
from rules.config import TableConfig
from rules.events import event_to_mapping

if TYPE_CHECKING:
    from daemon.table.runner import Applied


def table_line(config: TableConfig, checkpoint: Checkpoint | None = None) -> dict[str, Any]:
    """A round log's `table` line; with the table's state where the log begins, when the
    log does not begin with a new table (docs/events.md, format 2)."""
    line: dict[str, Any] = {"type": "table", "format": LOG_FORMAT, **config.to_mapping()}
    if checkpoint is not None:
        line["checkpoint"] = {
            "n": checkpoint.n,
            "at": checkpoint.at,
            "next_seq": checkpoint.next_seq,
            "open_round": checkpoint.open_round,
            "state": checkpoint.state,
        }
    return line


def checkpoint_of_line(table_id: str, line: dict[str, Any]) -> Checkpoint | None:
    """The checkpoint a `table` line carries (`table_line`), if it carries one."""
    data = line.get("checkpoint")
    if data is None:
        return None
    return Checkpoint(
        table_id,
        int(data["n"]),
        int(data["next_seq"]),
        str(data["at"]),
        bool(data["open_round"]),
        dict(data["state"]),
    )


def journal_line(event: JournalEvent, owner: int | None) -> dict[str, Any]:
    return {
        "type": "journal",
        "table": event.table_id,
        "n": event.n,
        "kind": event.kind,
        "at": event.at,
        "round": owner,
        "body": event.body,
        "hash": event.hash,
    }


def event_of_line(line: dict[str, Any]) -> JournalEvent:
    """The journaled event a `journal` line carries, as the database held it."""
    body = line["body"]
    json.loads(body_text(body))  # a body that is not JSON-able fails here, not later
    return JournalEvent(line["table"], line["n"], line["kind"], body, line["at"], line["hash"])


def archive_lines(event: JournalEvent, applied: Applied) -> list[dict[str, Any]]:
    """The journaled event, the rules events and settings it made, the messages it caused."""
    lines = [journal_line(event, applied.owner), *rules_lines(applied)]
    lines.extend(
        {
            "type": "published",
            "topic": message.topic,
            "retain": message.retain,
            "message": json.loads(message.payload),
        }
        for message in applied.messages
    )
    return lines


def rules_lines(applied: Applied) -> list[dict[str, Any]]:
    """The rules events the journaled event made, and the settings it put in force."""
    return [
        table_line(recorded) if isinstance(recorded, TableConfig) else event_to_mapping(recorded)
        for recorded in applied.recorded
    ]
