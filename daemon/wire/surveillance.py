"""The surveillance room's part of the wire contract: its message kinds and their payloads.

`<base>/<table>/surveillance/<kind>` (daemon.wire.topics), read by the surveillance user
alone (docs/mosquitto/acl); docs/mqtt.md, "Surveillance", says what each field means. The
table's surveillance (daemon.table.surveillance) publishes them; the AsyncAPI document
(daemon.wire.asyncapi) describes them from these tables.
"""

from __future__ import annotations

from typing import Any, Final

FOREIGN_CARD: Final = "foreign_card"  # a card the shoe cannot hold: the kind and the notice
SHOE_ENDED: Final = "shoe_ended"  # at each shuffle: the census and the seats' evidence
# The notices the surveillance adds to the pit's (`<base>/<table>/notice/<kind>`).
SURVEILLANCE_NOTICES: Final = (FOREIGN_CARD,)

_INT = {"type": "integer"}
_NULLABLE_INT = {"type": ["integer", "null"]}
_BOOL = {"type": "boolean"}
_STR = {"type": "string"}
_CARD = {"type": "string", "pattern": r"^(A|[2-9]|10|J|Q|K)[SHDC]$"}
_OBJECTS = {"type": "array", "items": {"type": "object"}}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": sorted(properties), "properties": properties}


_CENSUS = _object(
    {
        "shoe": _INT,
        "decks": _INT,
        "deck_kind": {"enum": ["standard", "spanish"]},
        "complete": _BOOL,
        "cards_seen": _INT,
        "cards_left": _INT,
        "foreign": {"type": "array", "items": _CARD},
        "impossible": {
            "type": "array",
            "items": _object({"what": _STR, "seen": _INT, "holds": _INT}),
        },
        "by_rank": {"type": "object"},
        "by_suit": {"type": "object"},
    }
)
# Each kind's body (the envelope's fields are added by the AsyncAPI document).
SURVEILLANCE_BODIES: Final[dict[str, dict[str, Any]]] = {
    FOREIGN_CARD: {
        "round": _NULLABLE_INT,
        "shoe": _INT,
        "card": _CARD,
        "burned": _BOOL,
        "reason": {"enum": ["not_in_deck_kind", "over_the_shoe"]},
        "holds": _INT,
        "named_to_pit": _BOOL,
    },
    SHOE_ENDED: {
        "shoe": _INT,
        "census": _CENSUS,
        "count_system": _STR,
        "rounds": _OBJECTS,
        "evidence": _OBJECTS,
        "flagged": _OBJECTS,
        "thresholds": {"type": "object"},
    },
}
