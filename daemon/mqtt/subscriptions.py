"""What the link hears: the topic filters of a connection, subscribing to them, and handing
each message received to the link's owner.

A connection subscribes at QoS 1 to the request filters, the watched state topics, the
presences' topics and the daemon's own bridge state, before it says `online`: once a
display sees `online`, requests it sends are heard. aiomqtt signals a lost connection by
ending the message iteration with `MqttError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import structlog
from paho.mqtt.client import topic_matches_sub
from paho.mqtt.reasoncodes import ReasonCode

from daemon.mqtt.client import subscribe

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import aiomqtt

    from daemon.mqtt.presence import Presences

# QoS 1: in the daemon's session the broker queues what is sent while the link is down (a
# request, a state that changed, the daemon's own will) and hands it over on the next
# connection, unless the link was down longer than takeover.RESUME_WITHIN.
REQUEST_QOS: Final = 1
STATE_QOS: Final = 1
# The link's lines, whichever of its modules writes them: a filter on `logger` keeps working.
_log = structlog.get_logger("daemon.mqtt.link")


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message from one of the subscriptions, free of aiomqtt's and paho's types."""

    topic: str
    payload: bytes
    retain: bool


OnMessage = Callable[[InboundMessage], Awaitable[None]]
OnRequest = Callable[[InboundMessage], None]


def topic_filters(
    subscriptions: Sequence[str], watches: Sequence[str], own: Iterable[str]
) -> list[tuple[str, int]]:
    """Every filter of a connection: the requests, the watches, and the `own` topics (the
    presences' and the bridge state) unless a watch covers them (one copy of each message)."""
    watched = [(f, STATE_QOS) for f in watches]
    watched += [
        (topic, STATE_QOS) for topic in own if not any(topic_matches_sub(f, topic) for f in watches)
    ]
    return [*((f, REQUEST_QOS) for f in subscriptions), *watched]


async def subscribe_all(client: aiomqtt.Client, filters: list[tuple[str, int]]) -> None:
    """Subscribe to `filters`; a filter the broker refuses is logged, not retried."""
    codes = await subscribe(client, filters)
    refused = [f for (f, _), code in zip(filters, codes, strict=True) if _is_failure(code)]
    if refused:
        # Reconnecting would not change the broker's ACL; say so loudly and go on.
        _log.error("mqtt.subscription_refused", topic_filters=refused)


async def hand_over_messages(
    client: aiomqtt.Client, presences: Presences, on_message: OnMessage | None
) -> None:
    """Each message received to `on_message`, noting the word heard on a presence's topic;
    ends with `MqttError` when the connection is lost: that is how aiomqtt reports it."""
    seen, presence_topics = presences.seen, presences.by_topic
    async for message in client.messages:
        inbound = InboundMessage(
            topic=message.topic.value,
            payload=_payload_bytes(message.payload),
            retain=message.retain,
        )
        if inbound.topic in presence_topics and inbound.payload:
            seen[inbound.topic] = inbound.payload
        if on_message is None:
            continue  # a presence's topic, heard for the goodbyes alone
        try:
            await on_message(inbound)
        except Exception:  # noqa: BLE001 - one bad request must not take the table's link down
            _log.exception("mqtt.on_message_failed", topic=inbound.topic)


def _is_failure(code: int | ReasonCode) -> bool:
    # MQTT 3.1.1 section 3.9.3: a SUBACK return code of 0x80 or more refuses the filter.
    value: int = code.value if isinstance(code, ReasonCode) else code
    return value >= 0x80


def _payload_bytes(payload: object) -> bytes:
    # paho always delivers bytes; aiomqtt's annotation is wider than what it hands over.
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    return b"" if payload is None else str(payload).encode()
