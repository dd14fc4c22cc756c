"""What the daemon tells systemd: READY=1 once (configuration loaded, journal replayed, broker
connected), then the `systemctl status` line as things change (daemon.system.status_line sends it
at most once a second), and that line's text: states and counts, never a card."""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from daemon.journal.clock import describe_seconds
from daemon.mqtt.link_state import LinkState
from daemon.system.status_line import StatusLine

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from daemon.journal.clock import JournalClock
    from daemon.mqtt.link_state import LinkStateChange
    from daemon.parts.items import ServedTable
    from daemon.parts.journal_outbox import JournalOutbox
    from daemon.parts.reloading import Reloading
    from daemon.parts.storage import StorageWatch
    from daemon.system.notify import Notifier


class DaemonStatus:
    """The daemon's word to systemd; `line` runs as the daemon's `status` task."""

    def __init__(
        self,
        notifier: Notifier,
        tables: Mapping[str, ServedTable],
        outbox: JournalOutbox,
        clock: JournalClock,
        reloading: Reloading,
        storage: StorageWatch,
        *,
        on_ready: Callable[[], None] | None,
    ) -> None:
        """`on_ready`: told once, with READY=1."""
        self.notifier = notifier
        self.tables = tables
        self.outbox = outbox
        self.clock = clock
        self.reloading = reloading
        self.storage = storage
        self.on_ready = on_ready
        self.ready_sent = False
        self.broker_state = "starting"
        self.line = StatusLine(notifier, self.text)

    def link_state(self, change: LinkStateChange) -> None:
        """The broker link changed: READY=1 at the first connection, the line after."""
        self.broker_state = change.state.value
        if change.state is LinkState.CONNECTED and not self.ready_sent:
            # READY=1 only now: configuration loaded, journal replayed, broker connected.
            self.ready_sent = True
            self.notifier.ready(self.text())
            if self.on_ready is not None:
                self.on_ready()
        elif self.ready_sent:
            self.line.changed()

    def changed(self) -> None:
        """The status line says something new (once READY=1 has gone: before, it is not ours)."""
        if self.ready_sent:
            self.line.changed()

    def text(self) -> str:
        """What `systemctl status` shows: states and counts, never a card; one line however
        many tables (a datagram of a line per table would not fit 10,000 of them)."""
        tables = self.tables.values()
        readers = collections.Counter(t.service.reader.link for t in tables)
        rounds = sum(1 for t in tables if t.service.engine.round_open)
        count = len(self.tables)
        fault = self.storage.describe()
        behind = self.clock.behind().total_seconds()
        clock = f"CLOCK {describe_seconds(behind)} BEHIND THE JOURNAL; " if behind >= 1 else ""
        note = self.reloading.note
        return (
            ("" if fault is None else f"{fault}; ")
            + clock
            + f"broker {self.broker_state}; {len(self.outbox)} queued; "
            f"{count} table{'s' if count != 1 else ''}, readers "
            + ", ".join(f"{n} {link}" for link, n in sorted(readers.items()))
            + f"; {rounds} round{'s' if rounds != 1 else ''} open"
            + ("" if note is None else f"; {note}")
        )
