"""What `shoe2mqtt journal verify` says: of each table (`Verdict`: its chain whole, or where it
breaks) and of each quarantined archive it could not read (`Unread`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.journal.chain import ChainBreak, ChainEnd


@dataclass(frozen=True, slots=True)
class Unread:
    """A quarantined archive (relative to the archive directory) whose manifest is still not
    one, and why."""

    directory: str
    reason: str

    def __str__(self) -> str:
        return (
            f"archive {self.directory}: quarantined, not read: {self.reason} (repair its "
            "manifest.json in place)"
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """`journal verify`'s word on one table."""

    table: str
    problem: ChainBreak | None
    end: ChainEnd | None = None
    files: int = 0
    archived: int = 0

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        if self.problem is not None:
            return f"{self.problem}"
        assert self.end is not None
        return (
            f"{self.table}: ok: {self.end.n} events ({self.archived} in {self.files} archive "
            f"files), head {self.end.hash}"
        )
