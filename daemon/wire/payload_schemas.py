"""The JSON Schemas of the payloads the AsyncAPI document describes (daemon.wire.asyncapi).

Each message's payload as the code's own tables define it: the envelope every journaled
message wears, the round's events, a settlement, the notices' kinds, each command's request
and its response. The document's assembly (channels, addresses, operations) is asyncapi's.
"""

from __future__ import annotations

from typing import Any, Final

from daemon.numbers.wire import DEALER_REQUEST
from daemon.wire.envelope import SCHEMA_VERSION
from daemon.wire.surveillance import SURVEILLANCE_NOTICES
from rules.games import Action, Step, WagerKind
from rules.outputs import NoticeKind, Phase, Result

STR = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
AMOUNT = {
    "type": "string",
    "pattern": r"^-?\d+\.\d{2}$",
    "description": "dollars, a decimal string",
}
SEAT = {"type": "integer", "minimum": 1, "maximum": 7}
CARD = {"type": "string", "pattern": r"^(A|[2-9]|10|J|Q|K)[SHDC]$"}
NULLABLE_INT = {"type": ["integer", "null"]}


def object_schema(
    required: dict[str, Any], optional: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "type": "object",
        "required": sorted(required),
        "properties": {**required, **(optional or {})},
    }


def enveloped(
    kind: str, body: dict[str, Any], optional: dict[str, Any] | None = None
) -> dict[str, Any]:
    return object_schema(
        {
            "schema": {"const": SCHEMA_VERSION},
            "id": {
                "type": "string",
                "pattern": "^[0-9a-f]{32}$",
                "description": "unique; derived from the journal, the same on a resend",
            },
            "table": STR,
            "seq": {"type": "integer", "minimum": 1, "description": "per table, +1 per message"},
            "ts": {
                "type": "string",
                "format": "date-time",
                "description": "when the event that caused the message was journaled (UTC)",
            },
            "type": {"const": kind},
            **body,
        },
        optional,
    )


EVENTS: dict[str, dict[str, Any]] = {
    "round_opened": {"round": INT},
    "wager_accepted": {
        "round": INT,
        "seat": SEAT,
        "wager": {"enum": [k.value for k in WagerKind]},
        "amount": AMOUNT,
    },
    "wager_withdrawn": {
        "round": INT,
        "seat": SEAT,
        "wager": {"enum": [k.value for k in WagerKind]},
    },
    "betting_closed": {
        "round": INT,
        "step": {"enum": [s.value for s in Step], "description": "where the deal goes on"},
    },
    "shoe_shuffled": {"shoe": INT},
    "card_burned": {"shoe": INT},
    "card_dealt": {
        "round": INT,
        "to": {"enum": ["player", "dealer"]},
        "seat": NULLABLE_INT,
        "hand": NULLABLE_INT,
        "card": {"oneOf": [CARD, {"type": "null"}], "description": "null when dealt face down"},
        "face_up": BOOL,
    },
    "player_acted": {
        "round": INT,
        "seat": SEAT,
        "hand": INT,
        "action": {"enum": [a.value for a in Action]},
    },
    "hand_completed": {
        "round": INT,
        "to": {"enum": ["player", "dealer"]},
        "seat": NULLABLE_INT,
        "hand": NULLABLE_INT,
        "total": INT,
        "reason": STR,
    },
    "hole_card_revealed": {"round": INT, "card": CARD, "dealer_total": INT},
    "round_ended": {"round": INT, "voided": BOOL, "reason": STR},
}

SETTLEMENT = {
    "round": INT,
    "seat": SEAT,
    "hand": NULLABLE_INT,
    "wager": {"enum": [k.value for k in WagerKind]},
    "outcome": STR,
    "result": {"enum": [r.value for r in Result]},
    "odds": {"type": ["string", "null"], "description": "e.g. '9 to 1'; null unless won"},
    "stake": AMOUNT,
    "won": AMOUNT,
    "phase": {"enum": [p.value for p in Phase]},
    "order": {"type": "integer", "minimum": 1},
    "floorperson": BOOL,
    "limited": BOOL,
    "citation": STR,
    "review": BOOL,
}

