"""The numbers' part of the wire contract, as JSON Schema for docs/asyncapi.json: the
retained `<table>/stats` and `<table>/days` states and the `dealer` request's fields
(docs/mqtt.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

_STR: Final = {"type": "string"}
_NUMBER: Final = {"type": ["number", "null"]}
_CENTS: Final = {"type": "integer", "description": "cents"}

DEALER_REQUEST: Final[dict[str, Any]] = {
    "dealer": {**_STR, "minLength": 1, "maxLength": 64, "description": "who deals from now on"}
}

_WAGER: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["wager", "handle_cents", "players_won_cents", "house_win_cents", "hold"],
    "properties": {
        "wager": _STR, "settlements": {"type": "integer"}, "handle_cents": _CENTS,
        "players_won_cents": _CENTS, "house_win_cents": _CENTS, "hold": _NUMBER,
        "theoretical_hold": _NUMBER, "confidence": {"type": "number"},
        "band": {"type": ["array", "null"], "items": {"type": "number"},
                 "description": "[low, high] of the hold's band; null without exact figures"},
        "alert": {"type": ["string", "null"],
                  "description": "the hold outside its band, and its chance, in words"},
        "alert_chance": _NUMBER,
    },
}  # fmt: skip

STATS_TEXT: Final = (
    "The table's numbers for the current shift (retained, QoS 1), published at each round's "
    "end: pace, per bonus wager its handle, players' win, house win and hold beside the "
    "theoretical hold and its band, and the shift's last rounds. Rebuilt from the journal at "
    "a restart; a state, so no envelope."
)
STATS_PAYLOAD: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["history", "numbers", "shift", "table", "updated"],
    "properties": {
        "table": _STR,
        "shift": {"type": ["string", "null"], "description": "its gaming day and start"},
        "updated": {"type": ["string", "null"], "format": "date-time"},
        "numbers": {
            "type": ["object", "null"],
            "properties": {"wagers": {"type": "array", "items": _WAGER}},
            "description": "as `shoe2mqtt report --format json` gives a group",
        },
        "history": {"type": "array", "items": {"type": "object"}},
    },
}
DAYS_TEXT: Final = (
    "The table's closed gaming days, the last 30 before today (retained, QoS 1), each as "
    "`shoe2mqtt report --by day --format json` gives a group: published once counted at "
    "start and when a round of a new gaming day closes the day before. A state, so no envelope."
)
DAYS_PAYLOAD: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["days", "table", "updated"],
    "properties": {
        "table": _STR,
        "updated": {"type": ["string", "null"], "format": "date-time"},
        "days": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["day", "rounds", "wagers"],
                "properties": {
                    "day": {**_STR, "format": "date", "description": "the gaming day"},
                    "rounds": {"type": "integer"},
                    "rounds_per_hour": _NUMBER,
                    "wagers": {"type": "array", "items": _WAGER},
                },
            },
            "description": "oldest first, at most 30, days without a round left out",
        },
    },
}


def add_stats_channel(
    api: Any,  # noqa: ANN401 - daemon.wire.asyncapi's channel list, which imports this module
    base: str,
    message: Callable[[str, dict[str, Any], str], dict[str, Any]],
    table: dict[str, Any],
) -> None:
    """`<base>/<table>/stats` and `<base>/<table>/days` into the document, with asyncapi's
    own `message` and the `table` parameter."""
    summary = "retained; a state, so no envelope"
    message_ = message("stats", STATS_PAYLOAD, summary)
    api.add("stats", f"{base}/{{table}}/stats", STATS_TEXT, message_, parameters=table)
    days = message("days", DAYS_PAYLOAD, summary)
    api.add("days", f"{base}/{{table}}/days", DAYS_TEXT, days, parameters=table)
