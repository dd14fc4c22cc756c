"""How the commands print what they read: one compact JSON object a line, as it happens."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import TYPE_CHECKING

from drivers.events import CardDrawn

if TYPE_CHECKING:
    from typing import TextIO


def json_line(record: object) -> str:
    """One record as compact JSON, the shape `jq` and the tests read line by line."""
    return json.dumps(record, separators=(",", ":"))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 settlement`, `2 settlements`, `1,000 rounds`: a count and its noun, agreeing."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def print_line(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()  # a pipe to a test or to `jq` must see each line as it happens


def event_record(event: object) -> dict[str, object]:
    """One shoe event as a JSON-ready dict: its type, then its fields; cards as "10S"."""
    record: dict[str, object] = {"type": type(event).__name__}
    if isinstance(event, CardDrawn):
        record["card"] = event.code
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        for field in dataclasses.fields(event):
            if isinstance(event, CardDrawn) and field.name in {"rank", "suit"}:
                continue
            record[field.name] = _json_value(getattr(event, field.name))
    return record


def _json_value(value: object) -> object:
    if isinstance(value, bytes):
        return value.hex(" ")
    if isinstance(value, float):
        return round(value, 3)
    return value


def drop_standard_output() -> None:
    """The reader of standard output went away (`| head`): what it did not want is no error.
    Standard output goes to /dev/null, so the flush at exit cannot fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
