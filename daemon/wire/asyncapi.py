"""The AsyncAPI 3.0 description of every topic and payload, built from the code's own tables.

`docs/asyncapi.json` is this document, written by `shoe2mqtt asyncapi`; a test fails when
the two differ, so the published description cannot drift from what the daemon sends. The
payloads' schemas are daemon.wire.payload_schemas'; this module assembles the document: each
channel, its address and parameters, its message and the daemon's operation on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from daemon.numbers.wire import add_stats_channel
from daemon.wire.availability import CONFLICT, OFFLINE, ONLINE
from daemon.wire.envelope import SCHEMA_VERSION
from daemon.wire.payload_schemas import (
    EVENTS,
    INT,
    NODE_ANSWERED,
    NOTICE_KINDS,
    NULLABLE_INT,
    REQUESTS,
    SETTLEMENT,
    STR,
    enveloped,
    object_schema,
    response_schema,
)
from daemon.wire.surveillance import SURVEILLANCE_BODIES
from daemon.wire.topics import COMMANDS


def _message(name: str, payload: dict[str, Any], summary: str) -> dict[str, Any]:
    return {"name": name, "summary": summary, "contentType": "application/json", "payload": payload}


def build(base: str = "shoe2mqtt") -> dict[str, Any]:
    """The whole document for a daemon publishing under `base`."""
    api = _Channels()
    _bridge_channels(api, base)
    _table_presence_channels(api, base)
    add_stats_channel(api, base, _message, _TABLE)  # the numbers' (daemon/numbers/wire.py)
    _table_channels(api, base)
    _kinds(api, base, "event", EVENTS, "Round event")
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
            object_schema(
                {
                    "version": STR,
                    "node": STR,
                    "tables": {"type": "array", "items": STR},
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
                        "items": STR,
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
            object_schema(
                {"state": {"enum": [ONLINE, OFFLINE, CONFLICT]}, "node": STR},
                {
                    "with": {
                        "type": "array",
                        "items": STR,
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
            object_schema(
                {"state": {"enum": ["ok", "failing"]}, "node": STR},
                {"reason": STR, "since": {"type": "string", "format": "date-time"}},
            ),
            "retained; a state, so no envelope: the journal cannot carry news of itself",
        ),
        parameters=_TABLE,
    )


# Console contract 4 (`mqtt.contract = 4`): one numbered message an input, the round with
# what the input caused; `as_of` is then its own `seq`.
_ONE_MESSAGE: dict[str, Any] = {
    "schema": {"const": SCHEMA_VERSION},
    "id": {"type": "string", "description": "contract 4: derived from the journal"},
    "seq": {"type": "integer", "minimum": 1, "description": "contract 4: per table"},
    "events": {
        "type": "array",
        "items": {"type": "object"},
        "description": "contract 4: what the input caused, in order: round events, "
        "settlements and notices, each the body it has on its own topic under contract 3",
    },
    "response": {
        "type": "object",
        "description": "contract 4, a request's input: the response contract 3 published "
        "on response/<command>",
    },
}


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
             "ts": STR, "table": STR, "game": STR, "shoe": INT, **snapshot}  # fmt: skip
    channels: list[tuple[str, str, str, dict[str, Any], str]] = [
        (
            "table_state",
            "state",
            "The table's reader: link, faults, last seen, identity (retained).",
            enveloped("table_state", {"game": STR, "reader": {"type": "object"}}),
            "retained reader state",
        ),
        (
            "round_snapshot",
            "round",
            (
                "The round as anyone at the table sees it, retained. Contract 3: a state, no "
                "id, no seq. Contract 4: one numbered message an input, with `events` and "
                "`response`."
            ),
            object_schema(state, _ONE_MESSAGE),
            "retained public view of the round",
        ),
        (
            "settlement",
            "settlement",
            "Settlements in regulation order (QoS 1, not retained).",
            enveloped("settlement", SETTLEMENT),
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
            _message(kind, enveloped(kind, body), kind.replace("_", " ")),
            parameters=_TABLE,
        )


def _notice_channel(api: _Channels, base: str) -> None:
    body = {
        "round": NULLABLE_INT,
        "kind": {"enum": NOTICE_KINDS},
        "seat": NULLABLE_INT,
        "message": STR,
        "citation": STR,
    }
    api.add(
        "notice",
        f"{base}/{{table}}/notice/{{kind}}",
        "Notices for the pit (QoS 1).",
        _message("notice", enveloped("notice", body), "something a person must know or do"),
        parameters={**_TABLE, "kind": {"enum": NOTICE_KINDS}},
    )


def _request_channels(api: _Channels, base: str) -> None:
    """Each command's request (which the daemon receives) and response, then the error
    response to a command it does not know."""
    transaction = {"type": ["string", "integer", "null"]}
    for command in COMMANDS:
        api.add(
            f"request_{command}",
            f"{base}/{{table}}/request/{command}",
            f"Request {command}; an optional transaction id comes back.",
            _message(f"request_{command}", REQUESTS[command], f"{command} request"),
            parameters=_TABLE,
            receive=True,
        )
        response = response_schema(
            {
                "command": {"const": command},
                "transaction": transaction,
                "node": NODE_ANSWERED,
                "status": {"enum": ["ok", "error"]},
            },
            {
                "data": {"type": "object", "description": "when status is ok"},
                "error": object_schema({"code": STR, "message": STR}),
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
    unknown = response_schema(
        {
            "command": STR,
            "transaction": transaction,
            "node": NODE_ANSWERED,
            "status": {"const": "error"},
            "error": object_schema({"code": {"const": "unknown_command"}, "message": STR}),
        },
    )
    api.add(
        "response_unknown_command",
        f"{base}/{{table}}/response/{{command}}",
        "The error response to a request for an unknown command.",
        _message("response_unknown_command", unknown, "unknown command"),
        parameters={**_TABLE, "command": {"description": "a command the daemon does not know"}},
    )
