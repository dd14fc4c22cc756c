"""The emulated shoe against the real host decoders: sans-I/O, then over real kernel ptys.

The sans-I/O tests feed `ShoeEmulator`'s writes straight into the host's decoder, so each
fault can be checked against the exact counter or event it must produce. The pty tests then
show the same through pyserial and the kernel: the host opens the port as it would open a
USB-serial adapter, and an unplug looks to it like one.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from collections.abc import Callable
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


class Line:
    """A sans-I/O emulator wired to the host's decoder: what the host decodes, card by card."""

    def __init__(
        self, protocol: ProtocolName = "reference", seed: int = 1, **settings: Any
    ) -> None:
        self.emulator = ShoeEmulator(EmulatorSettings(protocol=protocol, **settings), seed)
        self.decoder = DECODERS[protocol]()
        self.events: list[Event] = self.decoder.feed(wire(self.emulator.power_up()))

    def deal(self, count: int = 1) -> list[Event]:
        new: list[Event] = []
        for _ in range(count):
            dealing = self.emulator.deal()
            assert dealing is not None
            new += self.decoder.feed(wire(dealing.writes))
        self.events += new
        return new


def assert_bad_checksums_counted(protocol: ProtocolName, counted: int, flipped: int) -> None:
    if protocol == "reference":
        assert counted == flipped
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
    assert events[0] == NewShoe()
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
    cut = events.index(CutCardReached())
    assert len(cards_of(events[:cut])) == 26  # burn card included: it left the shoe too
    after = cards_of(events[cut:])
    assert len(after) == 4
    if protocol == "reference":  # the ENQ family has no new-shoe frame in public
        assert events[-2] == NewShoe()
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
def test_a_dropped_frame_loses_its_card_and_the_reference_host_sees_the_gap(
    protocol: ProtocolName,
) -> None:
    line = Line(protocol, script="2C 3C 4C")
    line.deal()
    line.emulator.force("drop")
    line.deal(2)
    assert [c.code for c in cards_of(line.events) if isinstance(c, CardDrawn)] == ["2C", "4C"]
    if protocol == "reference":
        assert SequenceGap(expected=2, got=3) in line.events
        assert line.decoder.counters.gaps == 1
    else:  # the family's SEQ is not known to count by one: no gaps reported
        assert line.decoder.counters.gaps == 0


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_a_repeated_frame_is_counted_as_a_duplicate_and_delivered_once(
    protocol: ProtocolName,
) -> None:
    line = Line(protocol, script="2C 3C")
    line.emulator.force("repeat")
    line.deal(2)
    assert len(cards_of(line.events)) == 2
    assert line.decoder.counters.duplicates == 1


def test_enq_copies_are_all_duplicates_but_one() -> None:
    line = Line("enq", script="2C 3C 4C", copies=3)
    line.deal(3)
    assert len(cards_of(line.events)) == 3
    assert line.decoder.counters.duplicates == 2 * 4  # the S frame and three cards


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_a_flipped_checksum_bit_is_counted_as_a_bad_checksum(protocol: ProtocolName) -> None:
    line = Line(protocol, script="2C 3C 4C")
    line.deal()
    line.emulator.force("bad_checksum")
    line.deal(2)
    assert line.decoder.counters.bad_checksum == 1
    assert [c.seq for c in cards_of(line.events)] == [1, 3]
    assert line.decoder.counters.gaps == (1 if protocol == "reference" else 0)


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
    emulator = ShoeEmulator(EmulatorSettings(protocol=protocol, faults=rates), 11)
    decoder = DECODERS[protocol]()
    decoder.feed(wire(emulator.power_up()))
    delivered: list[Event] = []
    received: list[Event] = []
    for _ in range(300):
        dealing = emulator.deal()
        assert dealing is not None
        if dealing.dealt.delivered:
            delivered.append(dealing.dealt.event)
        received += decoder.feed(wire(dealing.writes))
    stats, counters = emulator.stats, decoder.counters
    assert cards_of(received) == delivered
    assert stats.bad_checksums > 0
    assert_bad_checksums_counted(protocol, counters.bad_checksum, stats.bad_checksums)
    assert counters.duplicates == stats.repeats > 0
    assert stats.dropped > 0
    assert stats.splits > 0
    assert len([c for c in delivered if isinstance(c, CardUnreadable)]) > 0


# ================================================================ over a real pty


