"""The MQTT topic layout, in one place (docs/mqtt.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SEGMENT = 128  # characters: a host name (64) and a systemd instance name fit
# Matched whole (fullmatch): `$` would accept "bj-1\n", and a topic with a newline in it is
# a malformed packet to the broker, which drops the connection.
_SEGMENT = re.compile(rf"[a-z0-9][a-z0-9_-]{{0,{MAX_SEGMENT - 1}}}")

COMMANDS = (
    "wager",
    "withdraw",
    "close_betting",
    "action",
    "card",
    "void",
    "shuffle",
    "resume",
    "status",
    "dealer",
)
# A table's topics that carry a state without the envelope (no id, no seq: docs/mqtt.md).
STATE_TOPICS = ("availability", "journal", "stats", "days", "round")


def has_envelope(topic: str) -> bool:
    """Whether a message the daemon publishes on `topic` carries the envelope: all do but
    the daemon's own state and its tables' states (STATE_TOPICS). Under console contract 4,
    `<table>/round` is numbered and carries it: the topic cannot say which contract wrote
    a message there, its payload can (daemon.wire.round_message.is_round_message)."""
    return "/bridge/" not in topic and topic.rsplit("/", 1)[-1] not in STATE_TOPICS


def valid_segment(text: str) -> bool:
    """Topic segments are lowercase ASCII: letters, digits, '-' and '_'; never a wildcard."""
    return _SEGMENT.fullmatch(text) is not None


@dataclass(frozen=True, slots=True)
class Topics:
    base: str = "shoe2mqtt"

    def bridge_state(self, node: str) -> str:
        """Retained `online`/`offline` of the daemon named `node`, and its will."""
        return f"{self.base}/bridge/{node}/state"

    def bridge_info(self, node: str) -> str:
        """Retained JSON: the daemon named `node`, its version, tables and configuration."""
        return f"{self.base}/bridge/{node}/info"

    @property
    def bridge_state_filter(self) -> str:
        return f"{self.base}/bridge/+/state"

    def availability(self, table: str) -> str:
        """Retained JSON: whether the daemon named in it serves the table (docs/mqtt.md)."""
        return f"{self.base}/{table}/availability"

    def journal_state(self, table: str) -> str:
        """Retained JSON: whether the table's journal can be written (docs/mqtt.md)."""
        return f"{self.base}/{table}/journal"

    def stats(self, table: str) -> str:
        """Retained JSON: the table's numbers for the current shift (docs/numbers.md)."""
        return f"{self.base}/{table}/stats"

    def days(self, table: str) -> str:
        """Retained JSON: the table's last closed gaming days' numbers (docs/numbers.md)."""
        return f"{self.base}/{table}/days"

    def table_state(self, table: str) -> str:
        return f"{self.base}/{table}/state"

    def round_snapshot(self, table: str) -> str:
        return f"{self.base}/{table}/round"

    def event(self, table: str, kind: str) -> str:
        return f"{self.base}/{table}/event/{kind}"

    def settlement(self, table: str) -> str:
        return f"{self.base}/{table}/settlement"

    def notice(self, table: str, kind: str) -> str:
        return f"{self.base}/{table}/notice/{kind}"

    def surveillance(self, table: str, kind: str) -> str:
        """The surveillance room's: a foreign card named, each shoe's census and evidence.
        Only the surveillance user reads them (docs/mosquitto/acl), never a display."""
        return f"{self.base}/{table}/surveillance/{kind}"

    def request(self, table: str, command: str) -> str:
        return f"{self.base}/{table}/request/{command}"

    def response(self, table: str, command: str) -> str:
        return f"{self.base}/{table}/response/{command}"

    def request_filter(self, table: str) -> str:
        return f"{self.base}/{table}/request/+"

    def parse_request(self, topic: str) -> tuple[str, str] | None:
        """(table, command) of a request topic, or None if the topic is not one."""
        parts = topic.split("/")
        prefix = self.base.split("/")
        if len(parts) != len(prefix) + 3 or parts[: len(prefix)] != prefix:
            return None
        table, kind, command = parts[len(prefix) :]
        if kind != "request" or not valid_segment(table) or not valid_segment(command):
            return None
        return table, command
