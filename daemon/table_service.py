"""One table's brain in the daemon: shoe events and requests in, MQTT messages out.

Sans-I/O like the rules core it wraps: no sockets, no clock of its own (the envelope is
given one), so it is tested by feeding it events. The daemon's tasks move bytes; this
decides what they mean:

- a card's place follows from what the dealer console declared and the order the shoe
  dealt, never from which of the two streams reached the PC first: a card the round cannot
  yet place as declared (no round, betting not closed, no decision for the hand in play)
  is kept, in order, and placed once the declaration comes (daemon.custody, docs/rules.md
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
  meant (daemon.crossing): a doubt if that would have changed what was published;
- what the shoe sends is judged before anything is journaled (`judge`, decision D3): a repeat
  of a frame the journal holds is acknowledged again and applied no more, a loss is journaled
  as a `SequenceGap` first; the memory that takes (`receiver`) is rebuilt by the replay;
- every engine output becomes a message on its topic, and the retained round snapshot is
  refreshed, so a display connecting mid-round sees the table at once;
- every request gets a response carrying the caller's transaction id and the node that
  answered, an error code and a message when it is refused; a refused request changes
  nothing.
"""

from __future__ import annotations

import contextlib
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import structlog

from daemon.crossing import RoundHistory
from daemon.custody import NOTHING_READY, Custody
from daemon.inbound import from_record
from daemon.numbers.dealer import dealer_request
from daemon.reader_state import ReaderState
from daemon.redelivery import Answered
from daemon.requests import RequestError, no_fields, parse_request, refusal, response_body
from daemon.table_observer import UNOBSERVED
from daemon.topics import COMMANDS
from drivers import events as shoe
from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected
from drivers.errors import DriverError
from drivers.receiver import FrameReceiver
from drivers.registry import sequence_policy
from rules.cards import Card
from rules.config import TableConfig
from rules.engine import Awaiting, TableEngine
from rules.engine_state import engine_state, restore_engine
from rules.errors import CardParseError, EventError, MalformedEvent, RulesError
from rules.events import DealCard, PlaceWager, Shuffle, event_from_mapping
from rules.outputs import Notice, Settlement
from rules.table import RoundStage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from daemon.envelope import Envelopes, Outbound
    from daemon.journal import EventKind
    from daemon.requests import Request
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
_LIVE = (RoundStage.DEALING, RoundStage.PLAYING, RoundStage.DEALER)
# Requests that are rules events of the same name; the other commands are answered here.
_ENGINE_COMMANDS = frozenset({"wager", "withdraw", "close_betting", "action", "void"})
# What the dealer console is asked to do when the table holds cards in doubt.
_HOLD_ADVICE = (
    "; every card from here is held, not given to any seat: enter any card that went by "
    "unread (request/card), then confirm (request/resume), or void the round (request/void)"
)
_AWAITED = {
    "round": "a round: the console's wagers, then no more bets (request/close_betting)",
    "close_betting": "no more bets (request/close_betting)",
    "decision": "the decision of seat {seat} hand {hand} (request/action)",
}
DEFAULT_PROTOCOL: Final = "reference"
# The dealer console contract a table follows (docs/mqtt.md): 2 places a card only where the
# console declared it (no more bets, each hand's decision); 1, before declarations, placed
# each card as it came. Journaled with every start, so a journal written under 1 replays
# under 1: every message it made is made again, byte for byte (decision D4).
CONSOLE_CONTRACT: Final = 2
# The version of `TableService.checkpoint()`'s data; `restore` reads this one only.
CHECKPOINT_VERSION: Final = 1
MAX_ROUND_NOTICES = 50  # the snapshot keeps the latest ones: a retained message must stay small


class CheckpointError(Exception):
    """A checkpoint this code cannot restore (another version, or damaged data)."""


class _Crossed(RequestError):
    """A request refused because in its place it would have changed what was published."""

    def __init__(self, message: str, outputs: list[Outbound]) -> None:
        super().__init__("crossed_card", message)
        self.outputs = outputs


