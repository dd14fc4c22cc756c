"""The AsyncAPI 3.0 description of every topic and payload, built from the code's own tables.

`docs/asyncapi.json` is this document, written by `shoe2mqtt asyncapi`; a test fails when
the two differ, so the published description cannot drift from what the daemon sends.
"""

from __future__ import annotations

from typing import Any

from daemon.envelope import SCHEMA_VERSION
from daemon.topics import COMMANDS
from rules.games import Action, WagerKind
from rules.outputs import NoticeKind, Phase, Result

_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_AMOUNT = {
    "type": "string",
    "pattern": r"^-?\d+\.\d{2}$",
    "description": "dollars, a decimal string",
}
_SEAT = {"type": "integer", "minimum": 1, "maximum": 7}
_CARD = {"type": "string", "pattern": r"^(A|[2-9]|10|J|Q|K)[SHDC]$"}
_NULLABLE_INT = {"type": ["integer", "null"]}


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": sorted(required),
        "properties": {**required, **(optional or {})},
    }


def _enveloped(
    kind: str, body: dict[str, Any], optional: dict[str, Any] | None = None
) -> dict[str, Any]:
    return _object(
        {
            "schema": {"const": SCHEMA_VERSION},
            "id": {
                "type": "string",
                "pattern": "^[0-9a-f]{32}$",
                "description": "unique; the same on a resend",
            },
            "table": _STR,
            "seq": {"type": "integer", "minimum": 1, "description": "per table, +1 per message"},
            "ts": {"type": "string", "format": "date-time"},
            "type": {"const": kind},
            **body,
        },
        optional,
    )


_EVENTS: dict[str, dict[str, Any]] = {
    "round_opened": {"round": _INT},
    "wager_accepted": {
        "round": _INT,
        "seat": _SEAT,
        "wager": {"enum": [k.value for k in WagerKind]},
        "amount": _AMOUNT,
    },
    "wager_withdrawn": {
        "round": _INT,
        "seat": _SEAT,
        "wager": {"enum": [k.value for k in WagerKind]},
    },
    "shoe_shuffled": {"shoe": _INT},
    "card_burned": {"shoe": _INT},
    "card_dealt": {
        "round": _INT,
        "to": {"enum": ["player", "dealer"]},
        "seat": _NULLABLE_INT,
        "hand": _NULLABLE_INT,
        "card": {"oneOf": [_CARD, {"type": "null"}], "description": "null when dealt face down"},
        "face_up": _BOOL,
    },
    "player_acted": {
        "round": _INT,
        "seat": _SEAT,
        "hand": _INT,
        "action": {"enum": [a.value for a in Action]},
    },
    "hand_completed": {
        "round": _INT,
        "to": {"enum": ["player", "dealer"]},
        "seat": _NULLABLE_INT,
        "hand": _NULLABLE_INT,
        "total": _INT,
        "reason": _STR,
    },
    "hole_card_revealed": {"round": _INT, "card": _CARD, "dealer_total": _INT},
    "round_ended": {"round": _INT, "voided": _BOOL, "reason": _STR},
}

_SETTLEMENT = {
    "round": _INT,
    "seat": _SEAT,
    "hand": _NULLABLE_INT,
    "wager": {"enum": [k.value for k in WagerKind]},
    "outcome": _STR,
    "result": {"enum": [r.value for r in Result]},
    "odds": {"type": ["string", "null"], "description": "e.g. '9 to 1'; null unless won"},
    "stake": _AMOUNT,
    "won": _AMOUNT,
    "phase": {"enum": [p.value for p in Phase]},
    "order": {"type": "integer", "minimum": 1},
    "floorperson": _BOOL,
    "limited": _BOOL,
    "citation": _STR,
    "review": _BOOL,
}

_NOTICE_KINDS = [k.value for k in NoticeKind] + [
    "card_unreadable",
    "sequence_gap",
    "reader_reconnected",
    "reader_disconnected",
    "reader_fault",
    "cut_card",
    "card_rejected",
    "wager_rejected",
    "action_rejected",
    "round_state",
]

_REQUESTS: dict[str, dict[str, Any]] = {
    "wager": _object(
        {"seat": _SEAT, "kind": {"enum": [k.value for k in WagerKind]}, "amount": _AMOUNT}
    ),
    "withdraw": _object({"seat": _SEAT, "kind": {"enum": [k.value for k in WagerKind]}}),
    "action": _object(
        {"seat": _SEAT, "action": {"enum": [a.value for a in Action]}}, {"hand": _INT}
    ),
    "card": _object({"card": {"type": "string", "description": "e.g. 'QH', '10S' or 'TS'"}}),
    "void": _object({}, {"reason": _STR}),
    "shuffle": _object({}),
    "status": _object({}),
}


def _message(name: str, payload: dict[str, Any], summary: str) -> dict[str, Any]:
    return {"name": name, "summary": summary, "contentType": "application/json", "payload": payload}


