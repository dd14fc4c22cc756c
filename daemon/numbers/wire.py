"""The numbers' part of the wire contract, as JSON Schema for docs/asyncapi.json: the
retained `<table>/stats` state and the `dealer` request's fields (docs/mqtt.md)."""

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


def add_stats_channel(
    api: Any,  # noqa: ANN401 - daemon.wire.asyncapi's channel list, which imports this module
    base: str,
    message: Callable[[str, dict[str, Any], str], dict[str, Any]],
    table: dict[str, Any],
) -> None:
    """`<base>/<table>/stats` into the document, with asyncapi's own `message` and the
    `table` parameter."""
    summary = "retained; a state, so no envelope"
    message_ = message("stats", STATS_PAYLOAD, summary)
    api.add("stats", f"{base}/{{table}}/stats", STATS_TEXT, message_, parameters=table)
