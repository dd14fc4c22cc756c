"""The round message of the dealer console's contract 4 (docs/mqtt.md, "One message an input").

Under contract 4 every journaled input that changes the round or answers a request (a card,
every journaled request, a start, a reader's event that tells the pit) is one numbered,
retained message on `<base>/<table>/round`: the envelope, the round as
it stands after the input (the body of contract 3's round state, `as_of` its own `seq`),
`events` (what the input caused, in order: the round events, settlements and notices, each in
the body it has on its own topic under contract 3) and, for a request, `response`.

A reader written for contract 3 reads `round` as the state it was, and misses only `events`
and `response`. `unbundled` gives a reader that wants them the messages contract 3 would
have published, in the order it would have published them, each on its own topic with the
envelope's `table`, `seq` and `ts` and an `id` of its own, then the round state; so the
console's simulator, the test harness's recorder and the ground-truth verdict read both
contracts with one code path.
"""

from __future__ import annotations

import json
from typing import Any, Final

from daemon.wire.envelope import Outbound

# The contracts a daemon publishes under (`mqtt.contract`): 3, a numbered message per event
# and the round as a throttled state; 4, one numbered message an input (decision M5).
STATE_CONTRACT: Final = 3
ROUND_CONTRACT: Final = 4
CONTRACTS: Final = (STATE_CONTRACT, ROUND_CONTRACT)
DEFAULT_CONTRACT: Final = STATE_CONTRACT

_ENVELOPE: Final = ("schema", "id", "table", "seq", "ts")
_CARRIED: Final = ("events", "response")


def is_round_message(topic: str, body: dict[str, Any]) -> bool:
    """Whether `body`, received on `topic`, is a contract 4 round message (numbered, with
    `events`), not a contract 3 round state."""
    return topic.endswith("/round") and isinstance(body.get("seq"), int) and "events" in body


def event_topic(prefix: str, body: dict[str, Any]) -> str:
    """The topic contract 3 published a carried event on (`prefix`: `<base>/<table>`)."""
    kind = body.get("type")
    if kind == "settlement":
        return f"{prefix}/settlement"
    if kind == "notice":
        return f"{prefix}/notice/{body.get('kind')}"
    return f"{prefix}/event/{kind}"


def unbundled(topic: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A message as (topic, body) pairs of contract 3: a round message's events, its response
    and its round state (without the envelope's `id`, `seq` and `schema`: a state); any
    other message as it is."""
    if not is_round_message(topic, body):
        return [(topic, body)]
    prefix = topic.removesuffix("/round")
    envelope = {key: body[key] for key in _ENVELOPE if key in body}
    own_id = str(body.get("id"))
    out: list[tuple[str, dict[str, Any]]] = []
    events = body.get("events")
    for index, event in enumerate(events if isinstance(events, list) else []):
        if isinstance(event, dict):
            stamped = {**envelope, "id": f"{own_id}.{index}", **event}
            out.append((event_topic(prefix, event), stamped))
    response = body.get("response")
    if isinstance(response, dict):
        stamped = {**envelope, "id": f"{own_id}.response", **response}
        out.append((f"{prefix}/response/{response.get('command')}", stamped))
    state = {
        key: value
        for key, value in body.items()
        if key not in _CARRIED and key not in ("schema", "id", "seq")
    }
    out.append((topic, state))
    return out


def unbundled_outbound(message: Outbound) -> list[Outbound]:
    """`unbundled` for a message as the daemon hands it to the outbox: the carried events and
    response numbered with the round message's `seq`, the round state outside the numbering
    (`seq` 0), as contract 3 would have published them; any other message as it is."""
    if not (message.seq and message.topic.endswith("/round")):
        return [message]
    body = json.loads(message.payload)
    if not is_round_message(message.topic, body):
        return [message]
    out = []
    for topic, part in unbundled(message.topic, body):
        payload = json.dumps(part, separators=(",", ":"), ensure_ascii=False).encode()
        if topic == message.topic:
            out.append(Outbound(topic, payload, message.qos, True, "", 0))
        else:
            out.append(Outbound(topic, payload, message.qos, False, str(part["id"]), message.seq))
    return out