def build(base: str = "shoe2mqtt") -> dict[str, Any]:
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}

    def channel(
        key: str, address: str, message: dict[str, Any], description: str, *, receive: bool = False
    ) -> None:
        channels[key] = {
            "address": address,
            "description": description,
            "messages": {message["name"]: message},
        }
        operations[f"{'receive' if receive else 'send'}_{key}"] = {
            "action": "receive" if receive else "send",
            "channel": {"$ref": f"#/channels/{key}"},
        }

    table = {"table": {"description": "the table's configured id"}}
    channel(
        "bridge_state",
        f"{base}/bridge/state",
        {
            **_message(
                "bridge_state",
                {"type": "string", "enum": ["online", "offline"]},
                "plain text, retained; the will sets offline",
            ),
            "contentType": "text/plain",
        },
        "Availability of the daemon (retained, QoS 1).",
    )
    for key, address, message, description in [
        (
            "table_state",
            "state",
            _message(
                "table_state",
                _enveloped("table_state", {"game": _STR, "reader": {"type": "object"}}),
                "retained reader state",
            ),
            "The table's reader: link, faults, last seen, identity (retained).",
        ),
        (
            "round_snapshot",
            "round",
            _message(
                "round_snapshot",
                _enveloped(
                    "round_snapshot",
                    {
                        "round": {"type": ["object", "null"]},
                        "review": {"type": "array"},
                        "settlements": {"type": "array"},
                        "notices": {"type": "array"},
                    },
                ),
                "retained public view of the round",
            ),
            "What anyone at the table can see of the current round (retained).",
        ),
        (
            "settlement",
            "settlement",
            _message("settlement", _enveloped("settlement", _SETTLEMENT), "one settled wager"),
            "Settlements in regulation order (QoS 1, not retained).",
        ),
    ]:
        channels[key] = {
            "address": f"{base}/{{table}}/{address}",
            "parameters": table,
            "description": description,
            "messages": {message["name"]: message},
        }
        operations[f"send_{key}"] = {"action": "send", "channel": {"$ref": f"#/channels/{key}"}}
    for kind, body in _EVENTS.items():
        key = f"event_{kind}"
        channels[key] = {
            "address": f"{base}/{{table}}/event/{kind}",
            "parameters": table,
            "description": f"Round event {kind} (QoS 1).",
            "messages": {kind: _message(kind, _enveloped(kind, body), kind.replace("_", " "))},
        }
        operations[f"send_{key}"] = {"action": "send", "channel": {"$ref": f"#/channels/{key}"}}
    channels["notice"] = {
        "address": f"{base}/{{table}}/notice/{{kind}}",
        "parameters": {**table, "kind": {"enum": _NOTICE_KINDS}},
        "description": "Notices for the pit (QoS 1).",
        "messages": {
            "notice": _message(
                "notice",
                _enveloped(
                    "notice",
                    {
                        "round": _NULLABLE_INT,
                        "kind": {"enum": _NOTICE_KINDS},
                        "seat": _NULLABLE_INT,
                        "message": _STR,
                        "citation": _STR,
                    },
                ),
                "something a person must know or do",
            )
        },
    }
    operations["send_notice"] = {"action": "send", "channel": {"$ref": "#/channels/notice"}}
    for command in COMMANDS:
        channels[f"request_{command}"] = {
            "address": f"{base}/{{table}}/request/{command}",
            "parameters": table,
            "description": f"Request {command}; an optional transaction id comes back.",
            "messages": {
                f"request_{command}": _message(
                    f"request_{command}", _REQUESTS[command], f"{command} request"
                )
            },
        }
        operations[f"receive_request_{command}"] = {
            "action": "receive",
            "channel": {"$ref": f"#/channels/request_{command}"},
        }
        channels[f"response_{command}"] = {
            "address": f"{base}/{{table}}/response/{command}",
            "parameters": table,
            "description": f"Response to {command}.",
            "messages": {
                f"response_{command}": _message(
                    f"response_{command}",
                    _enveloped(
                        "response",
                        {
                            "command": {"const": command},
                            "transaction": {"type": ["string", "integer", "null"]},
                            "status": {"enum": ["ok", "error"]},
                        },
                        {
                            "data": {"type": "object", "description": "when status is ok"},
                            "error": _object({"code": _STR, "message": _STR}),
                        },
                    ),
                    f"{command} response",
                )
            },
        }
        operations[f"send_response_{command}"] = {
            "action": "send",
            "channel": {"$ref": f"#/channels/response_{command}"},
        }
    channels["response_unknown_command"] = {
        "address": f"{base}/{{table}}/response/{{command}}",
        "parameters": {**table, "command": {"description": "a command the daemon does not know"}},
        "description": "The error response to a request for an unknown command.",
        "messages": {
            "response_unknown_command": _message(
                "response_unknown_command",
                _enveloped(
                    "response",
                    {
                        "command": _STR,
                        "transaction": {"type": ["string", "integer", "null"]},
                        "status": {"const": "error"},
                        "error": _object({"code": {"const": "unknown_command"}, "message": _STR}),
                    },
                ),
                "unknown command",
            )
        },
    }
    operations["send_response_unknown_command"] = {
        "action": "send",
        "channel": {"$ref": "#/channels/response_unknown_command"},
    }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "shoe2mqtt",
            "version": "1.0.0",
            "description": (
                "Card-reading blackjack shoe to MQTT: settlements of the New Jersey 20 point "
                "bonus, Double Attack optional bonus and Triple Attack attack wagers. "
                "See docs/mqtt.md."
            ),
        },
        "defaultContentType": "application/json",
        "channels": channels,
        "operations": operations,
    }
