"""The MQTT side's errors: one small tree, each error carrying the data a person acts on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


class MqttLinkError(Exception):
    """Base of every error the daemon's MQTT package raises on purpose."""


class MqttSettingsError(MqttLinkError, ValueError):
    """A setting in the `[mqtt]` table that can never work; raised when the settings are built.

    `field` is the dotted name as written in the config file (`mqtt.tls.ca_file`), so the
    message tells an operator which line to fix. Values are deliberately not echoed: a
    misplaced secret must not end up in a log line through its own error message.

    `host` marks a problem of this host rather than of the file's text: a file the settings
    name is missing or unreadable, an environment variable is unset. `problems` holds every
    problem found while building the settings, this one first.
    """

    def __init__(
        self,
        field: str,
        message: str,
        *,
        host: bool = False,
        others: Sequence[MqttSettingsError] = (),
    ) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.host = host
        self.problems: tuple[MqttSettingsError, ...] = (self, *others)

    @classmethod
    def of_all(cls, problems: Sequence[MqttSettingsError]) -> MqttSettingsError:
        """One error that reads as the first of `problems` and carries them all."""
        first, *others = problems
        return cls(first.field, first.message, host=first.host, others=others)


class InvalidMessage(MqttLinkError, ValueError):
    """An outbound message the broker would refuse; a bug in the code that built it."""

    def __init__(self, field: str, message: str, *, topic: str) -> None:
        super().__init__(f"{field} of message to {topic!r}: {message}")
        self.field = field
        self.topic = topic


class OutboxFull(MqttLinkError):
    """The outbox holds `capacity` unacknowledged messages and refused one more.

    Nothing was dropped: the message that was refused is still the caller's, and every
    message already queued will still be delivered once the broker is back.
    """

    def __init__(self, *, capacity: int, topic: str) -> None:
        super().__init__(
            f"outbox full: {capacity} messages wait for the broker; refused one to {topic!r}"
        )
        self.capacity = capacity
        self.topic = topic
