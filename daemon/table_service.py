"""One table's brain in the daemon: shoe events and requests in, MQTT messages out.

Sans-I/O like the rules core it wraps: no sockets, no clock of its own (the envelope is
given one), so it is tested by feeding it events. The daemon's tasks move bytes; this
decides what they mean:

- a card from the shoe becomes a `DealCard` for the engine; an unreadable card holds every
  later card back until the dealer console enters it (`request/card`), so no card is ever
  given to the wrong hand;
- when the table cannot be sure it has every card (frames lost; a shoe that keeps nothing
  while the daemon or the link was away; a reader that restarted), the round is flagged for
  review and, if a card could go to the wrong place (a round open, a burn due), every card
  from then on is held, in order, for the dealer console: `request/resume` (no card went by
  unread, or the missed ones were entered with `request/card`) deals them, `request/void`
  voids the round (docs/rules.md, decision 13). Flagged settlements still go out exactly as
  decided, marked `"review": true`, and a notice says why;
- what the shoe sends is judged before anything is journaled (`judge`, decision D3): a repeat
  of a frame the journal holds is acknowledged again and applied no more, a loss is journaled
  as a `SequenceGap` first; the memory that takes (`receiver`) is rebuilt by the replay;
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
from typing import TYPE_CHECKING, Any, Final

import structlog

from daemon.inbound import from_record, to_record
from daemon.table_observer import UNOBSERVED
from daemon.topics import COMMANDS
from drivers import events as shoe
from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected
from drivers.errors import DriverError
from drivers.receiver import FrameReceiver
from drivers.registry import sequence_policy
from rules.cards import Card
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.engine_state import engine_state, restore_engine
from rules.errors import CardParseError, EventError, MalformedEvent, RulesError
from rules.events import DealCard, Shuffle, event_from_mapping
from rules.outputs import Notice, Settlement
from rules.table import RoundStage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from daemon.envelope import Envelopes, Outbound
    from daemon.journal import EventKind
    from daemon.table_observer import TableObserver
    from daemon.topics import Topics
    from drivers.codecs.sequence import SequencePolicy
    from drivers.receiver import Intake
    from rules.events import TableEvent
    from rules.outputs import Output

    # What the recorder is told: every event the rules accepted, and new settings taken.
    Recorded = TableEvent | TableConfig

log = structlog.get_logger("daemon.table")

_NOT_LIVE = (RoundStage.BETTING, RoundStage.OVER)  # no card of the deal has gone out
# Requests that are rules events of the same name; the other commands are answered here.
_ENGINE_COMMANDS = frozenset({"wager", "withdraw", "action", "void"})
# What the dealer console is asked to do when the table holds cards in doubt.
_HOLD_ADVICE = (
    "; every card from here is held, not given to any seat: enter any card that went by "
    "unread (request/card), then confirm (request/resume), or void the round (request/void)"
)
# A card held back: a card or a new shoe from the shoe, or None for an unreadable card that
# waits for the dealer console to enter it.
Held = DealCard | Shuffle | None
DEFAULT_PROTOCOL: Final = "reference"
# The version of `TableService.checkpoint()`'s data; `restore` reads this one only.
CHECKPOINT_VERSION: Final = 1


class CheckpointError(Exception):
    """A checkpoint this code cannot restore (another version, or damaged data)."""


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
        protocol: str = DEFAULT_PROTOCOL,
    ) -> None:
        """`protocol`: the registry's name of the table's shoe protocol, whose numbering
        (`registry.sequence_policy`) judges what the shoe sends (decision D3). The daemon
        journals it with every `start` event, so a replay judges as the live table did
        (decision D4); a replay that starts before any `start` event uses this one."""
        self.config = config
        self.table_id = config.table_id
        self.topics = topics
        self.envelopes = envelopes
        self.engine = TableEngine(config)
        self.reader = ReaderState()
        # What the shoe sent that waits, in order: after an unreadable card (None, until the
        # dealer console enters it), and everything after a doubt, until the dealer resolves.
        self.held: list[Held] = []
        self.doubt: str | None = None  # why cards are held for the dealer; None: sure of all
        self.doubt_at = 0  # where in `held` the doubt began: the unheard cards go there
        self.review: list[str] = []  # why the current round needs review; empty when it does not
        self.round_settlements: list[dict[str, Any]] = []
        self.round_notices: list[dict[str, Any]] = []
        self.pending_config: TableConfig | None = None  # new settings waiting for the round's end
        # While the journal is replayed nothing is logged: it all was, the first time.
        self.quiet = False
        # Told of every event the rules accepted, with its round: `shoe2mqtt journal` exports.
        self.recorder: Callable[[Recorded, int | None], None] | None = None
        # What the table holds of the shoe's numbering (decision D3): the last frame journaled
        # and who the device is; rebuilt by the replay like everything else.
        self.protocol = protocol
        self.receiver = FrameReceiver(_policy(protocol))
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
        self._record(config)
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

    # ------------------------------------------------------------------ checkpoints
    def checkpoint(self) -> dict[str, Any]:
        """The table's whole state as data: what `restore` needs to go on exactly here.

        The engine (its shoe, barred seats, round numbering and the current or last round),
        the settings (and any waiting for the round's end), the reader, the cards held (behind
        an unreadable one, or for a doubt, and why), the round's review, settlements and
        notices (the snapshot shows them until the next round opens), what the table holds of
        the shoe's numbering (decision D3: its last frame and identity) and its protocol, and
        the next message number. Not the log switch, the recorder or the observer: they are
        the caller's, not the table's.
        """
        pending = self.pending_config
        device = self.receiver.device
        return {
            "version": CHECKPOINT_VERSION,
            "config": self.config.to_mapping(),
            "pending_config": None if pending is None else pending.to_mapping(),
            "engine": engine_state(self.engine),
            "reader": self.reader.state(),
            "held": [_held_state(item) for item in self.held],
            "doubt": self.doubt,
            "doubt_at": self.doubt_at,
            "review": list(self.review),
            "round_settlements": list(self.round_settlements),
            "round_notices": list(self.round_notices),
            "receiver": {
                "last": self.receiver.last,
                "device": None if device is None else to_record(device),
            },
            "protocol": self.protocol,
            "next_seq": self.envelopes.next_seq,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Become the table `state` describes (from `checkpoint`); `CheckpointError` when it
        cannot be read, leaving this service as it was."""
        if state.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(
                f"checkpoint version {state.get('version')!r}; "
                f"this shoe2mqtt reads {CHECKPOINT_VERSION}"
            )
        try:
            config = TableConfig.from_mapping(state["config"])
            pending = state["pending_config"]
            pending_config = None if pending is None else TableConfig.from_mapping(pending)
            engine = restore_engine(config, state["engine"])
            reader = ReaderState.from_state(state["reader"])
            held = [_held_from_state(item) for item in state["held"]]
            receiver = FrameReceiver(_policy(state["protocol"]))
            receiver.last = state["receiver"]["last"]
            device = state["receiver"]["device"]
            receiver.device = None if device is None else _identity(device)
        except (KeyError, TypeError, ValueError, RulesError) as exc:
            raise CheckpointError(f"checkpoint: {type(exc).__name__}: {exc}") from None
        self.config, self.engine, self.reader, self.held = config, engine, reader, held
        self.pending_config = pending_config
        self.doubt, self.doubt_at = state["doubt"], int(state["doubt_at"])
        self.review = list(state["review"])
        self.round_settlements = list(state["round_settlements"])
        self.round_notices = list(state["round_notices"])
        self.protocol, self.receiver = state["protocol"], receiver
        self.envelopes.next_seq = int(state["next_seq"])

    @property
    def round_id(self) -> int | None:
        return self.engine.round_id

    @property
    def awaiting_entry(self) -> int:
        """Unreadable cards the dealer console must enter."""
        return self.held.count(None)

    @property
    def cards_held(self) -> int:
        """Cards from the shoe that wait, not yet given to any seat."""
        return sum(1 for item in self.held if isinstance(item, DealCard))

    def judge(self, event: object) -> Intake:
        """What to do with an event from the shoe, before anything of it is journaled: a
        repeat of a frame the journal holds is not taken (only acknowledged again); a loss
        is journaled first, as a `SequenceGap` (decision D3)."""
        return self.receiver.judge(event)

    def apply_record(self, kind: EventKind, record: dict[str, Any], at: str) -> list[Outbound]:
        """One journaled event, applied: the same method live and in replay.

        Everything it returns is a function of the event and the table's state alone, the
        envelope's time included (`at`, the event's journaled time): so a replay of the
        journal makes the very messages the table published, byte for byte (decision D4).

        A bug in applying one event costs that event, never the table: the journal holds the
        event, so an exception here would otherwise stop the daemon at every replay too.
        """
        self.envelopes.at = at
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
        if kind == "notice":
            return self._daemon_notice(record)
        return self.on_start(record.get("protocol"))

    def _daemon_notice(self, record: dict[str, Any]) -> list[Outbound]:
        """The daemon's own word to the pit; with `hold`, a doubt over every card to come."""
        if record.get("hold"):
            return self._doubt(record["kind"], record["message"], always=True)
        return [self.notice(record["kind"], record["message"])]

    def internal_error(self) -> list[Outbound]:
        """An event could not be applied (a bug): the pit is told, the round is reviewed."""
        return self._flag("internal_error", "an event could not be applied; see the daemon's log")

    def on_start(self, protocol: str | None = None) -> list[Outbound]:
        """The daemon (re)started, reading the shoe with `protocol` (journaled with the
        event). A shoe that keeps what it dealt meanwhile (the reference protocol) hands it
        over when it is next heard from, and its first contact says whether anything is
        missing (`judge`). One that keeps nothing may have dealt cards no one heard: if that
        can misplace a card, the table holds for the dealer. Then the table's retained state
        and snapshot, so a display never shows a table as it was before the restart."""
        if protocol is not None and protocol != self.protocol:
            self.protocol, self.receiver.policy = protocol, _policy(protocol)
        doubt = (
            []
            if self.receiver.reliable or not self._at_stake()
            else self._doubt(
                "daemon_restarted",
                "the daemon restarted, and this shoe keeps nothing: "
                "a card dealt while it was down is lost",
            )
        )
        return [*doubt, self.state(), self.snapshot()]

    def _at_stake(self) -> bool:
        """Whether a card missed now could go to the wrong place: a round is open, or a burn
        is due (the engine would take the round's first card for it)."""
        return self.engine.round_open or self.engine.burns_due > 0

    def _doubt(self, reason: str, message: str, *, always: bool = False) -> list[Outbound]:
        """The table cannot be sure it has every card: the round is flagged, the pit told, and
        where a card could be misplaced (`always`: whatever the table is doing), every card
        from here is held for the dealer."""
        if always or self._at_stake():
            if self.doubt is None:
                self.doubt, self.doubt_at = reason, len(self.held)
            message += _HOLD_ADVICE
        return self._flag(reason, message)

    # ------------------------------------------------------------------ shoe
    def on_shoe_event(self, event: shoe.Event, *, seen_at: str) -> list[Outbound]:  # noqa: PLR0911 - a dispatch, one return per kind of event
        self.reader.last_seen = seen_at
        restarted = self.receiver.record(event)
        match event:
            case shoe.CardDrawn(burned=burned, origin=origin) if origin != "retransmission":
                self._told.card_read(self.table_id, readable=True)
                return self._from_shoe(DealCard(Card.parse(event.code), burned=burned))
            case shoe.CardUnreadable(burned=burned):
                self._told.card_read(self.table_id, readable=False)
                return self._unreadable(burned=burned)
            case shoe.NewShoe():
                return self._from_shoe(Shuffle())
            case shoe.SequenceGap(expected=expected, got=got):
                return self._doubt(
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
                if not restarted:
                    return [self.state()]
                return [
                    self.state(),
                    *self._doubt(
                        "reader_restarted",
                        "the reader restarted (or another one is on the line): "
                        "what it had not yet handed over is lost",
                    ),
                ]
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
                # A shoe that keeps its frames hands over what it dealt meanwhile; only one
                # that keeps nothing leaves a doubt.
                if not self.receiver.reliable and self._at_stake():
                    out += self._doubt(
                        "reader_reconnected",
                        f"the reader was away for {outage:.1f} s, and this shoe keeps nothing: "
                        "a card dealt meanwhile is lost",
                    )
                return out
        return [self.state()]

    def _from_shoe(self, event: DealCard | Shuffle) -> list[Outbound]:
        """A card (or a new shoe) in the shoe's order: applied, or held behind what waits."""
        if self.held or self.doubt is not None:
            self.held.append(event)
            return [self.snapshot()]  # the pit sees the count of cards held
        return self._apply(event, source="shoe")

    def _unreadable(self, *, burned: bool) -> list[Outbound]:
        if burned:
            # The burn happened, face unseen: the engine must not wait for it still, or it
            # would take the round's first card for it and every card after would move.
            engine = self.engine
            betting = engine.round is None or engine.round.stage in _NOT_LIVE
            if betting:  # the engine's own rule: a burn comes before the deal, never in it
                engine.burns_due = max(0, engine.burns_due - 1)
            return [
                self.notice("card_unreadable", "a burned card was unreadable; nothing to enter")
            ]
        self.held.append(None)
        return [
            self.notice(
                "card_unreadable",
                "a card left the shoe unread: enter it at the dealer console (request/card); "
                "the cards after it wait until then",
            ),
            self.snapshot(),
        ]

    def _release(self) -> list[Outbound]:
        """Apply what waits, in order, up to the next unreadable card or the doubt."""
        out: list[Outbound] = []
        while self.held and self.held[0] is not None and (self.doubt is None or self.doubt_at):
            item = self.held.pop(0)
            self.doubt_at = max(0, self.doubt_at - 1)
            assert item is not None
            out += self._apply(item, source="shoe")
        return out

    def _drop_held(self, why: str) -> list[Outbound]:
        """The round (or shoe) the held cards belonged to is over: they go nowhere."""
        if not self.held and self.doubt is None:
            return []
        dropped = self.cards_held
        self.held.clear()
        self.doubt, self.doubt_at = None, 0
        notice = self.notice("held_cards_dropped", f"{dropped} held cards dropped: {why}")
        return [*([notice] if dropped else []), self.snapshot()]

    # ------------------------------------------------------------------ requests
    def on_request(
        self, command: str, payload: bytes, *, outbox_full: bool = False
    ) -> list[Outbound]:
        """Answer a request. `outbox_full` is journaled with the request (the outbox is not
        table state), so a replay refuses exactly what was refused."""
        transaction: object = None
        try:
            request = parse_request(payload)
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

    def refuse(self, command: str, transaction: object, code: str, message: str) -> list[Outbound]:
        """The response to a request refused before it reached the table (the request gate):
        it was not journaled and changes nothing."""
        self._log_info(
            "table.request_refused", table=self.table_id, round=self.round_id,
            command=command, code=code, reason=message,
        )  # fmt: skip
        body = _response_body(command, transaction, error=RequestError(code, message))
        return [self.envelopes.seal_unsequenced(self.topics.response(self.table_id, command), body)]

    def _request(
        self, command: str, request: dict[str, Any], *, outbox_full: bool
    ) -> tuple[dict[str, Any], list[Outbound]]:
        if command == "status":
            _no_fields(request)
            return {"reader": self.reader.to_mapping(), "round": self._snapshot_body()}, []
        if command == "shuffle":
            _no_fields(request)
            out = self._apply_or_refuse(Shuffle())
            return {}, [*out, *self._drop_held("a new shoe")]
        if command == "card":
            return {}, self._manual_card(request)
        if command == "resume":
            _no_fields(request)
            return self._resume()
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
            out = self._apply_or_refuse(event)
            if command == "void":  # the held cards belonged to the round just voided
                out += self._drop_held("their round was voided")
            return {}, out
        raise RequestError(
            "unknown_command",
            f"unknown command {command!r}; commands: {', '.join(COMMANDS)}",
        )

    def _resume(self) -> tuple[dict[str, Any], list[Outbound]]:
        """The dealer confirms that no card went by unread (any that did were entered): the
        held cards are dealt, in order, and the round goes on, still flagged for review."""
        if self.doubt is None:
            raise RequestError("nothing_held", "no cards are held for a doubt: nothing to resume")
        self.doubt, self.doubt_at = None, 0
        held = self.cards_held
        out = self._release()
        return {"released": held - self.cards_held}, [*out, self.snapshot()]

    def _manual_card(self, request: dict[str, Any]) -> list[Outbound]:
        if set(request) != {"card"} or not isinstance(request["card"], str):
            raise RequestError("malformed_request", 'card: give exactly {"card": "QH"}')
        # The dealer enters cards in the order they left the shoe: the unreadable ones held
        # before the doubt, then those that went by unheard, then (once resumed) the
        # unreadable ones after it. Whichever it is, nothing waits before it: release stops
        # at the first unreadable card and at the doubt, so that is where the held list starts.
        awaited = bool(self.held) and self.held[0] is None
        if self.doubt is not None:
            awaited = awaited and self.doubt_at > 0
        elif not awaited:
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
        if awaited:
            self.held.pop(0)
            self.doubt_at = max(0, self.doubt_at - 1)
        return [*out, *self._release()]

    def _apply_or_refuse(self, event: TableEvent) -> list[Outbound]:
        try:
            outputs = self.engine.apply(event)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        self._record(event)
        return self._publish(outputs)

    def _record(self, event: Recorded) -> None:
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
                self._keep_notice(body)
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
            self._keep_notice(body)
        self._told.noticed(self.table_id, kind)
        self._log_info(
            "table.notice", table=self.table_id, round=self.round_id, kind=kind, message=message
        )
        return self.envelopes.seal(self.topics.notice(self.table_id, kind), body)

    @property
    def _told(self) -> TableObserver:
        """The observer, or nobody while the journal is replayed."""
        return UNOBSERVED if self.quiet else self.observer

    def _keep_notice(self, body: dict[str, Any]) -> None:
        """For the snapshot, which shows the latest only: a round a console fills with
        refused wagers must not grow the daemon's memory either."""
        self.round_notices.append(body)
        del self.round_notices[:-MAX_ROUND_NOTICES]

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
        view["doubt"] = self.doubt
        view["cards_held"] = self.cards_held
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
        body = _response_body(command, transaction, data=data, error=error)
        return self.envelopes.seal(self.topics.response(self.table_id, command), body)


def _response_body(
    command: str,
    transaction: object,
    *,
    data: dict[str, Any] | None = None,
    error: RequestError | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "response", "command": command, "transaction": transaction}
    if error is None:
        return body | {"status": "ok", "data": data or {}}
    return body | {"status": "error", "error": {"code": error.code, "message": error.message}}


MAX_REQUEST_BYTES = 4096  # a request is a few fields; more is a mistake or an attack
MAX_ROUND_NOTICES = 50  # the snapshot keeps the latest ones: a retained message must stay small


def parse_request(payload: bytes) -> dict[str, Any]:
    """The request's JSON object, its shape checked (`daemon.request_gate` uses it too)."""
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


def _policy(protocol: str) -> SequencePolicy | None:
    """The protocol's numbering; none (judge nothing) for one no longer installed."""
    try:
        return sequence_policy(protocol)
    except DriverError:
        return None


def _identity(record: dict[str, Any]) -> shoe.DeviceIdentity:
    identity = from_record(record)
    if not isinstance(identity, shoe.DeviceIdentity):
        raise TypeError(f"not a device identity: {record.get('event')!r}")
    return identity


def _held_state(item: Held) -> dict[str, Any] | None:
    if item is None:
        return None
    if isinstance(item, Shuffle):
        return {"shuffle": True}
    return {"card": str(item.card), "burned": item.burned}


def _held_from_state(data: dict[str, Any] | None) -> Held:
    if data is None:
        return None
    if data.get("shuffle"):
        return Shuffle()
    return DealCard(Card.parse(data["card"]), burned=bool(data["burned"]))


def request_record(command: str, payload: bytes) -> dict[str, Any]:
    """A request as the journal keeps it: latin-1 maps every byte to one character, so the
    payload comes back byte for byte."""
    return {"command": command, "payload": payload.decode("latin-1")}


def _no_fields(request: dict[str, Any]) -> None:
    if request:
        raise RequestError("malformed_request", f"{min(request)}: this command takes no fields")
