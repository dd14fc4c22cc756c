"""A table service fed by hand, with a fixed clock: what the daemon's table tests share."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import count
from typing import TYPE_CHECKING, Any

from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.topics import Topics
from drivers import events as shoe
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound

SEEN = "2026-11-29T14:00:00.000Z"


def make_service(
    game: str = "blackjack",
    *,
    readable_ids: bool = True,
    protocol: str = "reference",
    **overrides: Any,
) -> TableService:
    """A service with a fixed clock, reading a shoe of `protocol`; `readable_ids` numbers
    event ids id-1, id-2, ..."""
    ids = count(1)
    envelopes = Envelopes(
        overrides.get(
            "id", {"blackjack": "bj1", "double_attack": "da1", "triple_attack": "ta1"}[game]
        ),
        clock=lambda: datetime(2026, 11, 29, 14, 0, tzinfo=UTC),
        new_id=(lambda: f"id-{next(ids)}") if readable_ids else None,
    )
    return TableService(
        make_config(game, **overrides),
        Topics("casino"),
        envelopes,
        protocol=protocol,
    )


def drawn(service: TableService, text: str, *, seq: int = 0) -> list[Outbound]:
    out: list[Outbound] = []
    for code in text.split():
        out += service.on_shoe_event(shoe.CardDrawn(code[:-1], code[-1], seq), seen_at=SEEN)  # type: ignore[arg-type]
    return out


def take(service: TableService, event: shoe.Event) -> tuple[list[Outbound], int | None]:
    """An event from the shoe as the daemon takes it (decision D3): judged first, a loss
    applied before it, a repeat not applied; returns the outputs and what was acknowledged."""
    intake = service.judge(event)
    out: list[Outbound] = []
    if intake.gap is not None:
        out += service.on_shoe_event(intake.gap, seen_at=SEEN)
    if intake.conflict is not None:
        out += service.on_shoe_event(intake.conflict, seen_at=SEEN)
    if intake.take:
        out += service.on_shoe_event(event, seen_at=SEEN)
    return out, intake.acknowledge


def request(service: TableService, command: str, **body: Any) -> list[Outbound]:
    return service.on_request(command, json.dumps(body).encode())


def bodies(messages: list[Outbound], suffix: str = "") -> list[dict[str, Any]]:
    """The bodies of the messages on topics ending with `suffix`; the round states (outside
    the numbering: `seq` 0) only when `suffix` names their topic."""
    states = suffix.endswith("round")
    return [
        json.loads(m.payload)
        for m in messages
        if m.topic.endswith(suffix) and (m.seq or states or not m.topic.endswith("/round"))
    ]


def response(messages: list[Outbound]) -> dict[str, Any]:
    [last] = [b for b in bodies(messages) if b["type"] == "response"]
    return last