class Host:
    """The host end: pyserial through the project's serial transport, and a decoder."""

    def __init__(self, path: str, protocol: ProtocolName) -> None:
        self.port = SerialTransport(SerialSettings(path))
        self.decoder = DECODERS[protocol]()
        self.events: list[Event] = []

    async def until(self, done: Callable[[list[Event]], bool]) -> list[Event]:
        async with asyncio.timeout(5):
            while not done(self.events):
                self.events += self.decoder.feed(await self.port.read())
        return self.events

    async def cards(self, count: int) -> list[CardDrawn | CardUnreadable]:
        await self.until(lambda events: len(cards_of(events)) >= count)
        return cards_of(self.events)


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
async def test_a_host_on_the_pty_decodes_what_the_shoe_deals(protocol: ProtocolName) -> None:
    async with EmulatedShoe(EmulatorSettings(protocol=protocol, seed=7)) as shoe:
        host = Host(shoe.path, protocol)
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            dealt = await shoe.deal(20)
            assert await host.cards(20) == [d.event for d in dealt]
        greeting = DeviceIdentity if protocol == "reference" else CommunicationStarted
        assert isinstance(host.events[0], greeting)  # said on connect, after pyserial's flush
        assert host.decoder.counters.bad_checksum == host.decoder.counters.gaps == 0
        assert shoe.stats.host_opens == 1


@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
async def test_split_and_faulty_frames_over_the_pty(protocol: ProtocolName) -> None:
    rates = FaultRates(noise=0.3, split=0.5, repeat=0.1, drop=0.1, bad_checksum=0.1)
    async with EmulatedShoe(EmulatorSettings(protocol=protocol, seed=2, faults=rates)) as shoe:
        host = Host(shoe.path, protocol)
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            dealt = await shoe.deal(40)
            delivered = [d.event for d in dealt if d.delivered]
            await host.cards(len(delivered))
        assert cards_of(host.events) == delivered
        stats, counters = shoe.stats, host.decoder.counters
        assert stats.splits > 0
        assert_bad_checksums_counted(protocol, counters.bad_checksum, stats.bad_checksums)
        assert counters.duplicates == stats.repeats


async def test_unplug_makes_the_host_read_fail_and_replug_brings_a_new_pty_at_the_link(
    tmp_path: Path,
) -> None:
    link = tmp_path / "shoe0"
    async with EmulatedShoe(EmulatorSettings(seed=4, link=link)) as shoe:
        first_pty = shoe.port_path
        assert str(link.readlink()) == first_pty
        host = Host(str(link), "reference")
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await shoe.deal(2)
            await host.cards(2)
            await shoe.unplug()
            with pytest.raises(LinkLost):  # EIO or end of file, as after a USB unplug
                await host.until(lambda _: False)
        assert not link.exists()  # like udev removing /dev/serial/by-id/...
        lost = await shoe.deal(2)
        assert all(d.lost_unplugged and not d.delivered for d in lost)
        await shoe.replug()
        assert str(link.readlink()) == shoe.port_path
        again = Host(str(link), "reference")
        again.decoder = host.decoder  # the daemon's decoder outlives the link
        async with again.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await shoe.deal(1)
            await again.until(lambda events: any(isinstance(e, SequenceGap) for e in events))
        assert shoe.stats.unplugs == 1
        assert shoe.stats.cards_lost_unplugged == 2
    assert not link.exists()


async def test_the_reference_shoe_answers_a_status_request_and_notes_acknowledgements() -> None:
    async with EmulatedShoe(EmulatorSettings(seed=1)) as shoe:
        host = Host(shoe.path, "reference")
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await shoe.set_fault("jam")
            await host.until(lambda events: FaultSet("jam") in events)
            host.events.clear()
            await host.port.write(reference.encode_host_frame(StatusRequest(), seq=0))
            await host.until(lambda events: Heartbeat() in events)
            assert [type(e) for e in host.events] == [DeviceIdentity, FaultSet, Heartbeat]
            await host.port.write(reference.encode_host_frame(Acknowledge(3), seq=1))
            async with asyncio.timeout(5):
                while shoe.stats.acknowledged_seq != 3:  # noqa: ASYNC110 - a counter, no event
                    await asyncio.sleep(0.01)
        assert shoe.received == [StatusRequest(), Acknowledge(3)]


async def test_the_enq_shoe_locks_on_command_and_then_deals_outside_the_game() -> None:
    async with EmulatedShoe(EmulatorSettings(protocol="enq", script="QH 10S")) as shoe:
        host = Host(shoe.path, "enq")
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await host.port.write(enq.encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)))
            await host.until(lambda events: LockChanged(locked=True) in events)
            await shoe.next_card()
            (card,) = await host.cards(1)
        assert CommandAccepted() in host.events
        assert isinstance(card, CardDrawn)
        assert card.origin == "outside_game"
        assert shoe.received == [VendorCommand("LK", "02")]


async def test_heartbeats_fill_the_silence_and_pace_spaces_the_cards() -> None:
    settings = EmulatorSettings(seed=1, heartbeat_interval=0.05, pace=40)
    async with EmulatedShoe(settings) as shoe:
        host = Host(shoe.path, "reference")
        async with host.port:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            await host.until(lambda events: Heartbeat() in events)
            loop = asyncio.get_running_loop()
            started = loop.time()
            await shoe.deal(5)
            assert loop.time() - started >= 4 / 40 * 0.9


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
