"""What one table holds, and the queries every concern of it asks.

The table service (daemon.table.service) is built of one class per concern, each on the
ones below it: this state; publishing; the custody of the shoe's cards; the reader's
events and the dealer console's requests beside each other; the checkpoint codec. They
share this one state, so nothing is copied between them and a checkpoint sees it whole.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

import structlog

from daemon.table.crossing import RoundHistory
from daemon.table.custody import Custody
from daemon.table.observer import UNOBSERVED
from daemon.table.reader_state import ReaderState
from daemon.table.redelivery import Answered
from daemon.table.surveillance import TableSurveillance
from drivers.codecs.base import HostLink
from drivers.errors import DriverError
from drivers.receiver import FrameReceiver
from drivers.registry import host_session, sequence_policy
from drivers.session import HostSession
from rules.engine import Awaiting, TableEngine
from rules.table import RoundStage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from daemon.table.observer import TableObserver
    from daemon.wire.envelope import Envelopes
    from daemon.wire.topics import Topics
    from drivers.codecs.sequence import SequencePolicy
    from drivers.receiver import Intake
    from rules.config import TableConfig
    from rules.events import DealCard, Shuffle, TableEvent

    # What the recorder is told: every event the rules accepted, and new settings taken.
    Recorded = TableEvent | TableConfig

log = structlog.get_logger("daemon.table")

LIVE = (RoundStage.DEALING, RoundStage.PLAYING, RoundStage.DEALER)
DEFAULT_PROTOCOL: Final = "reference"
# The dealer console contract a table follows (docs/mqtt.md): 2 places a card only where the
# console declared it (no more bets, each hand's decision); 1, before declarations, placed
# each card as it came. Journaled with every start, so a journal written under 1 replays
# under 1: every message it made is made again, byte for byte (decision D4). 3: the round
# snapshot is a state outside the numbering (daemon.table.round_state); 4: one numbered
# message an input, the round with what the input caused (`mqtt.contract`, decision M5).
CONSOLE_CONTRACT: Final = 3
# The first contract under which a card waits for its place to be declared: fixed, not the
# current contract, or a journal written under 2 would replay placing cards as they came.
DECLARED_CONTRACT: Final = 2
MAX_ROUND_NOTICES = 50  # the snapshot keeps the latest ones: a retained message must stay small


def policy_for(protocol: str) -> SequencePolicy | None:
    """The protocol's numbering; none (judge nothing) for one no longer installed."""
    try:
        return sequence_policy(protocol)
    except DriverError:
        return None


def session_for(protocol: str) -> HostSession:
    """A new host session in `protocol`; one that only listens and judges nothing for a
    protocol no longer installed (a tool replaying an old journal)."""
    try:
        return host_session(protocol)
    except DriverError:
        return HostSession(HostLink())


class TableState:
    """One table's state: the engine, the reader, the cards in custody, the round's
    review, settlements and notices, the shoe's numbering; and the small queries on it."""

    def __init__(
        self,
        config: TableConfig,
        topics: Topics,
        envelopes: Envelopes,
        *,
        protocol: str = DEFAULT_PROTOCOL,
        session: HostSession | None = None,
    ) -> None:
        """`session`: the host's side of the shoe's protocol, the table's own (its memory is
        `receiver`), which the daemon hands the table's driver; a new one when not given.
        `protocol`: the registry's name of the table's shoe protocol, whose numbering
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
        # Lines written once the event's messages are with the publisher (`write_held_lines`).
        self.held_lines: list[tuple[str, dict[str, object]]] = []
        # Told of every event the rules accepted, with its round: `shoe2mqtt journal` exports.
        self.recorder: Callable[[Recorded, int | None], None] | None = None
        # What the table holds of the shoe's numbering (decision D3): the last frame journaled
        # and who the device is; rebuilt by the replay like everything else.
        self.protocol = protocol
        self.session = session if session is not None else session_for(protocol)
        self.session.memory.load(FrameReceiver(policy_for(protocol)))
        # Told of cards, settlements, notices and refusals as they happen: the metrics.
        self.observer: TableObserver = UNOBSERVED
        self._round_changed = False  # the round state to publish changed (table.round_state)
        self._applying = False  # in TableService.apply: a snapshot is only noted, not made
        # Under contract 4, what the input being applied caused: one message carries it all.
        self._carried: list[dict[str, Any]] = []
        self._response: dict[str, Any] | None = None
        # surveillance hook: the shoe's census, the seats' evidence (daemon.table.surveillance)
        self.surveillance = TableSurveillance(config, topics, envelopes)

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
        self.surveillance.reconfigure(config)  # surveillance hook
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

    @property
    def declared(self) -> bool:
        """Whether a card waits for its place to be declared (console contract 2)."""
        return self.contract >= DECLARED_CONTRACT

    def _awaiting(self) -> Awaiting | None:
        """What the next card waits for; nothing under contract 1, which placed every card
        as it came."""
        return self.engine.awaiting() if self.declared else None

    @property
    def at_stake(self) -> bool:
        """Whether a card missed now could go to the wrong place (the daemon asks, for what
        its shoe's line lost: daemon.table.shoe_line)."""
        return self._at_stake()

    def _at_stake(self) -> bool:
        """Whether a card missed now could go to the wrong place: a round is open, a burn is
        due (the engine would take the round's first card for it), or cards wait in custody
        for the round they will be placed in."""
        return self.engine.round_open or self.engine.burns_due > 0 or bool(self.custody.held)

    @property
    def receiver(self) -> FrameReceiver:
        """What the table holds of the shoe's numbering: its session's memory."""
        return self.session.memory

    def judge(self, event: object) -> Intake:
        """What to do with an event from the shoe, before anything of it is journaled: a
        repeat of a frame the journal holds is not taken (only acknowledged again); a loss
        is journaled first, as a `SequenceGap` (decision D3)."""
        return self.receiver.judge(event)

    def _record(self, event: Recorded) -> None:
        if self.recorder is not None:
            self.recorder(event, self.round_id)

    @property
    def _told(self) -> TableObserver:
        """The observer, or nobody while the journal is replayed."""
        return UNOBSERVED if self.quiet else self.observer

    def _log_info(self, event: str, **fields: object) -> None:
        if not self.quiet:
            log.info(event, **fields)

    def _hold_info(self, event: str, **fields: object) -> None:
        """An info line written by `write_held_lines`, once the commit has handed the
        event's messages to the publisher: a round's end seals a settlement a seat and wager,
        and a line each (some 30 µs) would otherwise stand between them and the broker."""
        if not self.quiet:
            self.held_lines.append((event, fields))

    def write_held_lines(self) -> None:
        """Write the lines held since the last call, in the order they were held."""
        if not self.held_lines:  # most events: no settlement, nothing to swap
            return
        lines, self.held_lines = self.held_lines, []
        for event, fields in lines:
            log.info(event, **fields)

    def _log_warning(self, event: str, **fields: object) -> None:
        if not self.quiet:
            log.warning(event, **fields)
