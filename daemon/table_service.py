"""One table's brain in the daemon: shoe events and requests in, MQTT messages out.

Sans-I/O like the rules core it wraps: no sockets, no clock of its own (the envelope is
given one), so it is tested by feeding it events. The daemon's tasks move bytes; this
decides what they mean:

- a card from the shoe becomes a `DealCard` for the engine; an unreadable card holds every
  later card back until the dealer console enters it (`request/card`), so no card is ever
  given to the wrong hand;
- a sequence gap or a reader reconnect inside a round flags the round for review: its
  settlements still go out, exactly as decided, marked `"review": true`, and a notice says why;
- every engine output becomes a message on its topic, and the retained round snapshot is
  refreshed, so a display connecting mid-round sees the table at once;
- every request gets a response carrying the caller's transaction id, an error code and a
  message when it is refused; a refused request changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from daemon.inbound import from_record
from daemon.table_observer import UNOBSERVED
from daemon.topics import COMMANDS
from drivers import events as shoe
from drivers.codecs import reference
from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected
from rules.cards import Card
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.errors import CardParseError, EventError, MalformedEvent
from rules.events import DealCard, Shuffle, event_from_mapping
from rules.outputs import Notice, Settlement

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from daemon.envelope import Envelopes, Outbound
    from daemon.journal import EventKind
    from daemon.table_observer import TableObserver
    from daemon.topics import Topics
    from drivers.codecs.sequence import SequencePolicy
    from rules.events import TableEvent
    from rules.outputs import Output

log = structlog.get_logger("daemon.table")

# Requests that are rules events of the same name; the other commands are answered here.
_ENGINE_COMMANDS = frozenset({"wager", "withdraw", "action", "void"})


@dataclass(slots=True)
class ReaderState:
    """What the pit needs to know about the shoe reader (retained on `<table>/state`)."""

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


class RequestError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TableService:
    def __init__(
        self,
        config: TableConfig,
        topics: Topics,
        envelopes: Envelopes,
        *,
        sequence: SequencePolicy | None = reference.SEQUENCE,
    ) -> None:
        """`sequence`: how the table's shoe numbers its frames (`registry.sequence_policy`),
        to judge a jump across a restart; the reference protocol's unless told."""
        self.config = config
        self.table_id = config.table_id
        self.topics = topics
        self.envelopes = envelopes
        self.engine = TableEngine(config)
        self.reader = ReaderState()
        self.awaiting_entry = 0  # unreadable cards the dealer console must enter, oldest first
        self.held: list[DealCard] = []  # readable cards that came after an unreadable one
        self.review: list[str] = []  # why the current round needs review; empty when it does not
        self.round_settlements: list[dict[str, Any]] = []
        self.round_notices: list[dict[str, Any]] = []
        self.pending_config: TableConfig | None = None  # new settings waiting for the round's end
        # While the journal is replayed nothing is logged: it all was, the first time.
        self.quiet = False
        # Told of every event the rules accepted, with its round: `shoe2mqtt journal` exports.
        self.recorder: Callable[[TableEvent, int | None], None] | None = None
        # The shoe's sequence number of the last frame we heard, and whether the next one must
        # be checked against it: the decoder of a restarted daemon has no memory of it.
        self.last_seq: int | None = None
        self.check_seq = False
        self.sequence = sequence
        # Told of cards, settlements, notices and refusals as they happen: the metrics.
        self.observer: TableObserver = UNOBSERVED

    def reconfigure(self, config: TableConfig) -> bool:
        """Take new game settings now if no round is open, keeping the shoe; else at the
        round's end (True: applied now)."""
        if config.table_id != self.table_id:
            return False
        if self.engine.round_open:
            self.pending_config = config
            return False
        self.pending_config = None
        self.config, self.engine = config, self.engine.reconfigured(config)
        return True

    @contextlib.contextmanager
    def replaying(self) -> Iterator[None]:
        """Re-apply journaled events without a log line: they were all logged the first time."""
        quiet, self.quiet = self.quiet, True
        try:
            yield
        finally:
            self.quiet = quiet

    def resume_numbering(self, next_seq: int) -> None:
        """Go on with the sequence numbers where the journal says the table stopped."""
        self.envelopes.next_seq = next_seq

    @property
    def round_id(self) -> int | None:
        return self.engine.round_id

    def apply_record(self, kind: EventKind, record: dict[str, Any], at: str) -> list[Outbound]:
        """One journaled event, applied: the same method live and in replay.

        A bug in applying one event costs that event, never the table: the journal holds the
        event, so an exception here would otherwise stop the daemon at every replay too.
        """
        try:
            return self._apply_record(kind, record, at)
        except Exception as exc:  # noqa: BLE001 - the daemon must never stop; see above
            # The exception's text is not logged: it may quote the event, and the event may be
            # a card not yet revealed. Its type and where it happened are enough to find it.
            log.error(  # noqa: TRY400 - the traceback is attached below, without the message
                "table.apply_failed",
                hint="a bug: the round is flagged for review and the table goes on",
                table=self.table_id,
                kind=kind,
                error=type(exc).__name__,
                where="".join(traceback.format_tb(exc.__traceback__)[-3:]),
            )
            return self.internal_error()

    def _apply_record(self, kind: EventKind, record: dict[str, Any], at: str) -> list[Outbound]:
        if kind == "shoe":
            return self.on_shoe_event(from_record(record), seen_at=at)  # type: ignore[arg-type]
        if kind == "link":
            return self.on_link_event(from_record(record))
        if kind == "request":
            return self.on_request(
                record["command"],
                record["payload"].encode("latin-1"),
                outbox_full=record.get("outbox_full", False),
            )
        if kind == "config":
            self.reconfigure(TableConfig.from_mapping(record["table"]))
            return [self.snapshot()]
        return self.on_start()

    def internal_error(self) -> list[Outbound]:
        """An event could not be applied (a bug): the pit is told, the round is reviewed."""
        return self._flag("internal_error", "an event could not be applied; see the daemon's log")

    def _seq_seen(self, seq: int, *, burned: bool) -> list[Outbound]:
        """After a restart, the first card's sequence number against the last one journaled.

        The decoder reports gaps within a run of the daemon; across a restart only the journal
        remembers, and a card lost meanwhile (a burn card, say) would otherwise shift every
        card of the next round by one place without a word.
        """
        last, self.last_seq = self.last_seq, seq
        if not self.check_seq:
            return []
        self.check_seq = False
        if self.engine.burns_due and not burned:
            # A burn was due when the daemon went down; the reader does not call this card
            # burned, so the burn may have gone by unheard and this be the round's first.
            return self._flag(
                "sequence_gap",
                "the daemon restarted with a burn card due and this card is not marked burned: "
                "the burn card may have gone by unheard",
            )
        # Judged by the shoe's own numbering: where it is not known to count up by one (the
        # ENQ family), a jump proves nothing and is not flagged.
        if last is None or self.sequence is None or not self.sequence.is_gap(last, seq):
            return []
        return self._flag(
            "sequence_gap",
            f"while the daemon was down the reader's sequence moved from {last} to {seq}: "
            "cards may have been dealt unheard",
        )

    def on_start(self) -> list[Outbound]:
        """The daemon (re)started. A round it was in the middle of may have lost cards while
        no one listened: it goes on, flagged for review."""
        self.check_seq = True
        if not self.engine.round_open:
            return []
        return self._flag("daemon_restarted", "the daemon restarted during the round")

    # ------------------------------------------------------------------ shoe
    def on_shoe_event(self, event: shoe.Event, *, seen_at: str) -> list[Outbound]:  # noqa: PLR0911 - a dispatch, one return per kind of event
        self.reader.last_seen = seen_at
        match event:
            case shoe.CardDrawn(burned=burned, origin=origin) if origin != "retransmission":
                self._told.card_read(self.table_id, readable=True)
                gap = self._seq_seen(event.seq, burned=burned)
                return [
                    *gap,
                    *self._card_from_shoe(DealCard(Card.parse(event.code), burned=burned)),
                ]
            case shoe.CardUnreadable(burned=burned):
                self._told.card_read(self.table_id, readable=False)
                return [*self._seq_seen(event.seq, burned=burned), *self._unreadable(burned=burned)]
            case shoe.NewShoe():
                return self._apply(Shuffle(), source="shoe")
            case shoe.SequenceGap(expected=expected, got=got):
                return self._flag(
                    "sequence_gap",
                    f"frames lost between the reader and us (expected {expected}, got {got})",
                )
            case shoe.FaultSet(kind=kind, code=code):
                self.reader.faults[kind] = code
                return [
                    self.notice("reader_fault", f"reader fault set: {kind} (code {code})"),
                    self.state(),
                ]
            case shoe.FaultCleared(kind=kind):
                self.reader.faults.pop(kind, None)
                return [self.state()]
            case shoe.DeviceIdentity():
                self.reader.identity = {
                    "vendor": event.vendor,
                    "model": event.model,
                    "serial_number": event.serial_number,
                    "firmware": event.firmware,
                }
                return [self.state()]
            case shoe.CutCardReached():
                return [
                    self.notice(
                        "cut_card", "the cut card is out: this is the last round of the shoe"
                    )
                ]
            case _:
                return []

    def on_link_event(self, event: object) -> list[Outbound]:
        match event:
            case Connecting(endpoint=endpoint):
                self.reader.link, self.reader.endpoint, self.reader.reason = (
                    "connecting",
                    endpoint,
                    None,
                )
            case Connected(endpoint=endpoint):
                self.reader.link, self.reader.endpoint, self.reader.reason = (
                    "connected",
                    endpoint,
                    None,
                )
            case Disconnected(reason=reason):
                self.reader.link, self.reader.reason = "disconnected", reason
                return [self.notice("reader_disconnected", reason), self.state()]
            case LinkFault(reason=reason):
                self.reader.link, self.reader.reason = "fault", reason
                return [self.state()]
            case Reconnected(outage=outage):
                self.reader.link = "connected"
                out = [self.state()]
                if self.engine.round_open:
                    out += self._flag(
                        "reader_reconnected",
                        f"the reader was away for {outage:.1f} s during the round",
                    )
                return out
        return [self.state()]

    def _card_from_shoe(self, event: DealCard) -> list[Outbound]:
        if self.awaiting_entry:
            self.held.append(event)
            return []
        return self._apply(event, source="shoe")

    def _unreadable(self, *, burned: bool) -> list[Outbound]:
        if burned:
            return [
                self.notice("card_unreadable", "a burned card was unreadable; nothing to enter")
            ]
        self.awaiting_entry += 1
        return [
            self.notice(
                "card_unreadable",
                "a card left the shoe unread: enter it at the dealer console (request/card); "
                "the cards after it wait until then",
            )
        ]

    # ------------------------------------------------------------------ requests
    def on_request(
        self, command: str, payload: bytes, *, outbox_full: bool = False
    ) -> list[Outbound]:
        """Answer a request. `outbox_full` is journaled with the request (the outbox is not
        table state), so a replay refuses exactly what was refused."""
        transaction: object = None
        try:
            request = _parse_request(payload)
            transaction = request.pop("transaction", None)
            data, out = self._request(command, request, outbox_full=outbox_full)
        except RequestError as exc:
            self._told.rejected(self.table_id, "request", exc.code)
            self._log_info(
                "table.request_refused",
                table=self.table_id,
                round=self.round_id,
                command=command,
                code=exc.code,
                reason=exc.message,
            )
            # The pit sees refused wagers too, not only the console that placed them.
            notice = [self.notice(exc.code, exc.message)] if exc.code == "wager_rejected" else []
            return [*notice, self._response(command, transaction, error=exc)]
        return [*out, self._response(command, transaction, data=data)]

    def _request(
        self, command: str, request: dict[str, Any], *, outbox_full: bool
    ) -> tuple[dict[str, Any], list[Outbound]]:
        if command == "status":
            _no_fields(request)
            return {"reader": self.reader.to_mapping(), "round": self._snapshot_body()}, []
        if command == "shuffle":
            _no_fields(request)
            return {}, self._apply_or_refuse(Shuffle())
        if command == "card":
            return {}, self._manual_card(request)
        if command == "wager" and not self.engine.round_open and outbox_full:
            raise RequestError(
                "outbox_full",
                "the broker has been away too long: no new round until its messages are "
                "delivered (nothing is lost; they wait on disk)",
            )
        if command in _ENGINE_COMMANDS:
            try:
                event = event_from_mapping({"type": command, **request})
            except MalformedEvent as exc:
                raise RequestError("malformed_request", exc.message) from None
            return {}, self._apply_or_refuse(event)
        raise RequestError(
            "unknown_command",
            f"unknown command {command!r}; commands: {', '.join(COMMANDS)}",
        )

    def _manual_card(self, request: dict[str, Any]) -> list[Outbound]:
        if set(request) != {"card"} or not isinstance(request["card"], str):
            raise RequestError("malformed_request", 'card: give exactly {"card": "QH"}')
        if not self.awaiting_entry:
            raise RequestError("no_unreadable_card", "no unreadable card is waiting to be entered")
        try:
            card = Card.parse(request["card"])
        except CardParseError:
            # Not the parser's message: it quotes the text, and a mistyped hole card must not
            # reach the response topic, which displays read, nor the log.
            raise RequestError(
                "malformed_request", "card: not a card; give rank then suit, e.g. QH, 10S or TS"
            ) from None
        out = self._apply_or_refuse(DealCard(card))
        self.awaiting_entry -= 1
        while self.held and not self.awaiting_entry:
            out += self._apply(self.held.pop(0), source="shoe")
        return out

    def _apply_or_refuse(self, event: TableEvent) -> list[Outbound]:
        try:
            outputs = self.engine.apply(event)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        self._record(event)
        return self._publish(outputs)

    def _record(self, event: TableEvent) -> None:
        if self.recorder is not None:
            self.recorder(event, self.round_id)

    # ------------------------------------------------------------------ engine
    def _apply(self, event: TableEvent, *, source: str) -> list[Outbound]:
        """Apply an event the table produced (not a request): a refusal is a notice."""
        try:
            outputs = self.engine.apply(event)
        except EventError as exc:
            self._told.rejected(self.table_id, source, exc.code)
            self._log_warning(
                "table.event_refused",
                table=self.table_id,
                round=self.round_id,
                source=source,
                code=exc.code,
                reason=exc.message,
            )
            return [self.notice(exc.code, exc.message)]
        self._record(event)
        return self._publish(outputs)

    def _publish(self, outputs: list[Output]) -> list[Outbound]:
        out: list[Outbound] = []
        for output in outputs:
            body = output.to_mapping()
            kind = body["type"]
            if kind == "round_opened":
                self.review.clear()
                self.round_settlements.clear()
                self.round_notices.clear()
            if isinstance(output, Settlement):
                body["review"] = bool(self.review)
                self._told.settled(self.table_id, output.result.value)
                self.round_settlements.append(body)
                out.append(self.envelopes.seal(self.topics.settlement(self.table_id), body))
                self._log_info(
                    "table.settled",
                    table=self.table_id,
                    round=output.round_id,
                    seat=output.seat,
                    wager=output.wager.value,
                    outcome=output.outcome,
                    result=output.result.value,
                    won=body["won"],
                )
            elif isinstance(output, Notice):
                self._told.noticed(self.table_id, output.kind)
                self.round_notices.append(body)
                out.append(
                    self.envelopes.seal(self.topics.notice(self.table_id, output.kind), body)
                )
            else:
                out.append(self.envelopes.seal(self.topics.event(self.table_id, kind), body))
        if self.pending_config is not None and not self.engine.round_open:
            self.reconfigure(self.pending_config)
        if outputs:
            out.append(self.snapshot())
        return out

    def _flag(self, reason: str, message: str) -> list[Outbound]:
        if self.engine.round_open:
            self.review.append(reason)
        out = [self.notice(reason, message)]
        return [*out, self.snapshot()] if self.engine.round_open else out

    def notice(self, kind: str, message: str) -> Outbound:
        """A notice of the daemon's own to the pit: the reader, the link, the outbox."""
        body = Notice(self.round_id, kind, None, message).to_mapping()
        if self.engine.round_open:
            self.round_notices.append(body)
        self._told.noticed(self.table_id, kind)
        self._log_info(
            "table.notice", table=self.table_id, round=self.round_id, kind=kind, message=message
        )
        return self.envelopes.seal(self.topics.notice(self.table_id, kind), body)

    @property
    def _told(self) -> TableObserver:
        """The observer, or nobody while the journal is replayed."""
        return UNOBSERVED if self.quiet else self.observer

    def _log_info(self, event: str, **fields: object) -> None:
        if not self.quiet:
            log.info(event, **fields)

    def _log_warning(self, event: str, **fields: object) -> None:
        if not self.quiet:
            log.warning(event, **fields)

    # ------------------------------------------------------------------ retained state
    def _snapshot_body(self) -> dict[str, Any]:
        view = self.engine.public_view()
        view["review"] = list(self.review)
        view["awaiting_card_entry"] = self.awaiting_entry
        view["settlements"] = list(self.round_settlements)
        view["notices"] = self.round_notices[-MAX_ROUND_NOTICES:]
        return view

    def snapshot(self) -> Outbound:
        body = {"type": "round_snapshot", **self._snapshot_body()}
        return self.envelopes.seal(self.topics.round_snapshot(self.table_id), body, retain=True)

    def state(self) -> Outbound:
        """The retained table state message (reader link, faults, identity)."""
        body = {
            "type": "table_state",
            "game": self.config.game.value,
            "reader": self.reader.to_mapping(),
        }
        return self.envelopes.seal(self.topics.table_state(self.table_id), body, retain=True)

    def _response(
        self,
        command: str,
        transaction: object,
        *,
        data: dict[str, Any] | None = None,
        error: RequestError | None = None,
    ) -> Outbound:
        body: dict[str, Any] = {"type": "response", "command": command, "transaction": transaction}
        if error is None:
            body |= {"status": "ok", "data": data or {}}
        else:
            body |= {"status": "error", "error": {"code": error.code, "message": error.message}}
        return self.envelopes.seal(self.topics.response(self.table_id, command), body)


