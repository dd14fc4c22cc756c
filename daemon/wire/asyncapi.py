"""The AsyncAPI 3.0 description of every topic and payload, built from the code's own tables.

`docs/asyncapi.json` is this document, written by `shoe2mqtt asyncapi`; a test fails when
the two differ, so the published description cannot drift from what the daemon sends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from daemon.numbers.wire import DEALER_REQUEST, add_stats_channel
from daemon.wire.availability import CONFLICT, OFFLINE, ONLINE
from daemon.wire.envelope import SCHEMA_VERSION
from daemon.wire.surveillance import SURVEILLANCE_BODIES, SURVEILLANCE_NOTICES
from daemon.wire.topics import COMMANDS
from rules.games import Action, Step, WagerKind
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
                "description": "unique; derived from the journal, the same on a resend",
            },
            "table": _STR,
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
    "betting_closed": {
        "round": _INT,
        "step": {"enum": [s.value for s in Step], "description": "where the deal goes on"},
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

_NOTICE_KINDS = [str(kind) for kind in (*NoticeKind, *SURVEILLANCE_NOTICES)] + [
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
    return _object(required, {**(optional or {}), **_EVERY_REQUEST})


_REQUESTS: dict[str, dict[str, Any]] = {
    "wager": _request(
        {"seat": _SEAT, "kind": {"enum": [k.value for k in WagerKind]}, "amount": _AMOUNT}
    ),
    "withdraw": _request({"seat": _SEAT, "kind": {"enum": [k.value for k in WagerKind]}}),
    "close_betting": _request({}),
    "action": _request(
        {"seat": _SEAT, "action": {"enum": [a.value for a in Action]}}, {"hand": _INT}
    ),
    "card": _request({"card": {"type": "string", "description": "e.g. 'QH', '10S' or 'TS'"}}),
    "void": _request({}, {"reason": _STR}),
    "shuffle": _request({}),
    "resume": _request({}),
    "status": _request({}),
    "dealer": _request(DEALER_REQUEST),
}


def _message(name: str, payload: dict[str, Any], summary: str) -> dict[str, Any]:
    return {"name": name, "summary": summary, "contentType": "application/json", "payload": payload}


def build(base: str = "shoe2mqtt") -> dict[str, Any]:
    """The whole document for a daemon publishing under `base`."""
    api = _Channels()
    _bridge_channels(api, base)
    _table_presence_channels(api, base)
    add_stats_channel(api, base, _message, _TABLE)  # the numbers' (daemon/numbers/wire.py)
    _table_channels(api, base)
    _kinds(api, base, "event", _EVENTS, "Round event")
    _notice_channel(api, base)
    _kinds(api, base, "surveillance", SURVEILLANCE_BODIES, "For the surveillance user alone:")
    _request_channels(api, base)
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
        "channels": api.channels,
        "operations": api.operations,
    }


@dataclass(slots=True)
class _Channels:
    """The document's channels and, beside each, the one operation the daemon does on it."""

    channels: dict[str, Any] = field(default_factory=dict)
    operations: dict[str, Any] = field(default_factory=dict)

    def add(
        self,
        key: str,
        address: str,
        description: str,
        message: dict[str, Any],
        *,
        parameters: dict[str, Any] | None = None,
        receive: bool = False,
    ) -> None:
        """A channel carrying one message; the daemon sends on it, or receives (requests)."""
        channel: dict[str, Any] = {"address": address}
        if parameters is not None:
            channel["parameters"] = parameters
        channel["description"] = description
        channel["messages"] = {message["name"]: message}
        self.channels[key] = channel
        action = "receive" if receive else "send"
        ref = {"$ref": f"#/channels/{key}"}
        self.operations[f"{action}_{key}"] = {"action": action, "channel": ref}


_TABLE = {"table": {"description": "the table's configured id"}}
_NODE = {"node": {"description": "the daemon's node name ([mqtt] node)"}}


