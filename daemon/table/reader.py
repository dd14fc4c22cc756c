"""What the table makes of its shoe reader: the daemon's start, the shoe's events (cards,
shuffles, faults, identity, what the frames say of the line) and the link's (connected,
lost, back), each judged for what it can have cost the round (docs/durability.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.table.custody_flow import CustodyFlow
from daemon.table.state import policy_for
from drivers import events as shoe
from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected
from rules.cards import Card
from rules.events import DealCard

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound


class ReaderEvents(CustodyFlow):
    """The daemon's start, the shoe's events and the link's, as the table takes them."""

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
            self.protocol, self.receiver.policy = protocol, policy_for(protocol)
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
