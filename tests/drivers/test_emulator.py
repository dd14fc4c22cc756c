"""The emulated shoe against the real host decoders: sans-I/O, then over real kernel ptys.

The sans-I/O tests feed `ShoeEmulator`'s writes straight into the host's decoder, so each
fault can be checked against the exact counter or event it must produce. The pty tests then
show the same through pyserial and the kernel: the host opens the port as it would open a
USB-serial adapter, and an unplug looks to it like one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any, Self

import pytest

from drivers.codecs import enq, reference
from drivers.emulator import (
    EmulatedShoe,
    EmulatorError,
    EmulatorSettings,
    FaultRates,
    ShoeEmulator,
    parse_script,
)
from drivers.emulator.kept_frames import KeptFrame, KeptFrames
from drivers.events import (
    Acknowledge,
    CardDrawn,
    CardUnreadable,
    CommandAccepted,
    CommunicationStarted,
    CutCardReached,
    DeviceIdentity,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    SequenceGap,
    StatusRequest,
    VendorCommand,
)
from drivers.transports import LinkLost, SerialSettings, SerialTransport
from tests.drivers.helpers import Receipts

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from drivers.codecs.base import Decoder
    from drivers.emulator import FaultName, ProtocolName
    from drivers.emulator.core import Write
    from drivers.events import Event

DECODERS: dict[str, Callable[[], Decoder]] = {
    "reference": reference.DeviceFrameDecoder,
    "enq": enq.DeviceFrameDecoder,
}
PROTOCOL_NAMES: tuple[ProtocolName, ...] = ("reference", "enq")


def wire(writes: list[Write]) -> bytes:
    return b"".join(write.data for write in writes)


def cards_of(events: list[Event]) -> list[CardDrawn | CardUnreadable]:
    return [e for e in events if isinstance(e, CardDrawn | CardUnreadable)]


def acknowledgement(seq: int) -> bytes:
    return reference.encode_host_frame(Acknowledge(acknowledged_seq=seq), seq=0)


class Line:
    """A sans-I/O emulator wired to a host: what the host takes, card by card.

    The host is the daemon's, minus the journal: it judges every frame with the shoe's own
    numbering (a repeat is not taken twice, a loss is a `SequenceGap` among the events) and,
    on the reference protocol, acknowledges every frame it took; when nothing comes back,
    the device's resend timer fires (`resend`), as time would make it.
    """

    def __init__(
        self,
        protocol: ProtocolName = "reference",
        seed: int = 1,
        *,
        acknowledging: bool = True,
        **settings: Any,
    ) -> None:
        self.emulator = ShoeEmulator(
            EmulatorSettings(protocol=protocol, **settings), seed, power_up=7
        )
        self.decoder = DECODERS[protocol]()
        self.receipts = Receipts(self.decoder.sequence)
        self.events = self.receipts.events
        self.acknowledging = acknowledging
        self.take(self.emulator.power_up())

    @property
    def repeats(self) -> int:
        return self.receipts.repeats

    def deal(self, count: int = 1) -> list[Event]:
        before = len(self.events)
        for _ in range(count):
            dealing = self.emulator.deal()
            assert dealing is not None
            self.take(dealing.writes)
        return self.events[before:]

    def take(self, writes: list[Write]) -> None:
        """Feed `writes` to the host, and whatever the device answers, until it is quiet."""
        while True:
            if not writes and self.acknowledging and self.emulator.in_flight is not None:
                writes = self.emulator.resend()  # nothing came back: the device's timer fires
                continue
            if not writes:
                return
            answers: list[Write] = []
            for event in self.decoder.feed(wire(writes)):
                seq = self.receipts.take(event)
                if seq is not None and self.acknowledging:
                    answers += self.emulator.receive(acknowledgement(seq))
            writes = answers


def assert_bad_checksums_counted(
    protocol: ProtocolName, counted: int, flipped: int, dropped: int = 0
) -> None:
    if protocol == "reference":
        # Where a frame was dropped, the noise before it and the noise before the next one
        # meet between two flags, and a run that long is judged as a frame: a CRC failure.
        assert flipped <= counted <= flipped + dropped
    else:
        # After dropping a frame the ENQ decoder hunts inside it (docs/protocol.md 2.3, rule
        # 6): a SEQ byte equal to a start byte can begin one more candidate, which fails too.
        assert counted >= flipped


# ================================================================ the shoe model


def test_the_same_seed_deals_the_same_cards_and_bytes() -> None:
    first, second = ShoeEmulator(EmulatorSettings(), 42), ShoeEmulator(EmulatorSettings(), 42)
    other = ShoeEmulator(EmulatorSettings(), 43)

    def dealt(emulator: ShoeEmulator) -> list[bytes]:
        return [wire(d.writes) for d in (emulator.deal() for _ in range(100)) if d is not None]

    assert dealt(first) == dealt(second)
    assert dealt(first) != dealt(other)


def test_faults_do_not_change_the_cards_a_seed_deals() -> None:
    clean = Line(seed=5)
    noisy = Line(seed=5, faults=FaultRates(noise=0.5, split=0.5, unreadable=0.0))
    assert cards_of(clean.deal(50)) == cards_of(noisy.deal(50))


def test_a_shoe_is_its_decks_shuffled_with_the_first_card_burned() -> None:
    line = Line(decks=2, penetration=0.99, cards_after_cut=1)
    events = line.deal(104)
    assert isinstance(events[0], NewShoe)
    cards = cards_of(events)
    assert isinstance(cards[0], CardDrawn)
    assert [c.burned for c in cards] == [True] + [False] * 103
    codes = collections.Counter(c.code for c in cards if isinstance(c, CardDrawn))
    assert len(codes) == 52
    assert set(codes.values()) == {2}


def test_spanish_decks_have_no_tens() -> None:
    line = Line(decks=1, spanish=True, penetration=0.99, cards_after_cut=1)
    cards = [c for c in cards_of(line.deal(48)) if isinstance(c, CardDrawn)]
    assert len({c.code for c in cards}) == 48
    assert not [c for c in cards if c.rank == "10"]


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_the_cut_card_comes_out_at_the_penetration_then_the_shoe_is_reshuffled(
    protocol: ProtocolName,
) -> None:
    line = Line(protocol, decks=1, penetration=0.5, cards_after_cut=3)
    events = line.deal(26 + 3 + 1)
    cut = next(i for i, e in enumerate(events) if isinstance(e, CutCardReached))
    assert len(cards_of(events[:cut])) == 26  # burn card included: it left the shoe too
    after = cards_of(events[cut:])
    assert len(after) == 4
    if protocol == "reference":  # the ENQ family has no new-shoe frame in public
        assert isinstance(events[-2], NewShoe)
    assert after[-1].burned  # the first card of the new shoe
    assert line.emulator.stats.shuffles == 2


def test_a_script_deals_exactly_its_cards_then_runs_out() -> None:
    line = Line(script="BURN 7C QH 10S ?? CUT 5D")
    events = line.deal(5)
    assert [type(e).__name__ for e in events] == [
        "CardDrawn",
        "CardDrawn",
        "CardDrawn",
        "CardUnreadable",
        "CutCardReached",
        "CardDrawn",
    ]
    assert [(e.code, e.burned) for e in events if isinstance(e, CardDrawn)] == [
        ("7C", True),
        ("QH", False),
        ("10S", False),
        ("5D", False),
    ]
    assert line.emulator.deal() is None


@pytest.mark.parametrize("script", ["QH XX", "BURN", "CUT", "BURN CUT QH", ""])
def test_a_bad_script_says_how_to_write_one(script: str) -> None:
    with pytest.raises(EmulatorError, match="card"):
        parse_script(script)


def test_fault_rates_that_cannot_add_up_are_refused() -> None:
    with pytest.raises(EmulatorError, match="at most 1"):
        FaultRates(drop=0.6, bad_checksum=0.3, repeat=0.2)
    with pytest.raises(EmulatorError, match="rate from 0 to 1"):
        FaultRates(noise=1.5)
    with pytest.raises(EmulatorError, match="only has numbered errors"):
        ShoeEmulator(EmulatorSettings(protocol="enq"), 1).set_fault("jam")


# ================================================================ faults, as the host sees them


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_a_dropped_frame_is_sent_again_by_a_reference_shoe_and_lost_by_an_enq_one(
    protocol: ProtocolName,
) -> None:
    line = Line(protocol, script="2C 3C 4C")
    line.deal()
    line.emulator.force("drop")
    line.deal(2)
    codes = [c.code for c in cards_of(line.events) if isinstance(c, CardDrawn)]
    assert not [e for e in line.events if isinstance(e, SequenceGap)]
    if protocol == "reference":  # kept until acknowledged: late, never lost
        assert codes == ["2C", "3C", "4C"]
        assert line.emulator.stats.resends == 1
    else:  # the family keeps nothing, and its SEQ is not known to count by one: no gap
        assert codes == ["2C", "4C"]


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_a_repeated_frame_is_taken_once(protocol: ProtocolName) -> None:
    line = Line(protocol, script="2C 3C")
    line.emulator.force("repeat")
    line.deal(2)
    assert len(cards_of(line.events)) == 2
    # Every protocol's receiver judges it, by number and content (a reference host also
    # acknowledges it again, which releases nothing more).
    assert line.repeats == 1
    assert line.receipts.receiver.counters.conflicts == 0


def test_enq_copies_are_all_repeats_but_one() -> None:
    line = Line("enq", script="2C 3C 4C", copies=3)
    line.deal(3)
    assert len(cards_of(line.events)) == 3
    assert line.repeats == 2 * 4  # the S frame and three cards
    assert line.decoder.counters.frames_ok == 3 * 4  # the decoder hands every copy up


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_a_flipped_checksum_bit_is_counted_as_a_bad_checksum(protocol: ProtocolName) -> None:
    line = Line(protocol, script="2C 3C 4C")
    line.deal()
    line.emulator.force("bad_checksum")
    line.deal(2)
    assert line.decoder.counters.bad_checksum == 1
    # The reference shoe numbers only what it keeps (cards from 0) and sends the card again;
    # the ENQ shoe's `S` took number 0, and its corrupted card is gone.
    seqs = [0, 1, 2] if protocol == "reference" else [1, 3]
    assert [c.seq for c in cards_of(line.events)] == seqs


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_an_unreadable_card_reaches_the_host_as_card_unreadable(protocol: ProtocolName) -> None:
    line = Line(protocol, seed=3)
    line.emulator.force("unreadable")
    events = line.deal()
    (card,) = cards_of(events)
    assert isinstance(card, CardUnreadable)
    assert card.burned  # the burn card: unreadable, and still known to be burned


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_noise_between_frames_is_skipped_as_garbage_and_costs_no_card(
    protocol: ProtocolName,
) -> None:
    line = Line(protocol, seed=9, faults=FaultRates(noise=1.0))
    dealt_before = line.emulator.stats.frames
    line.deal(40)
    assert len(cards_of(line.events)) == 40
    assert line.decoder.counters.garbage_bytes == line.emulator.stats.noise_bytes > 0
    assert line.emulator.stats.frames > dealt_before


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_every_fault_at_once_loses_exactly_the_cards_the_emulator_says(
    protocol: ProtocolName,
) -> None:
    rates = FaultRates(
        noise=0.2, drop=0.1, bad_checksum=0.1, split=0.3, repeat=0.1, unreadable=0.05
    )
    line = Line(protocol, 11, faults=rates)
    delivered: list[Event] = []
    for _ in range(300):
        dealing = line.emulator.deal()
        assert dealing is not None
        if dealing.dealt.delivered:
            delivered.append(dealing.dealt.event)
        line.take(dealing.writes)
    stats, counters = line.emulator.stats, line.decoder.counters
    assert cards_of(line.events) == delivered
    assert stats.bad_checksums > 0
    assert_bad_checksums_counted(
        protocol, counters.bad_checksum, stats.bad_checksums, stats.dropped
    )
    assert line.repeats == stats.repeats > 0
    assert stats.dropped > 0
    assert stats.splits > 0
    assert len([c for c in delivered if isinstance(c, CardUnreadable)]) > 0
    if protocol == "reference":  # every card arrives, the lost sendings sent again
        assert len(delivered) == 300
        assert stats.resends == stats.dropped + stats.bad_checksums
        assert not [e for e in line.events if isinstance(e, SequenceGap)]


# ================================================================ the device's duties


def test_a_reference_shoe_sends_one_frame_at_a_time_and_the_next_once_acknowledged() -> None:
    """Stop and wait: the frame awaiting an acknowledgement is always the oldest kept."""
    line = Line(script="2C 3C 4C", acknowledging=False)
    emulator = line.emulator
    first, second, third = (emulator.deal() for _ in range(3))
    assert first is not None
    assert second is not None
    assert third is not None
    assert first.writes
    assert not second.writes  # they wait their turn
    assert not third.writes
    assert (second.dealt.fate, second.dealt.kept, second.dealt.delivered) == (None, True, True)
    assert emulator.unacknowledged == 3
    line.take(first.writes)
    assert [c.seq for c in cards_of(line.events)] == [0]
    assert emulator.receive(acknowledgement(5)) == []  # names no kept frame: releases nothing
    line.take(emulator.receive(acknowledgement(0)))  # the next goes at once
    assert [c.seq for c in cards_of(line.events)] == [0, 1]
    assert emulator.receive(acknowledgement(2)) == []  # cumulative: 1 and 2 released, none left
    assert emulator.unacknowledged == 0
    assert emulator.stats.acknowledged_seq == 2


def test_an_unacknowledged_frame_goes_again_the_same_and_each_time_later() -> None:
    emulator = ShoeEmulator(EmulatorSettings(script="2C 3C"), 1)
    assert emulator.resend_after() is None  # nothing in flight
    dealing = emulator.deal()
    assert dealing is not None
    waits = []
    for _ in range(6):
        waits.append(emulator.resend_after())
        assert wire(emulator.resend()) == wire(dealing.writes)  # byte for byte, SEQ included
    assert waits == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert emulator.stats.resends == 6
    emulator.receive(acknowledgement(0))
    assert emulator.resend_after() is None


def test_a_status_request_is_answered_with_who_and_then_the_oldest_kept_frame() -> None:
    line = Line(script="2C 3C", acknowledging=False)
    for _ in range(2):
        line.emulator.deal()  # sent to nobody: no host is listening
    request = reference.encode_host_frame(StatusRequest(), seq=0)
    line.take(line.emulator.receive(request))
    identity, card = line.events[-2:]
    assert identity == dataclasses.replace(line.emulator.identity, next_seq=0)
    assert card == CardDrawn("2", "C", seq=0)


def test_a_full_buffer_discards_new_frames_and_the_host_sees_the_gap() -> None:
    line = Line(script="2C 3C 4C 5C 6C 7C", acknowledging=False, kept_frames=3)
    dealt = [d.dealt for d in (line.emulator.deal() for _ in range(5)) if d is not None]
    assert [(d.kept, d.discarded, d.delivered) for d in dealt] == [(True, False, True)] * 3 + [
        (False, True, False)
    ] * 2
    assert line.emulator.stats.discarded == 2
    line.acknowledging = True  # the host comes back: the kept frames, then the silence
    line.take(line.emulator.receive(reference.encode_host_frame(StatusRequest(), seq=0)))
    line.take(line.emulator.heartbeat())
    assert [c.code for c in cards_of(line.events) if isinstance(c, CardDrawn)] == [
        "2C",
        "3C",
        "4C",
    ]
    assert line.events[-2:] == [SequenceGap(expected=3, got=5), Heartbeat(next_seq=5)]
    line.deal()  # 7C: numbered 5, taken as the next
    assert cards_of(line.events)[-1] == CardDrawn("7", "C", seq=5)


def test_kept_frames_release_up_to_the_acknowledged_one() -> None:
    kept = KeptFrames(capacity=3)
    assert kept.next_seq(0) == 0
    assert [kept.keep(seq, bytes([seq])) for seq in (7, 8, 9, 10)] == [True, True, True, False]
    assert kept.next_seq(11) == 7
    assert kept.acknowledge(6) == 0
    assert kept.acknowledge(8) == 2
    assert kept.oldest == KeptFrame(9, b"\x09")
    assert kept.acknowledge(9) == 1
    assert (len(kept), kept.next_seq(11)) == (0, 11)


# ================================================================ over a real pty


class Host:
    """The host end: pyserial through the project's serial transport, a decoder and a
    receiver, reading all the time as a host does. On the reference protocol it greets the
    shoe when it opens the port and acknowledges every frame it takes (`acknowledging`)."""

    def __init__(self, path: str, protocol: ProtocolName, *, acknowledging: bool = True) -> None:
        self.port = SerialTransport(SerialSettings(path))
        self.protocol = protocol
        self.decoder = DECODERS[protocol]()
        self.receipts = Receipts(self.decoder.sequence)
        self.events = self.receipts.events
        self.acknowledging = acknowledging
        self.lost: LinkLost | None = None  # why the port failed, once it has
        self._changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Self]:
        async with self.port:
            if self.protocol == "reference":
                await self.port.write(reference.encode_host_frame(StatusRequest(), seq=0))
            task = asyncio.create_task(self._read(), name="test host")
            try:
                yield self
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _read(self) -> None:
        while True:
            try:
                data = await self.port.read()
            except LinkLost as lost:
                self.lost = lost
                self._changed.set()
                return
            for event in self.decoder.feed(data):
                seq = self.receipts.take(event)
                if seq is not None and self.acknowledging:
                    await self.port.write(acknowledgement(seq))
            self._changed.set()

    async def until(self, done: Callable[[list[Event]], bool]) -> list[Event]:
        async with asyncio.timeout(5):
            while not done(self.events):
                self._changed.clear()
                await self._changed.wait()
        return self.events

    async def cards(self, count: int) -> list[CardDrawn | CardUnreadable]:
        await self.until(lambda events: len(cards_of(events)) >= count)
        return cards_of(self.events)


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
async def test_a_host_on_the_pty_takes_what_the_shoe_deals(protocol: ProtocolName) -> None:
    async with EmulatedShoe(EmulatorSettings(protocol=protocol, seed=7)) as shoe:
        greeting = DeviceIdentity if protocol == "reference" else CommunicationStarted
        async with Host(shoe.path, protocol).reading() as host:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            # The answer to the open (ENQ) or to the host's greeting (reference) comes before
            # anything dealt after it; a dealer who starts at once may deal before the
            # greeting is answered (the device then resends what it kept, after it).
            await host.until(lambda events: any(isinstance(e, greeting) for e in events))
            dealt = await shoe.deal(20)  # as fast as the host takes them
            assert await host.cards(20) == [d.event for d in dealt]
            await asyncio.wait_for(shoe.wait_taken(), 5)
        assert isinstance(host.events[0], greeting)
        assert host.decoder.counters.bad_checksum == 0
        assert not [e for e in host.events if isinstance(e, SequenceGap)]
        assert shoe.stats.host_opens == 1


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
async def test_split_and_faulty_frames_over_the_pty(protocol: ProtocolName) -> None:
    rates = FaultRates(noise=0.3, split=0.5, repeat=0.1, drop=0.1, bad_checksum=0.1)
    async with EmulatedShoe(EmulatorSettings(protocol=protocol, seed=2, faults=rates)) as shoe:
        async with Host(shoe.path, protocol).reading() as host:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            dealt = await shoe.deal(40)
            delivered = [d.event for d in dealt if d.delivered]
            await host.cards(len(delivered))
        assert cards_of(host.events) == delivered
        stats, counters = shoe.stats, host.decoder.counters
        assert stats.splits > 0
        assert_bad_checksums_counted(
            protocol, counters.bad_checksum, stats.bad_checksums, stats.dropped
        )
        if protocol == "reference":  # all of them, each once, the lost sendings sent again
            assert len(delivered) == 40
            assert stats.resends >= stats.dropped + stats.bad_checksums > 0
        else:
            assert host.receipts.repeats == stats.repeats


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
async def test_unplug_makes_the_host_read_fail_and_replug_brings_a_new_pty_at_the_link(
    tmp_path: Path, protocol: ProtocolName
) -> None:
    link = tmp_path / "shoe0"
    async with EmulatedShoe(EmulatorSettings(protocol=protocol, seed=4, link=link)) as shoe:
        first_pty = shoe.port_path
        assert str(link.readlink()) == first_pty
        host = Host(str(link), protocol)
        async with host.reading():
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await shoe.deal(2)
            await host.cards(2)
            await shoe.unplug()
            await host.until(lambda _: host.lost is not None)  # EIO or end of file, as after
            # a USB unplug
        assert not link.exists()  # like udev removing /dev/serial/by-id/...
        unheard = [await shoe.next_card() for _ in range(2)]
        await shoe.replug()
        assert str(link.readlink()) == shoe.port_path
        again = Host(str(link), protocol)
        again.receipts.receiver = host.receipts.receiver  # the host's memory outlives the link
        async with again.reading():
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await shoe.next_card()
            if protocol == "reference":  # kept, and handed over to the next host, in order
                cards = await again.cards(3)
                assert cards == [d.event for d in unheard if d is not None] + cards[-1:]
            else:  # the family keeps nothing: gone, and no number says so
                await again.cards(1)
                assert all(d is not None and d.lost_unplugged for d in unheard)
        assert not [e for e in again.events if isinstance(e, SequenceGap)]
        assert shoe.stats.unplugs == 1
        assert shoe.stats.cards_lost_unplugged == (0 if protocol == "reference" else 2)
    assert not link.exists()


async def test_the_reference_shoe_answers_a_status_request_and_releases_what_is_acknowledged() -> (
    None
):
    async with EmulatedShoe(EmulatorSettings(seed=1)) as shoe:
        async with Host(shoe.path, "reference", acknowledging=False).reading() as host:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await host.until(lambda events: any(isinstance(e, DeviceIdentity) for e in events))
            await shoe.set_fault("jam")
            await host.until(lambda events: FaultSet("jam", seq=0) in events)
            host.events.clear()
            await host.port.write(reference.encode_host_frame(StatusRequest(), seq=1))
            await host.until(lambda events: len(events) == 1)
            identity = dataclasses.replace(shoe.core.identity, next_seq=0)
            assert host.events == [identity]  # the fault again is a repeat: not taken twice
            await host.until(lambda _: host.receipts.repeats >= 1)
            await host.port.write(acknowledgement(0))
            async with asyncio.timeout(5):
                while shoe.stats.acknowledged_seq != 0:  # noqa: ASYNC110 - a counter, no event
                    await asyncio.sleep(0.01)
            assert shoe.core.unacknowledged == 0
        assert shoe.received[:2] == [StatusRequest(), StatusRequest()]
        assert shoe.received[-1] == Acknowledge(0)


async def test_the_enq_shoe_locks_on_command_and_then_deals_outside_the_game() -> None:
    async with EmulatedShoe(EmulatorSettings(protocol="enq", script="QH 10S")) as shoe:
        async with Host(shoe.path, "enq").reading() as host:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await host.port.write(enq.encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)))
            await host.until(
                lambda events: any(isinstance(e, LockChanged) and e.locked for e in events)
            )
            await shoe.next_card()
            (card,) = await host.cards(1)
        assert CommandAccepted() in host.events
        assert isinstance(card, CardDrawn)
        assert card.origin == "outside_game"
        assert shoe.received == [VendorCommand("LK", "02")]


async def test_heartbeats_fill_the_silence_and_pace_spaces_the_cards() -> None:
    settings = EmulatorSettings(seed=1, heartbeat_interval=0.05, pace=40)
    async with EmulatedShoe(settings) as shoe, Host(shoe.path, "reference").reading() as host:
        await asyncio.wait_for(shoe.wait_for_host(), 5)
        await host.until(lambda events: any(isinstance(e, Heartbeat) for e in events))
        loop = asyncio.get_running_loop()
        started = loop.time()
        await shoe.deal(5)
        assert loop.time() - started >= 4 / 40 * 0.9
        await host.cards(5)


async def test_a_link_that_is_not_a_symlink_is_never_replaced(tmp_path: Path) -> None:
    precious = tmp_path / "ttyUSB0"
    precious.write_text("not ours")
    with pytest.raises(EmulatorError, match="not a symlink"):
        async with EmulatedShoe(EmulatorSettings(link=precious)):
            pass
    assert precious.read_text() == "not ours"


def test_settings_are_checked_when_built() -> None:
    with pytest.raises(EmulatorError, match="protocol"):
        EmulatorSettings(protocol="acme")  # type: ignore[arg-type]
    with pytest.raises(EmulatorError, match="pace"):
        EmulatorSettings(pace=0)
    with pytest.raises(EmulatorError, match="copies"):
        EmulatorSettings(copies=0)
    assert dataclasses.replace(EmulatorSettings(), decks=2).decks == 2


def test_forcing_an_unknown_fault_is_refused() -> None:
    fault: FaultName = "smoke"  # type: ignore[assignment]
    with pytest.raises(EmulatorError, match="not a fault"):
        ShoeEmulator(EmulatorSettings(), 1).force(fault)