def _bridge_channels(api: _Channels, base: str) -> None:
    """Each daemon's own state and info (decision D1, docs/mqtt.md)."""
    message = _message(
        "bridge_state",
        {"type": "string", "enum": [ONLINE, OFFLINE]},
        "plain text, retained; the daemon's will sets offline",
    )
    api.add(
        "bridge_state",
        f"{base}/bridge/{{node}}/state",
        "Availability of one daemon (retained, QoS 1). A table is live iff its availability "
        "says online and so does the bridge state of the node it names.",
        {**message, "contentType": "text/plain"},
        parameters=_NODE,
    )
    api.add(
        "bridge_info",
        f"{base}/bridge/{{node}}/info",
        "What one daemon is (retained, QoS 1): its version, node name, the tables it serves, "
        "start time, the SHA-256 of the configuration file its settings were taken from and "
        "what of that file waits for a restart. Published on every connect and after a "
        "reload that changed it; kept on a clean stop (it says what ran there).",
        _message(
            "bridge_info",
            _object(
                {
                    "version": _STR,
                    "node": _STR,
                    "tables": {"type": "array", "items": _STR},
                    "started": {"type": "string", "format": "date-time"},
                    "config_sha256": {
                        "oneOf": [
                            {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                            {"type": "null"},
                        ],
                        "description": "of the file's bytes (`sha256sum`); null without a file",
                    },
                    "restart_needed": {
                        "type": "array",
                        "items": _STR,
                        "description": "what of that file does not run yet and waits for a "
                        "restart (mqtt, metrics, journal, `table <id> shoe`, `table <id> added`, "
                        "`table <id> removed`); empty: the daemon runs that file exactly",
                    },
                }
            ),
            "retained; a state, so no envelope",
        ),
        parameters=_NODE,
    )


def _table_presence_channels(api: _Channels, base: str) -> None:
    """Each table's availability (decision D1) and whether its journal can be written."""
    api.add(
        "availability",
        f"{base}/{{table}}/availability",
        "Whether a daemon serves the table (retained, QoS 1): online once it has recovered "
        "the table and is connected, offline on a clean stop; live only while the bridge "
        "state of the node it names says online too. conflict while another live daemon "
        "claims the table as well: written once by each claimant, naming itself (node) and "
        "the others (with); such a table is neither live nor offline, its cards are held, "
        "and no claimant says offline over it.",
        _message(
            "availability",
            _object(
                {"state": {"enum": [ONLINE, OFFLINE, CONFLICT]}, "node": _STR},
                {
                    "with": {
                        "type": "array",
                        "items": _STR,
                        "minItems": 1,
                        "description": "with state conflict: the other nodes that claim the "
                        "table, sorted",
                    }
                },
            ),
            "retained; a state, so no envelope",
        ),
        parameters=_TABLE,
    )
    api.add(
        "journal_state",
        f"{base}/{{table}}/journal",
        "Whether the table's journal can be written (retained, QoS 1): failing, with the "
        "reason and since when, while it cannot (the table waits, publishes nothing and "
        "loses nothing); ok when it can again, and at every start.",
        _message(
            "journal_state",
            _object(
                {"state": {"enum": ["ok", "failing"]}, "node": _STR},
                {"reason": _STR, "since": {"type": "string", "format": "date-time"}},
            ),
            "retained; a state, so no envelope: the journal cannot carry news of itself",
        ),
        parameters=_TABLE,
    )


def _table_channels(api: _Channels, base: str) -> None:
    """The table's retained state and round state, and its settlements."""
    snapshot = {
        "round": {"type": ["object", "null"]},
        "review": {"type": "array"},
        "awaiting_card_entry": {"type": "integer", "minimum": 0},
        "doubt": {
            "type": ["string", "null"],
            "description": "why the table holds the cards it receives until the dealer "
            "resumes or voids (a review reason); null when it is sure of every card",
        },
        "cards_held": {"type": "integer", "minimum": 0},
        "awaiting": {
            "type": ["object", "null"],
            "description": "what the first held card waits for: `declaration` (round, "
            "close_betting or decision), `seat`, `hand` and `since`; null when none waits",
        },
        "settlements": {"type": "array"},
        "notices": {"type": "array"},
    }
    state = {"type": {"const": "round_snapshot"}, "as_of": {"type": "integer", "minimum": 0},
             "ts": _STR, "table": _STR, "game": _STR, "shoe": _INT, **snapshot}  # fmt: skip
    channels: list[tuple[str, str, str, dict[str, Any], str]] = [
        (
            "table_state",
            "state",
            "The table's reader: link, faults, last seen, identity (retained).",
            _enveloped("table_state", {"game": _STR, "reader": {"type": "object"}}),
            "retained reader state",
        ),
        (
            "round_snapshot",
            "round",
            "The round as anyone at the table sees it: a retained state, no id, no seq.",
            _object(state),
            "retained public view of the round",
        ),
        (
            "settlement",
            "settlement",
            "Settlements in regulation order (QoS 1, not retained).",
            _enveloped("settlement", _SETTLEMENT),
            "one settled wager",
        ),
    ]
    for key, address, description, payload, summary in channels:
        message = _message(key, payload, summary)
        api.add(key, f"{base}/{{table}}/{address}", description, message, parameters=_TABLE)


def _kinds(api: _Channels, base: str, segment: str, bodies: dict[str, Any], what: str) -> None:
    for kind, body in bodies.items():
        api.add(
            f"{segment}_{kind}",
            f"{base}/{{table}}/{segment}/{kind}",
            f"{what} {kind} (QoS 1).",
            _message(kind, _enveloped(kind, body), kind.replace("_", " ")),
            parameters=_TABLE,
        )


def _notice_channel(api: _Channels, base: str) -> None:
    body = {
        "round": _NULLABLE_INT,
        "kind": {"enum": _NOTICE_KINDS},
        "seat": _NULLABLE_INT,
        "message": _STR,
        "citation": _STR,
    }
    api.add(
        "notice",
        f"{base}/{{table}}/notice/{{kind}}",
        "Notices for the pit (QoS 1).",
        _message("notice", _enveloped("notice", body), "something a person must know or do"),
        parameters={**_TABLE, "kind": {"enum": _NOTICE_KINDS}},
    )


# The request gate's refusal is not journaled: it takes no number of the table's (docs/mqtt.md).
_RESPONSE_SEQ: Final = {
    "type": "integer",
    "minimum": 0,
    "description": "per table, +1 per message; 0 for a refusal by the request gate (not journaled)",
}


_NODE_ANSWERED: Final = {
    "type": ["string", "null"],
    "description": "the node of the daemon that answered (two daemons on one table: two nodes)",
}


def _response(body: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    response = _enveloped("response", body, optional)
    response["properties"]["seq"] = _RESPONSE_SEQ
    return response


def _request_channels(api: _Channels, base: str) -> None:
    """Each command's request (which the daemon receives) and response, then the error
    response to a command it does not know."""
    transaction = {"type": ["string", "integer", "null"]}
    for command in COMMANDS:
        api.add(
            f"request_{command}",
            f"{base}/{{table}}/request/{command}",
            f"Request {command}; an optional transaction id comes back.",
            _message(f"request_{command}", _REQUESTS[command], f"{command} request"),
            parameters=_TABLE,
            receive=True,
        )
        response = _response(
            {
                "command": {"const": command},
                "transaction": transaction,
                "node": _NODE_ANSWERED,
                "status": {"enum": ["ok", "error"]},
            },
            {
                "data": {"type": "object", "description": "when status is ok"},
                "error": _object({"code": _STR, "message": _STR}),
                "duplicate": {
                    "const": True,
                    "description": "the broker delivered this request again: answered as "
                    "before, not obeyed again",
                },
            },
        )
        api.add(
            f"response_{command}",
            f"{base}/{{table}}/response/{command}",
            f"Response to {command}.",
            _message(f"response_{command}", response, f"{command} response"),
            parameters=_TABLE,
        )
    unknown = _response(
        {
            "command": _STR,
            "transaction": transaction,
            "node": _NODE_ANSWERED,
            "status": {"const": "error"},
            "error": _object({"code": {"const": "unknown_command"}, "message": _STR}),
        },
    )
    api.add(
        "response_unknown_command",
        f"{base}/{{table}}/response/{{command}}",
        "The error response to a request for an unknown command.",
        _message("response_unknown_command", unknown, "unknown command"),
        parameters={**_TABLE, "command": {"description": "a command the daemon does not know"}},
    )
