"""One table's brain in the daemon: shoe events and requests in, MQTT messages out.

Sans-I/O like the rules core it wraps: no sockets, no clock of its own (the envelope is
given one), so it is tested by feeding it events. The daemon's tasks move bytes; this
decides what they mean:

- a card's place follows from what the dealer console declared and the order the shoe
  dealt, never from which of the two streams reached the PC first: a card the round cannot
  yet place as declared (no round, betting not closed, no decision for the hand in play)
  is kept, in order, and placed once the declaration comes (daemon.table.custody, docs/rules.md
  decision 15); one that waits too long becomes a doubt, never a guessed hit;
- an unreadable card holds every later card back until the dealer console enters it
  (`request/card`), so no card is ever given to the wrong hand;
- when the table cannot be sure it has every card (frames lost; a shoe that keeps nothing
  while the daemon or the link was away; a reader that restarted or reports an error
  mid-round; a card it did not expect; another daemon on the table), the round is flagged
  for review and every card from then on is held, in order, for the dealer console:
  `request/resume` (no card went by unread, or the missed ones were entered with
  `request/card`) lets them be placed, `request/void` voids the round (decision 13).
  Flagged settlements still go out exactly as decided, marked `"review": true`, and a
  notice says why;
- a request that crossed one of the shoe's cards on its way is tried where it may have been
  meant (daemon.table.crossing): a doubt if that would have changed what was published;
- what the shoe sends is judged before anything is journaled (`judge`, decision D3): a repeat
  of a frame the journal holds is acknowledged again and applied no more, a loss is journaled
  as a `SequenceGap` first; the memory that takes (`receiver`) is rebuilt by the replay;
- every engine output becomes a message on its topic, and the round state is noted as
  changed: the daemon publishes it, retained, outside the numbering (daemon.table.round_state),
  so a display connecting mid-round sees the table at once;
- every request gets a response carrying the caller's transaction id and the node that
  answered, an error code and a message when it is refused; a refused request changes
  nothing.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

import structlog

from daemon.table.checkpoint import Checkpointing
from daemon.table.console_requests import ConsoleRequests
from daemon.table.reader import ReaderEvents
from daemon.table.records import (
    ConfigRecord,
    LinkRecord,
    NoticeRecord,
    RequestRecord,
    ShoeRecord,
    StartRecord,
    TimerRecord,
    UnreadableRecord,
    read,
)
from daemon.table.round_state import ROUND_CONTRACT, STATE_CONTRACT

if TYPE_CHECKING:
    from daemon.journal import EventKind
    from daemon.table.records import JournalRecord
    from daemon.wire.envelope import Outbound


log = structlog.get_logger("daemon.table")


class TableService(ConsoleRequests, ReaderEvents, Checkpointing):
    """One table's brain: journaled records in (`apply`, the same live and in replay),
    messages out."""

    def apply(self, record: JournalRecord | UnreadableRecord, at: str) -> list[Outbound]:
        """One journaled event, applied: the same method live and in replay.

        Everything it returns is a function of the event and the table's state alone, the
        envelope's time included (`at`, the event's journaled time): so a replay of the
        journal makes the very messages the table published, byte for byte (decision D4).

        A bug in applying one event costs that event, never the table: the journal holds the
        event, so an exception here would otherwise stop the daemon at every replay too.
        """
        self.write_held_lines()  # an earlier event's, if its caller did not write them
        self.envelopes.at = at
        self._applying = True
        self._carried, self._response = [], None
        try:
            out = self._apply_record(record, at)
        except Exception as exc:  # noqa: BLE001 - the daemon must never stop; see above
            # The exception's text is not logged: it may quote the event, and the event may be
            # a card not yet revealed. Its type and where it happened are enough to find it.
            log.error(  # noqa: TRY400 - the traceback is attached below, without the message
                "table.apply_failed",
                hint="a bug: the round is flagged for review and the table goes on",
                table=self.table_id,
                kind=record.kind,
                error=type(exc).__name__,
                where="".join(traceback.format_tb(exc.__traceback__)[-3:]),
            )
            self._carried, self._response = [], None  # what the failed event began: not said
            self.held_lines.clear()  # its settlements' lines too (an earlier event's are out)
            out = self.internal_error()
        finally:
            self._applying = False
        self.custody.follow_wait(self._awaiting(), at)
        if self.contract >= ROUND_CONTRACT:  # one numbered message: the round, what it caused
            return self.one_message(out)
        if self.contract >= STATE_CONTRACT:  # the round state: noted, not numbered
            kept = [m for m in out if m.seq]
            self._round_changed = self._round_changed or len(kept) < len(out)
            out = kept
        return out

    def take_round_change(self) -> bool:
        """Whether the round state changed since the last time this was asked (contract 3:
        the daemon publishes it, daemon.table.round_state)."""
        changed, self._round_changed = self._round_changed, False
        return changed

    def apply_body(self, kind: EventKind, body: dict[str, Any], at: str) -> list[Outbound]:
        """A journaled event as the journal reads it back (its kind and body), applied."""
        return self.apply(read(kind, body), at)

    def _apply_record(  # noqa: PLR0911 - one return per kind of record
        self, record: JournalRecord | UnreadableRecord, at: str
    ) -> list[Outbound]:
        match record:
            case ShoeRecord(event=event):
                return self.on_shoe_event(event, seen_at=at)
            case LinkRecord(event=event):
                return self.on_link_event(event)
            case RequestRecord(command=command, payload=payload, outbox_full=outbox_full):
                return self.on_request(command, payload, outbox_full=outbox_full)
            case ConfigRecord(table=table, contract=contract):
                # journaled with the contract since 3 (a new table's first event)
                self.contract = self.contract if contract is None else contract
                self.reconfigure(table)
                return [self.snapshot()]
            case NoticeRecord(notice=notice, message=message, hold=True):
                return self._doubt(notice, message, always=True)
            case NoticeRecord(notice=notice, message=message):
                return [self.notice(notice, message)]
            case TimerRecord():
                return self.on_timer(record)
            case StartRecord(protocol=protocol, node=node, contract=contract):
                return self.on_start(protocol, node, 1 if contract is None else contract)
            case UnreadableRecord(error=error):
                raise error

    def internal_error(self) -> list[Outbound]:
        """An event could not be applied (a bug): the pit is told, the round is reviewed."""
        return self._flag("internal_error", "an event could not be applied; see the daemon's log")