MAX_REQUEST_BYTES = 4096  # a request is a few fields; more is a mistake or an attack
MAX_ROUND_NOTICES = 50  # the snapshot keeps the latest ones: a retained message must stay small


def _parse_request(payload: bytes) -> dict[str, Any]:
    if not payload.strip():
        return {}
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError("malformed_request", f"a request is at most {MAX_REQUEST_BYTES} bytes")
    try:
        request = json.loads(payload)
    except (ValueError, RecursionError):
        # ValueError covers bad JSON, bad UTF-8 and integers past Python's digit limit;
        # RecursionError, nesting deep enough to exhaust the parser: a console's bytes must
        # never reach further than this answer.
        raise RequestError("malformed_request", "the payload is not a JSON request") from None
    if not isinstance(request, dict):
        raise RequestError("malformed_request", "the payload is a JSON object")
    transaction = request.get("transaction")
    if transaction is not None and not isinstance(transaction, str | int):
        raise RequestError("malformed_request", "transaction: a string or an integer")
    return request


def request_record(command: str, payload: bytes) -> dict[str, Any]:
    """A request as the journal keeps it: latin-1 maps every byte to one character, so the
    payload comes back byte for byte."""
    return {"command": command, "payload": payload.decode("latin-1")}


def _no_fields(request: dict[str, Any]) -> None:
    if request:
        raise RequestError("malformed_request", f"{min(request)}: this command takes no fields")