@dataclass(frozen=True, slots=True)
class Timer:
    """A deadline the table has running: the daemon journals `timer` records for it when it
    passes (daemon.service), naming `key` so that a late one changes nothing.

    `declaration`: a held card waits for the console (key: the wait's number); `silence`: a
    round waits for a card and the shoe says nothing (key: the shoe events taken so far).
    """

    kind: Literal["declaration", "silence"]
    key: int


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
        self.custody = Custody()
        self.history = RoundHistory()
        self.answered = Answered()  # the latest answers, for requests delivered again
        self.review: list[str] = []  # why the current round needs review; empty when it does not
        self.round_settlements: list[dict[str, Any]] = []
        self.round_notices: list[dict[str, Any]] = []
        self.pending_config: TableConfig | None = None  # new settings waiting for the round's end
        # The node that serves the table, as journaled with each start: responses name it.
        self.node: str | None = None
        self.contract = CONSOLE_CONTRACT
        self.shoe_events = 0  # shoe events taken: a silence is named by the last one
        # The reader's link (re)opened and the shoe has said nothing since: a start of
        # communication now is its greeting to the new host, not a restart.
        self.link_fresh = False
        self.silence_noticed: int | None = None  # the silence already told of
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
        the settings (and any waiting for the round's end), the reader, the cards in custody
        (held behind an unreadable one, for a declaration or for a doubt, and why), the
        round's history (for a request that crossed a card), its review, settlements and
        notices (the snapshot shows them until the next round opens), what the table holds of
        the shoe's numbering (decision D3: its last frame and identity) and its protocol, the
        node, the shoe's silence and the next message number. Not the log switch, the
        recorder or the observer: they are the caller's, not the table's.
        """
        pending = self.pending_config
        return {
            "version": CHECKPOINT_VERSION,
            "config": self.config.to_mapping(),
            "pending_config": None if pending is None else pending.to_mapping(),
            "engine": engine_state(self.engine),
            "reader": self.reader.state(),
            "custody": self.custody.state(),
            "history": self.history.state(),
            "answered": self.answered.state(),
            "review": list(self.review),
            "round_settlements": list(self.round_settlements),
            "round_notices": list(self.round_notices),
            "receiver": self.receiver.state(),
            "protocol": self.protocol,
            "node": self.node,
            "contract": self.contract,
            "shoe_events": self.shoe_events,
            "link_fresh": self.link_fresh,
            "silence_noticed": self.silence_noticed,
            "next_seq": self.envelopes.next_seq,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Become the table `state` describes (from `checkpoint`, or a checkpoint of an
        earlier version of this code); `CheckpointError` when it cannot be read, leaving
        this service as it was."""
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
            # Checkpoints written before declarations keep `held`, `doubt` and `doubt_at` at
            # the top level.
            custody = Custody.from_state(state.get("custody", state))
            history = RoundHistory.from_state(state.get("history"))
            answered = Answered.from_state(state.get("answered"))
            receiver = _receiver(state["protocol"], state["receiver"])
        except (KeyError, TypeError, ValueError, RulesError) as exc:
            raise CheckpointError(f"checkpoint: {type(exc).__name__}: {exc}") from None
        self.config, self.engine, self.reader = config, engine, reader
        self.custody, self.history, self.answered = custody, history, answered
        self.pending_config = pending_config
        self.review = list(state["review"])
        self.round_settlements = list(state["round_settlements"])
        self.round_notices = list(state["round_notices"])
        self.protocol, self.receiver = state["protocol"], receiver
        self.node = state.get("node")
        self.contract = int(state.get("contract", 1))  # a checkpoint from before contract 2
        self.shoe_events = int(state.get("shoe_events", 1))  # unknown before: assume heard
        self.link_fresh = bool(state.get("link_fresh", False))
        self.silence_noticed = state.get("silence_noticed")
        self.envelopes.next_seq = int(state["next_seq"])

    # ------------------------------------------------------------------ what it holds
    @property
    def round_id(self) -> int | None:
        return self.engine.round_id

    @property
    def held(self) -> list[DealCard | Shuffle | None]:
        return self.custody.held

    @property
    def doubt(self) -> str | None:
        return self.custody.doubt

    @property
    def awaiting_entry(self) -> int:
        """Unreadable cards the dealer console must enter."""
        return self.custody.awaiting_entry

    @property
    def cards_held(self) -> int:
        """Cards from the shoe that wait, not yet given to any seat."""
        return self.custody.cards_held

    def timers(self) -> tuple[Timer, ...]:
        """The deadlines running now (the daemon keeps the clock: daemon.service)."""
        running: list[Timer] = []
        wait = self.custody.wait
        if wait is not None:
            running.append(Timer("declaration", wait.number))
        if self._expects_card() and self.silence_noticed != self.shoe_events:
            running.append(Timer("silence", self.shoe_events))
        return tuple(running)

    def _expects_card(self) -> bool:
        """A round is being dealt, and its next card needs nothing declared: only the shoe
        is awaited."""
        round_ = self.engine.round
        return (
            round_ is not None
            and round_.stage in _LIVE
            and not self.custody.holding
            and self._awaiting() is None
        )

    @property
    def declared(self) -> bool:
        """Whether a card waits for its place to be declared (console contract 2)."""
        return self.contract >= CONSOLE_CONTRACT

    def _awaiting(self) -> Awaiting | None:
        """What the next card waits for; nothing under contract 1, which placed every card
        as it came."""
        return self.engine.awaiting() if self.declared else None

    def judge(self, event: object) -> Intake:
        """What to do with an event from the shoe, before anything of it is journaled: a
        repeat of a frame the journal holds is not taken (only acknowledged again); a loss
        is journaled first, as a `SequenceGap` (decision D3)."""
        return self.receiver.judge(event)

    # ------------------------------------------------------------------ journaled events
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
            out = self._apply_record(kind, record, at)
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
            out = self.internal_error()
        self.custody.follow_wait(self._awaiting(), at)
        return out

    def _apply_record(self, kind: EventKind, record: dict[str, Any], at: str) -> list[Outbound]:  # noqa: PLR0911 - a dispatch, one return per kind of record
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
        if kind == "timer":
            return self.on_timer(record)
        return self.on_start(
            record.get("protocol"), record.get("node"), int(record.get("contract", 1))
        )

    def _daemon_notice(self, record: dict[str, Any]) -> list[Outbound]:
        """The daemon's own word to the pit; with `hold`, a doubt over every card to come."""
        if record.get("hold"):
            return self._doubt(record["kind"], record["message"], always=True)
        return [self.notice(record["kind"], record["message"])]

    def internal_error(self) -> list[Outbound]:
        """An event could not be applied (a bug): the pit is told, the round is reviewed."""
        return self._flag("internal_error", "an event could not be applied; see the daemon's log")

    def on_start(
        self, protocol: str | None = None, node: str | None = None, contract: int = 1
    ) -> list[Outbound]:
        """The daemon (re)started, reading the shoe with `protocol`, as `node`, under console
        `contract` (all journaled with the event; a start journaled before the contract was
        named is contract 1). A shoe that keeps what it dealt meanwhile (the reference protocol)
        hands it over when it is next heard from, and its first contact says whether anything
        is missing (`judge`). One that keeps nothing may have dealt cards no one heard: if
        that can misplace a card, the table holds for the dealer; between rounds, the next
        round must be opened by a console that has seen the table since (`_unheard`). Then the
        table's retained state and snapshot, so a display never shows a table as it was
        before the restart."""
        if protocol is not None and protocol != self.protocol:
            self.protocol, self.receiver.policy = protocol, _policy(protocol)
        if node is not None:
            self.node = node
        self.contract = contract
        why = "the daemon restarted, and this shoe keeps nothing: a card dealt while it was down "
        if self.receiver.reliable:
            doubt = []
        elif self._at_stake():
            doubt = self._doubt("daemon_restarted", why + "is lost")
        elif self.declared and self.shoe_events:  # a table that never heard its shoe lost none
            doubt = self._unheard("daemon_restarted", why + "is lost")
        else:
            doubt = []
        return [*doubt, self.state(), self.snapshot()]

    @property
    def at_stake(self) -> bool:
        """Whether a card missed now could go to the wrong place (the daemon asks, for what
        its shoe's line lost: daemon.shoe_line)."""
        return self._at_stake()

    def _at_stake(self) -> bool:
        """Whether a card missed now could go to the wrong place: a round is open, a burn is
        due (the engine would take the round's first card for it), or cards wait in custody
        for the round they will be placed in."""
        return self.engine.round_open or self.engine.burns_due > 0 or bool(self.custody.held)

    def _doubt(self, reason: str, message: str, *, always: bool = False) -> list[Outbound]:
        """The table cannot be sure it has every card: the round is flagged, the pit told, and
        where a card could be misplaced (`always`: whatever the table is doing), every card
        from here is held for the dealer."""
        if always or self._at_stake():
            self.custody.begin_doubt(reason)
            message += _HOLD_ADVICE
        return self._flag(reason, message)

    def _unheard(self, reason: str, message: str) -> list[Outbound]:
        """A shoe that keeps nothing went unheard between rounds: nothing is lost unless the
        dealer dealt meanwhile, which only the console can know. The round that opens next
        goes on if the request that opens it comes from a console that had seen this notice
        (its `seen`); else it is a doubt (`_opened`)."""
        self.custody.unheard = self.envelopes.next_seq
        return [
            self.notice(
                reason,
                message + "; the next round is held for the dealer console unless the console "
                "that opens it has seen the table since this notice",
            )
        ]

    def on_timer(self, record: dict[str, Any]) -> list[Outbound]:
        """A deadline the daemon kept has passed (journaled, so a replay sees it too); it
        counts only if what it was set for still stands."""
        kind, key, seconds = record["timer"], int(record["key"]), float(record["seconds"])
        wait = self.custody.wait
        if kind == "declaration" and wait is not None and wait.number == key:
            awaited = _AWAITED[wait.awaiting.declaration].format(
                seat=wait.awaiting.seat, hand=wait.awaiting.hand
            )
            self.custody.begin_doubt("declaration_missing", all_held=True)
            message = (
                f"a card from the shoe has waited {seconds:.0f} s for {awaited}: it is not "
                "given to any seat by guess" + _HOLD_ADVICE
            )
            return self._flag("declaration_missing", message)
        if (
            kind == "silence"
            and key == self.shoe_events
            and self.silence_noticed != key
            and self._expects_card()
        ):
            self.silence_noticed = key
            return [
                self.notice(
                    "reader_silent",
                    f"the round has waited {seconds:.0f} s for a card and the shoe has said "
                    "nothing: check its cable (one pulled on the shoe's side of a USB adapter "
                    "or a device server leaves the PC's port open and silent)",
                )
            ]
        return []

    # ------------------------------------------------------------------ shoe
    def on_shoe_event(self, event: shoe.Event, *, seen_at: str) -> list[Outbound]:  # noqa: PLR0911 - a dispatch, one return per kind of event
        self.reader.last_seen = seen_at
        self.shoe_events += 1
        restarted = self.receiver.record(event)
        greeting, self.link_fresh = self.link_fresh, False
        match event:
            case shoe.SequenceGap() | shoe.SequenceConflict() | shoe.CommunicationStarted():
                return self._line_event(event, greeting=greeting)
            case shoe.CardDrawn():
                return self._card_drawn(event)
            case shoe.CardUnreadable(burned=burned):
                self._told.card_read(self.table_id, readable=False)
                return self._unreadable(burned=burned)
            case shoe.NewShoe():
                return self._new_shoe()
            case shoe.FaultSet():
                return self._fault(event)
            case shoe.FaultCleared(kind=kind):
                self.reader.faults.pop(kind, None)
                return [self.state()]
            case shoe.DeviceIdentity():
                return self._identified(event, restarted=restarted)
            case shoe.CutCardReached():
                return [
                    self.notice(
                        "cut_card", "the cut card is out: this is the last round of the shoe"
                    )
                ]
            case _:
                return []

    def _line_event(
        self,
        event: shoe.SequenceGap | shoe.SequenceConflict | shoe.CommunicationStarted,
        *,
        greeting: bool,
    ) -> list[Outbound]:
        """What the frames themselves say of the line: frames lost, a number used twice with
        other contents, a shoe that started its communication again."""
        match event:
            case shoe.SequenceGap(expected=expected, got=got):
                return self._doubt(
                    "sequence_gap",
                    f"frames lost between the reader and us (expected {expected}, got {got})",
                )
            case shoe.SequenceConflict(seq=seq):
                return self._doubt(
                    "sequence_conflict",
                    f"the shoe sent frame {seq} again with other contents: which one was "
                    "dealt cannot be told",
                    always=True,
                )
        # A start of communication right after the link (re)opened greets the new host; any
        # other is a restart, and a shoe that keeps nothing lost what it was dealing.
        if greeting or self.receiver.reliable or not self._at_stake():
            return []
        return self._doubt(
            "reader_restarted",
            "the shoe started its communication again (it restarted) while cards were at "
            "stake: a card dealt meanwhile is lost",
        )

    def _card_drawn(self, event: shoe.CardDrawn) -> list[Outbound]:
        """A card the shoe read. One it says it drew outside a game, or sent again without
        having sent it before, is not placed by guess."""
        self._told.card_read(self.table_id, readable=True)
        card = DealCard(Card.parse(event.code), burned=event.burned)
        if event.origin == "retransmission":
            # Whether it repeats the card before it or brings one the table never received
            # cannot be told from the frame: a six-deck shoe deals the same face twice in a
            # row about once in sixty. Only the dealer knows.
            out = self._doubt(
                "retransmitted_card",
                "the shoe sent a card again: it repeats the card before it or brings one that "
                "went by unread, and only the dealer knows which",
                always=True,
            )
            return [*out, *self._from_shoe(card)]
        if event.origin == "outside_game":
            if not self._at_stake():
                return [
                    self.notice(
                        "card_outside_game",
                        "the shoe read a card outside a game (lock, error or setting "
                        "mode): it belongs to no round",
                    )
                ]
            out = self._doubt(
                "card_outside_game",
                "the shoe read a card outside a game (lock, error or setting mode) while "
                "cards were at stake",
            )
            return [*out, *self._from_shoe(card)]
        return self._from_shoe(card)

    def _fault(self, event: shoe.FaultSet) -> list[Outbound]:
        """A fault the reader reports. A shoe that keeps nothing may have lost the card it
        was reading: while cards are at stake, the table holds them."""
        self.reader.faults[event.kind] = event.code
        name = getattr(event, "name", None)
        what = f"{event.kind} (code {event.code}{'' if name is None else ': ' + name})"
        if not self.receiver.reliable and self._at_stake():
            out = self._doubt(
                "reader_fault",
                f"reader fault set: {what}; this shoe keeps nothing, so the card it was "
                "reading may be lost",
            )
            return [*out, self.state()]
        return [self.notice("reader_fault", f"reader fault set: {what}"), self.state()]

    def _identified(self, event: shoe.DeviceIdentity, *, restarted: bool) -> list[Outbound]:
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
                self.link_fresh = True
                self._heard_again()
            case Disconnected(reason=reason):
                self.reader.link, self.reader.reason = "disconnected", reason
                return [self.notice("reader_disconnected", reason), self.state()]
            case LinkFault(reason=reason):
                self.reader.link, self.reader.reason = "fault", reason
                return [self.state()]
            case Reconnected(outage=outage):
                self.reader.link, self.link_fresh = "connected", True
                self._heard_again()
                return [self.state(), *self._reconnected(outage)]
        return [self.state()]

    def _heard_again(self) -> None:
        """The shoe's line is open again: a card sent before this went to no one, so only a
        console that has seen the state saying so (the next `seq`) vouches that the dealer
        did not deal while the table was unheard; the notice came before the line opened."""
        if self.custody.unheard is not None:
            self.custody.unheard = self.envelopes.next_seq

    def _reconnected(self, outage: float) -> list[Outbound]:
        """A shoe that keeps its frames hands over what it dealt meanwhile; only one that
        keeps nothing leaves a doubt (or, between rounds, an unheard table)."""
        if self.receiver.reliable:
            return []
        message = (
            f"the reader was away for {outage:.1f} s, and this shoe keeps nothing: "
            "a card dealt meanwhile is lost"
        )
        if self._at_stake():
            return self._doubt("reader_reconnected", message)
        return self._unheard("reader_reconnected", message) if self.declared else []

    def _from_shoe(self, card: DealCard) -> list[Outbound]:
        """A card in the shoe's order: placed now, or kept until its place is declared (or
        its doubt resolved)."""
        awaiting = self._awaiting()
        if not self.custody.holding and (awaiting is None or card.burned):
            return self._apply(card, source="shoe")  # a burn the reader saw goes to the rack
        out: list[Outbound] = []
        if self.declared and awaiting == Awaiting("round") and not self.custody.holding:
            out = self._card_before_round()
        self.custody.hold(card)
        return [*out, self.snapshot()]  # the pit sees the count of cards held

    def _card_before_round(self) -> list[Outbound]:
        """A card came while no round was open. It is the next round's first card, come before
        the console's wagers, or one the dealer drew that no round needed (decision 7): only
        the dealer can say, so it is held with the round it would join."""
        if self.custody.unheard is not None:
            # After the table went unheard: the dealer is dealing a round it did not hear begin.
            self.custody.unheard = None
            return self._doubt(
                "unheard_round",
                "a card came before any wager after the table went unheard: the round may be "
                "missing its first cards",
                always=True,
            )
        return self._doubt(
            "card_before_round",
            "a card came while no round was open: it is the next round's first card, come "
            "before the console's wagers, or a card no round needed; resume deals it as the "
            'round\'s first card, resume with {"discard": 1} sets it aside',
            always=True,
        )

    def _new_shoe(self) -> list[Outbound]:
        """A new shoe: what waited for a round belongs to none; in a round, it waits its turn
        (the engine refuses a shuffle in the middle of one)."""
        round_ = self.engine.round
        if round_ is not None and round_.stage in _LIVE:
            self.custody.hold(Shuffle())
            return [self.snapshot()]
        return [*self._drop_held("a new shoe"), *self._apply(Shuffle(), source="shoe")]

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
        self.custody.hold(None)
        return [
            self.notice(
                "card_unreadable",
                "a card left the shoe unread: enter it at the dealer console (request/card); "
                "the cards after it wait until then",
            ),
            self.snapshot(),
        ]

    def _release(self) -> list[Outbound]:
        """Place what waits, in order, while its place is declared: up to the next
        unreadable card, the doubt, or a card whose declaration has not come."""
        out: list[Outbound] = []
        custody = self.custody
        while True:
            round_ = self.engine.round
            live = round_ is not None and round_.stage in _LIVE
            item = custody.next_ready(self._awaiting(), live=live)
            if item is NOTHING_READY:
                return out
            assert isinstance(item, DealCard | Shuffle)
            out += self._apply(item, source="shoe")

    def _drop_held(self, why: str) -> list[Outbound]:
        """The round (or shoe) the held cards belonged to is over: they go nowhere."""
        if not self.custody.holding:
            return []
        dropped = self.custody.drop()
        if not dropped:
            return [self.snapshot()]
        notice = self.notice("held_cards_dropped", f"{dropped} held cards dropped: {why}")
        return [notice, self.snapshot()]

    # ------------------------------------------------------------------ requests
    def on_request(
        self, command: str, payload: bytes, *, outbox_full: bool = False
    ) -> list[Outbound]:
        """Answer a request. `outbox_full` is journaled with the request (the outbox is not
        table state), so a replay refuses exactly what was refused."""
        transaction: object = None
        key: str | None = None
        try:
            request = parse_request(payload)
            transaction = request.transaction
            if transaction is not None and command != "status":
                key = Answered.key(command, payload)
                earlier = self.answered.get(key)
                if earlier is not None:  # delivered again: answered again, not obeyed again
                    return [self._answer(command, transaction, {**earlier, "duplicate": True})]
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
            crossed = exc.outputs if isinstance(exc, _Crossed) else []
            refused = refusal(exc)
            if key is not None:
                self.answered.keep(key, refused)
            return [*crossed, *notice, self._answer(command, transaction, refused)]
        answer = {"status": "ok", "data": data}
        if key is not None:
            self.answered.keep(key, answer)
        return [*out, self._answer(command, transaction, answer)]

    def refuse(self, command: str, transaction: object, code: str, message: str) -> list[Outbound]:
        """The response to a request refused before it reached the table (the request gate):
        it was not journaled and changes nothing."""
        self._log_info(
            "table.request_refused", table=self.table_id, round=self.round_id,
            command=command, code=code, reason=message,
        )  # fmt: skip
        body = response_body(command, transaction, self.node, refusal(RequestError(code, message)))
        return [self.envelopes.seal_unsequenced(self.topics.response(self.table_id, command), body)]

    def _request(  # noqa: C901, PLR0911 - a dispatch, one return per command
        self, command: str, request: Request, *, outbox_full: bool
    ) -> tuple[dict[str, Any], list[Outbound]]:
        if command == "status":
            no_fields(request)
            return {"reader": self.reader.to_mapping(), "round": self._snapshot_body()}, []
        if command == "shuffle":
            no_fields(request)
            return {}, self._shuffle_asked(request.seen)
        if command == "card":
            return {}, self._manual_card(request)
        if command == "dealer":  # numbers: who deals from now on (daemon/numbers/dealer.py)
            return dealer_request(request), []
        if command == "resume":
            return self._resume(request)
        if command == "void" and not self.engine.round_open and self.custody.holding:
            dropped = self.custody.cards_held
            return {"dropped": dropped}, self._drop_held("voided before any round was open")
        if command == "wager" and not self.engine.round_open and outbox_full:
            raise RequestError(
                "outbox_full",
                "the broker has been away too long: no new round until its messages are "
                "delivered (nothing is lost; they wait on disk)",
            )
        if command in _ENGINE_COMMANDS:
            try:
                event = event_from_mapping({"type": command, **request.fields})
            except MalformedEvent as exc:
                raise RequestError("malformed_request", exc.message) from None
            out = self._engine_request(event, request.seen)
            if command == "void":  # the held cards belonged to the round just voided
                return {}, [*out, *self._drop_held("their round was voided")]
            return {}, [*out, *self._release()]
        raise RequestError(
            "unknown_command",
            f"unknown command {command!r}; commands: {', '.join(COMMANDS)}",
        )

    def _engine_request(self, event: TableEvent, seen: int | None) -> list[Outbound]:
        """A rules event the console asked for; one that may have crossed a card on its way
        is tried where it may have been meant first (daemon.crossing)."""
        at = self.history.crossed(seen)
        if at < len(self.history.steps):
            placement = self.history.place(self.config, event, at)
            if placement.conflict:
                message = (
                    f"this request was sent before the console saw {placement.crossed} "
                    "card(s) the table had placed, and before them it would have changed "
                    "them"
                )
                doubt = self._doubt("crossed_request", message, always=True)
                raise _Crossed(message + ": it is not applied", doubt)
        return self._apply_or_refuse(event, seen)

    def _shuffle_asked(self, seen: int | None) -> list[Outbound]:
        """A new shoe the console announces. Cards the table holds between rounds may have
        come before it (the old shoe's) or after it (the new shoe's burn and first cards: the
        console's word was late): they stay held, for the floorperson to set aside the old
        ones (`resume` with `discard`) and let the rest be burned and dealt. A shuffle asked
        for before the console saw the table come back from going unheard may have had its
        burn dealt while no one heard: the round's first card would be taken for it, so the
        cards are held until the dealer says (`resume` with `burned`)."""
        unheard = self.custody.unheard
        out = self._apply_or_refuse(Shuffle())
        if self.engine.burns_due and unheard is not None and (seen is None or seen < unheard):
            out += self._doubt(
                "unheard_shuffle",
                "the console asked for this shuffle before it had seen the table since it "
                "went unheard: its burn card may have been dealt while no one heard; resume "
                'with {"burned": 1} if it was',
                always=True,
            )
        elif self.custody.cards_held and self.custody.doubt is None:
            out += self._card_before_round()
        return [*out, self.snapshot()]

    def _resume(self, request: Request) -> tuple[dict[str, Any], list[Outbound]]:
        """The dealer confirms that no card went by unread (any that did were entered), and
        sets aside the first `discard` held cards if they belong to no round: the held cards
        are placed, in order, each where its declaration puts it; the round goes on, still
        flagged for review."""
        discard = request.fields.pop("discard", 0)
        burned = request.fields.pop("burned", 0)
        no_fields(request)
        if self.custody.doubt is None:
            raise RequestError("nothing_held", "no cards are held for a doubt: nothing to resume")
        due = self.engine.burns_due
        if isinstance(burned, bool) or not isinstance(burned, int) or not 0 <= burned <= due:
            raise RequestError(
                "malformed_request",
                f"burned: how many burn cards the dealer dealt while no one heard, from 0 to "
                f"the burns still due ({due})",
            )
        if not self.custody.discard(discard):
            raise RequestError(
                "malformed_request",
                f"discard: how many of the first held cards belong to no round, from 0 to "
                f"the cards held before any other held item ({self.custody.leading_cards})",
            )
        self.engine.burns_due -= burned  # gone to the rack unheard: not the round's cards
        self.custody.resolve()
        held = self.custody.cards_held
        out = self._release()
        return {"released": held - self.custody.cards_held}, [*out, self.snapshot()]

    def _manual_card(self, request: Request) -> list[Outbound]:
        fields = request.fields
        if set(fields) != {"card"} or not isinstance(fields["card"], str):
            raise RequestError("malformed_request", 'card: give exactly {"card": "QH"}')
        try:
            card = Card.parse(fields["card"])
        except CardParseError:
            # Not the parser's message: it quotes the text, and a mistyped hole card must not
            # reach the response topic, which displays read, nor the log.
            raise RequestError(
                "malformed_request", "card: not a card; give rank then suit, e.g. QH, 10S or TS"
            ) from None
        try:
            self.engine.check_card(card)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        # The dealer enters cards in the order they left the shoe: the unreadable ones held
        # before the doubt, then those that went by unheard, then (once resumed) the
        # unreadable ones after it. Each takes its place in custody and is placed from there.
        if not self.custody.enter(DealCard(card)):
            raise RequestError("no_unreadable_card", "no unreadable card is waiting to be entered")
        return [*self._release(), self.snapshot()]

    def _apply_or_refuse(self, event: TableEvent, seen: int | None = None) -> list[Outbound]:
        engine = self.engine
        before = self.history.opening(engine) if isinstance(event, PlaceWager) else None
        first_seq = self.envelopes.next_seq
        try:
            outputs = engine.apply(event)
        except EventError as exc:
            raise RequestError(exc.code, exc.message) from None
        self.history.record(engine, before, event, outputs, from_shoe=False, first_seq=first_seq)
        self._record(event)
        out = self._publish(outputs)
        if before is not None and engine.round_open:
            out += self._opened(seen)
        return out

    def _opened(self, seen: int | None) -> list[Outbound]:
        """A request opened a round. If the table went unheard since the last one (a shoe
        that keeps nothing), the dealer may have dealt meanwhile: only a console that had
        seen the table back (`seen`) before opening the round shows it did not."""
        unheard, self.custody.unheard = self.custody.unheard, None
        if unheard is None or (seen is not None and seen >= unheard):
            return []
        return self._doubt(
            "unheard_round",
            "this round was opened by a console that had not seen the table since it went "
            "unheard (its request was sent before, or says nothing of what it had seen): "
            "the dealer may have dealt cards no one heard",
            always=True,
        )

    def _record(self, event: Recorded) -> None:
        if self.recorder is not None:
            self.recorder(event, self.round_id)

    # ------------------------------------------------------------------ engine
    def _apply(self, event: TableEvent, *, source: str) -> list[Outbound]:
        """Apply an event the table produced (not a request): a refusal is a notice."""
        engine = self.engine
        first_seq = self.envelopes.next_seq
        try:
            outputs = engine.apply(event)
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
        self.history.record(engine, None, event, outputs, from_shoe=True, first_seq=first_seq)
        self._record(event)
        return self._publish(outputs)

    def _publish(self, outputs: list[Output]) -> list[Outbound]:
        out: list[Outbound] = []
        ended = False
        for output in outputs:
            body = output.to_mapping()
            kind = body["type"]
            if kind == "round_opened":
                self.review.clear()
                self.round_settlements.clear()
                self.round_notices.clear()
                if self.custody.doubt is not None:  # raised before the round, over its cards
                    self.review.append(self.custody.doubt)
            if kind == "round_ended":
                ended = True
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
        if ended and self.custody.cards_held and self.custody.doubt is None:
            # A card came during the round that no decision of it took: the next round's
            # first card, early, or one no round needed. As a card with no round open.
            out += self._card_before_round()
        if outputs:
            out.append(self.snapshot())
        return out

    def _flag(self, reason: str, message: str) -> list[Outbound]:
        if self.engine.round_open:
            self.review.append(reason)
        out = [self.notice(reason, message)]
        return [*out, self.snapshot()] if self.engine.round_open or self.custody.holding else out

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
        custody = self.custody
        view["review"] = list(self.review)
        view["awaiting_card_entry"] = custody.awaiting_entry
        view["doubt"] = custody.doubt
        view["cards_held"] = custody.cards_held
        wait = custody.wait
        view["awaiting"] = (
            None if wait is None else {**wait.awaiting.to_mapping(), "since": wait.since}
        )
        view["settlements"] = list(self.round_settlements)
        view["notices"] = self.round_notices[-MAX_ROUND_NOTICES:]
        return view

    def snapshot(self) -> Outbound:
        # What the first held card waits for, as of this event (the wait's timer with it).
        self.custody.follow_wait(self._awaiting(), self.envelopes.time())
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

    def _answer(self, command: str, transaction: object, answer: dict[str, Any]) -> Outbound:
        """The response: `answer` is its status with its data or error (and `duplicate`)."""
        body = response_body(command, transaction, self.node, answer)
        return self.envelopes.seal(self.topics.response(self.table_id, command), body)


def _policy(protocol: str) -> SequencePolicy | None:
    """The protocol's numbering; none (judge nothing) for one no longer installed."""
    try:
        return sequence_policy(protocol)
    except DriverError:
        return None


def _receiver(protocol: str, state: dict[str, Any]) -> FrameReceiver:
    """The receiver a checkpoint kept; one written before the receiver kept the last frame's
    content holds its number and device only (a repeat is then judged by number alone)."""
    if "held" in state:
        return FrameReceiver.from_state(_policy(protocol), state)
    receiver = FrameReceiver(_policy(protocol))
    receiver.last = state["last"]
    device = state["device"]
    if device is not None:
        identity = from_record(device)
        if not isinstance(identity, shoe.DeviceIdentity):
            raise TypeError(f"not a device identity: {device.get('event')!r}")
        receiver.device = identity
    return receiver
