"""The example round logs played through the daemon's own table service, message by message.

What the display is fed in its unit tests is exactly what the daemon would publish for the
same round (topics, envelopes, retained snapshots), without a broker in between.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.envelope import Envelopes
from daemon.replay import replay
from daemon.table_service import TableService
from daemon.topics import Topics
from drivers import events as shoe
from rules.config import TableConfig

if TYPE_CHECKING:
    from daemon.envelope import Outbound

EXAMPLES = Path(__file__).parents[2] / "examples"
BASE = "shoe2mqtt"


def example(name: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The table line, the events and the raw lines of `examples/<name>`."""
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    table = json.loads(lines[0])
    del table["type"], table["format"]
    return table, [json.loads(line) for line in lines[1:]], lines


def expected_settlements(name: str) -> list[dict[str, Any]]:
    """What `shoe2mqtt replay` settles for the log, in order: the oracle."""
    return [r for r in replay(example(name)[2]) if r["type"] == "settlement"]


def played(name: str) -> list[Outbound]:
    """Every message the daemon publishes for the log, in order (burn cards as the shoe
    reports them: a shuffle, then the burn card marked burned)."""
    table, events, _ = example(name)
    config = TableConfig.from_mapping(table)
    service = TableService(config, Topics(BASE), Envelopes(config.table_id))
    out: list[Outbound] = [service.state(), service.snapshot()]
    burns = 0
    for seq, event in enumerate(events, start=1):
        kind = event["type"]
        if kind == "shuffle":
            out += service.on_shoe_event(shoe.NewShoe(), seen_at="2026-11-29T14:00:00.000Z")
            burns = config.burn_cards
        elif kind == "card":
            code = event["card"]
            drawn = shoe.CardDrawn(code[:-1], code[-1], seq, burned=burns > 0)
            burns = max(0, burns - 1)
            out += service.on_shoe_event(drawn, seen_at="2026-11-29T14:00:00.000Z")
        else:
            body = {k: v for k, v in event.items() if k != "type"}
            out += service.on_request(kind, json.dumps(body).encode())
    return out
