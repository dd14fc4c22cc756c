"""Typed errors of the rules core.

Every error carries the data a person needs to act on it (which seat, which wager, which
field) in attributes, and a `code` a machine can switch on. Raising one never leaves the
engine half-changed: handlers validate first and mutate after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


class RulesError(Exception):
    """Base of every error the rules core raises."""

    code = "rules_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(RulesError):
    """A table configuration value is missing, malformed or not allowed by the regulations.

    `problems` holds every such value found in the configuration it was raised for, this one
    first, so that a person fixing a file reads them all in one run rather than one per edit.
    """

    code = "invalid_config"

    def __init__(self, field: str, message: str, *, others: Sequence[ConfigError] = ()) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.detail = message  # the message without the field, for a checker that names it
        self.problems: tuple[ConfigError, ...] = (self, *others)

    @classmethod
    def of_all(cls, problems: Sequence[ConfigError]) -> ConfigError:
        """One error that reads as the first of `problems` and carries them all."""
        first, *others = problems
        return cls(first.field, first.detail, others=others)


class CardParseError(RulesError):
    """Text that does not name a card (e.g. `1X`)."""

    code = "invalid_card"

    def __init__(self, text: str, message: str) -> None:
        super().__init__(f"{text!r}: {message}")
        self.text = text


class EventError(RulesError):
    """A table event that cannot be applied; the engine's state is unchanged."""

    code = "invalid_event"


class MalformedEvent(EventError):
    """An event record with a missing or ill-typed field."""

    code = "malformed_event"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class WagerRejected(EventError):
    """A wager outside its window, outside the limits, or without the wager it depends on."""

    code = "wager_rejected"

    def __init__(self, seat: int, kind: str, reason: str, message: str) -> None:
        super().__init__(f"seat {seat} {kind}: {message}")
        self.seat = seat
        self.kind = kind
        self.reason = reason


class CardRejected(EventError):
    """A card that cannot belong to the round (no round, round over, not in the shoe)."""

    code = "card_rejected"

    def __init__(self, reason: str, message: str) -> None:
        # The card itself is deliberately not part of the message: a rejected card may be a
        # hole card, and error messages travel to logs and MQTT responses.
        super().__init__(message)
        self.reason = reason


class ActionRejected(EventError):
    """A dealer action that is out of turn or not allowed for the hand."""

    code = "action_rejected"

    def __init__(self, action: str, reason: str, message: str) -> None:
        super().__init__(f"{action}: {message}")
        self.action = action
        self.reason = reason


class RoundStateError(EventError):
    """An event that does not fit the round's phase (a shuffle mid-round, a void with no round)."""

    code = "round_state"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