NOTICE_KINDS = [str(kind) for kind in (*NoticeKind, *SURVEILLANCE_NOTICES)] + [
    "card_unreadable",
    "sequence_gap",
    "reader_reconnected",
    "reader_restarted",
    "daemon_restarted",
    "held_cards_dropped",
    "internal_error",
    "outbox_filling",
    "reader_disconnected",
    "reader_fault",
    "cut_card",
    "card_rejected",
    "wager_rejected",
    "action_rejected",
    "round_state",
    # A card's place could not be declared, or a card or frame the table did not expect
    # (docs/rules.md, decisions 13 and 15).
    "declaration_missing",
    "crossed_request",
    "unheard_round",
    "unheard_shuffle",
    "card_before_round",
    "retransmitted_card",
    "card_outside_game",
    "sequence_conflict",
    "reader_silent",
    # The daemon's own (daemon.request_gate, daemon.mqtt.takeover, daemon.table.claims,
    # daemon.journal).
    "requests_refused",
    "requests_muted",
    "client_id_in_use",
    "link_unstable",
    "table_claimed",
    "table_claim_ended",
    "clock_stepped",
    "archive_quarantined",
    # What the shoe's line cost the table (daemon.table.shoe_line): noise, and an inbox it
    # overfilled.
    "line_noise",
    "reader_overflow",
]

# Every request may carry these (docs/mqtt.md, "Requests and responses").
_EVERY_REQUEST: Final = {
    "transaction": {"type": ["string", "integer"], "description": "repeated in the response"},
    "seen": {
        "type": "integer",
        "minimum": 0,
        "description": "the highest seq of the table's messages the console had received "
        "when it sent the request: lets the table recognise a request that crossed a card",
    },
    "by": {"type": "string", "maxLength": 64, "description": "who sent it: journaled with it"},
}


def _request(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return object_schema(required, {**(optional or {}), **_EVERY_REQUEST})


REQUESTS: dict[str, dict[str, Any]] = {
    "wager": _request(
        {"seat": SEAT, "kind": {"enum": [k.value for k in WagerKind]}, "amount": AMOUNT}
    ),
    "withdraw": _request({"seat": SEAT, "kind": {"enum": [k.value for k in WagerKind]}}),
    "close_betting": _request(
        {},
        {
            "wagers": {
                "type": "array",
                "minItems": 1,
                "items": {
                    **object_schema(
                        {
                            "seat": SEAT,
                            "kind": {"enum": [k.value for k in WagerKind]},
                            "amount": AMOUNT,
                        }
                    ),
                    "additionalProperties": False,
                },
                "description": "the layout: the window's wagers, made with its close in one "
                "request, all or none; each seat and kind once",
            }
        },
    ),
    "action": _request(
        {"seat": SEAT, "action": {"enum": [a.value for a in Action]}}, {"hand": INT}
    ),
    "card": _request({"card": {"type": "string", "description": "e.g. 'QH', '10S' or 'TS'"}}),
    "void": _request({}, {"reason": STR}),
    "shuffle": _request({}),
    "resume": _request({}),
    "status": _request({}),
    "dealer": _request(DEALER_REQUEST),
}

# The request gate's refusal is not journaled: it takes no number of the table's (docs/mqtt.md).
_RESPONSE_SEQ: Final = {
    "type": "integer",
    "minimum": 0,
    "description": "per table, +1 per message; 0 for a refusal by the request gate (not journaled)",
}


NODE_ANSWERED: Final = {
    "type": ["string", "null"],
    "description": "the node of the daemon that answered (two daemons on one table: two nodes)",
}


def response_schema(body: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    response = enveloped("response", body, optional)
    response["properties"]["seq"] = _RESPONSE_SEQ
    return response
