"""The daemon's MQTT side: settings, an outbox that loses nothing, a self-healing link, and
the one builder of a client for the configured broker."""

from daemon.mqtt.client import new_client
from daemon.mqtt.errors import InvalidMessage, MqttLinkError, MqttSettingsError, OutboxFull
from daemon.mqtt.link import MqttLink
from daemon.mqtt.link_state import LinkState, LinkStateChange, OnStateChange
from daemon.mqtt.outbox import (
    MemoryOutbox,
    MessageId,
    OutboundMessage,
    Outbox,
    PendingMessages,
    QoS,
    QueuedMessage,
)
from daemon.mqtt.presence import Presence
from daemon.mqtt.secret import Secret
from daemon.mqtt.settings import MqttSettings, TlsSettings
from daemon.mqtt.subscriptions import InboundMessage, OnMessage

__all__ = [
    "InboundMessage",
    "InvalidMessage",
    "LinkState",
    "LinkStateChange",
    "MemoryOutbox",
    "MessageId",
    "MqttLink",
    "MqttLinkError",
    "MqttSettings",
    "MqttSettingsError",
    "OnMessage",
    "OnStateChange",
    "OutboundMessage",
    "Outbox",
    "OutboxFull",
    "PendingMessages",
    "Presence",
    "QoS",
    "QueuedMessage",
    "Secret",
    "TlsSettings",
    "new_client",
]
