"""What the pit needs to know about a table's shoe reader (retained on `<table>/state`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ReaderState:
    link: str = "starting"  # starting, connecting, connected, disconnected, fault
    endpoint: str | None = None
    reason: str | None = None
    faults: dict[str, int] = field(default_factory=dict)  # active device faults by kind
    last_seen: str | None = None
    identity: dict[str, str] | None = None

    def to_mapping(self) -> dict[str, Any]:
        return {
            "link": self.link,
            "endpoint": self.endpoint,
            "reason": self.reason,
            "faults": [{"kind": k, "code": c} for k, c in sorted(self.faults.items())],
            "last_seen": self.last_seen,
            "identity": self.identity,
        }

    def state(self) -> dict[str, Any]:
        """Everything, as data (faults keep their order: a checkpoint is exact)."""
        return {
            "link": self.link,
            "endpoint": self.endpoint,
            "reason": self.reason,
            "faults": dict(self.faults),
            "last_seen": self.last_seen,
            "identity": self.identity,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> ReaderState:
        return cls(**{**data, "faults": dict(data["faults"])})
