"""The receiver's judgement (docs/protocol.md §1.4): new, a repeat, or after a loss, against
what the receiver holds; the same for the daemon's journal and for `listen`'s terminal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import enq, reference
from drivers.events import (
    CardDrawn,
    CommunicationStarted,
    CutCardReached,
    DeviceIdentity,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    SequenceConflict,
    SequenceGap,
)
from drivers.receiver import FrameReceiver, Intake, ReceiverCounters, ReceiverStateError
from tests.drivers.helpers import PROPERTY_SETTINGS, Receipts, enq_device_messages, with_seq

if TYPE_CHECKING:
    from drivers.events import Event

SHOE = DeviceIdentity("Acme", "Shoe-1", "SN0001", "1.2.3", power_up=7)


def card(seq: int) -> CardDrawn:
    return CardDrawn("7", "D", seq=seq)


def identity(next_seq: int, power_up: int = 7, serial: str = "SN0001") -> DeviceIdentity:
    return DeviceIdentity("Acme", "Shoe-1", serial, "1.2.3", power_up=power_up, next_seq=next_seq)


def holding(last: int, policy: object = reference.SEQUENCE) -> FrameReceiver:
    receiver = FrameReceiver(policy)  # type: ignore[arg-type]
    receiver.record(identity(last + 1 if last < 65535 else 0))
    receiver.record(card(last))
    return receiver


@pytest.mark.parametrize(
    ("last", "seq", "intake"),
    [
        (4, 5, Intake(take=True, acknowledge=5)),
        (65535, 0, Intake(take=True, acknowledge=0)),
        (4, 4, Intake(take=False, acknowledge=4)),  # a repeat: acknowledged again, not taken
        (4, 7, Intake(take=True, gap=SequenceGap(expected=5, got=7), acknowledge=7)),
        (65534, 1, Intake(take=True, gap=SequenceGap(expected=65535, got=1), acknowledge=1)),
        (10, 3, Intake(take=True, gap=SequenceGap(expected=11, got=3), acknowledge=3)),
    ],
)
def test_a_numbered_frame_is_judged_against_the_last_one_held(
    last: int, seq: int, intake: Intake
) -> None:
    assert holding(last).judge(card(seq)) == intake


def test_every_numbered_message_is_judged_not_only_cards() -> None:
    for message in (NewShoe(seq=4), CutCardReached(seq=4), FaultSet("jam", seq=4)):
        receiver = holding(3)
        receiver.record(message)
        assert receiver.judge(message) == Intake(take=False, acknowledge=4)
        assert receiver.judge(card(4)) == Intake(
            take=True, conflict=SequenceConflict(4), acknowledge=4
        )


def test_judging_changes_nothing_recording_does() -> None:
    receiver = holding(4)
    receiver.judge(card(9))
    assert receiver.last == 4
    receiver.record(card(5))
    assert receiver.judge(card(5)) == Intake(take=False, acknowledge=5)


@pytest.mark.parametrize(
    ("next_seq", "gap"),
    [(4, None), (5, None), (9, SequenceGap(expected=5, got=9)), (2, SequenceGap(5, 2))],
)
def test_a_status_message_shows_a_loss_by_the_frame_it_says_comes_next(
    next_seq: int, gap: SequenceGap | None
) -> None:
    """`next_seq` = `last`: the device still keeps it (its acknowledgement is on its way)."""
    receiver = holding(4)
    assert receiver.judge(Heartbeat(next_seq=next_seq)) == Intake(take=True, gap=gap)
    assert receiver.judge(identity(next_seq)) == Intake(take=True, gap=gap)


def test_after_a_gap_the_frame_it_named_is_the_next() -> None:
    receiver = holding(4)
    intake = receiver.judge(Heartbeat(next_seq=9))
    assert intake.gap is not None
    receiver.record(intake.gap)
    assert receiver.judge(card(9)) == Intake(take=True, acknowledge=9)


def test_a_first_contact_expects_everything_since_the_power_up() -> None:
    receiver = FrameReceiver(reference.SEQUENCE)
    assert receiver.judge(identity(0)) == Intake(take=True)
    assert receiver.judge(identity(3)) == Intake(take=True, gap=SequenceGap(expected=0, got=3))
    assert not receiver.record(identity(3))
    assert receiver.judge(card(3)) == Intake(take=True, acknowledge=3)


@pytest.mark.parametrize(
    "other", [identity(0, power_up=8), identity(0, serial="SN0002")], ids=["restarted", "another"]
)
def test_another_power_up_or_device_is_a_restart_and_its_count_starts_over(
    other: DeviceIdentity,
) -> None:
    receiver = holding(400)
    assert receiver.judge(other) == Intake(take=True)  # no gap: its numbers are new
    assert receiver.record(other)  # the table hears of it as a restart
    assert receiver.judge(card(0)) == Intake(take=True, acknowledge=0)
    assert receiver.device == DeviceIdentity(
        other.vendor, other.model, other.serial_number, other.firmware, other.power_up
    )


def test_the_same_device_going_on_is_no_restart_and_keeps_its_place() -> None:
    receiver = holding(400)
    assert not receiver.record(identity(400))  # still keeps 400: it comes again
    assert receiver.judge(card(400)) == Intake(take=False, acknowledge=400)


def test_an_enq_shoe_jumps_freely_and_only_a_repeated_number_is_a_repeat() -> None:
    receiver = FrameReceiver(enq.SEQUENCE)
    receiver.record(card(0x31))
    assert receiver.judge(card(0x45)) == Intake(take=True, acknowledge=0x45)
    assert receiver.judge(card(0x31)) == Intake(take=False, acknowledge=0x31)
    assert not receiver.reliable
    assert FrameReceiver(reference.SEQUENCE).reliable


def test_without_a_policy_nothing_is_judged() -> None:
    receiver = FrameReceiver(None)
    assert receiver.judge(card(1)) == receiver.judge(card(1)) == Intake(take=True)
    assert not receiver.record(identity(3))
    assert receiver.judge(LockChanged(locked=True)) == Intake(take=True)


@PROPERTY_SETTINGS
@given(
    start=st.integers(0, 65535),
    deliveries=st.lists(st.integers(0, 3), min_size=1, max_size=40),
)
def test_a_stream_of_resends_is_taken_exactly_once_in_order(
    start: int, deliveries: list[int]
) -> None:
    """The oracle is the device's own numbering: each frame sent 1 to 4 times (resends),
    the receiver takes each once, in order, and never sees a gap."""
    receiver = FrameReceiver(reference.SEQUENCE)
    receiver.record(identity(start))
    taken: list[int] = []
    for offset, extra in enumerate(deliveries):
        seq = (start + offset) % 65536
        for _ in range(1 + extra):
            intake = receiver.judge(card(seq))
            assert intake.gap is None
            assert intake.acknowledge == seq
            if intake.take:
                receiver.record(card(seq))
                taken.append(seq)
    assert taken == [(start + i) % 65536 for i in range(len(deliveries))]


# ================================================================ by number and content


def enq_taken(frames: list[bytes]) -> tuple[list[Event], FrameReceiver]:
    """What a host takes of these ENQ frames: decoded, then judged, as `listen` and the
    daemon do (a conflict before the frame it is about)."""
    receipts = Receipts(enq.SEQUENCE)
    for event in enq.DeviceFrameDecoder().feed(b"".join(frames)):
        receipts.take(event)
    return receipts.events, receipts.receiver


def enq_card(seq: int, code: str, *, burned: bool = False) -> CardDrawn:
    rank, suit = code[:-1], code[-1]
    return CardDrawn(rank, suit, seq=seq, burned=burned)  # type: ignore[arg-type]


def frames_of(*messages: enq.DeviceMessage) -> list[bytes]:
    return [enq.encode_device_frame(m) for m in messages]


def test_a_card_after_a_lock_frame_with_the_number_before_it_is_taken() -> None:
    """Measured: `D 5C` seq 31, `L` seq 32, `D KH` seq 31: KH was dropped as a repeat."""
    sent: list[enq.DeviceMessage] = [
        enq_card(0x31, "5C"),
        LockChanged(locked=True, seq=0x32),
        enq_card(0x31, "KH"),
    ]
    events, receiver = enq_taken(frames_of(*sent))
    assert events == sent
    assert receiver.counters == ReceiverCounters(repeats=0, conflicts=0)


def test_two_cards_with_one_number_are_both_taken_the_second_after_a_conflict() -> None:
    """Measured: `5C` and `KH` both with seq 31: KH was dropped as a repeat."""
    events, receiver = enq_taken(frames_of(enq_card(0x31, "5C"), enq_card(0x31, "KH")))
    assert events == [enq_card(0x31, "5C"), SequenceConflict(0x31), enq_card(0x31, "KH")]
    assert receiver.counters == ReceiverCounters(repeats=0, conflicts=1)


def test_after_a_restart_of_the_count_the_first_card_is_taken() -> None:
    """Measured: a burn at seq 31, an `S` (the shoe restarted its count, seq 30), the first
    card at seq 31: the card was dropped as a repeat of the burn."""
    sent: list[enq.DeviceMessage] = [
        CommunicationStarted(seq=0x30),
        enq_card(0x31, "9H", burned=True),
        CommunicationStarted(seq=0x30),
        enq_card(0x31, "10C"),
    ]
    events, receiver = enq_taken(frames_of(*sent))
    assert events == sent
    assert receiver.counters.conflicts == 0


@pytest.mark.parametrize(
    "pair",
    [
        (enq_card(0x30, "5C"), CommunicationStarted(seq=0x30)),
        (CommunicationStarted(seq=0x30), enq_card(0x30, "5C")),
    ],
    ids=["S-reusing-a-number", "first-of-the-new-count"],
)
def test_an_s_frame_starts_a_count_and_never_conflicts(pair: tuple[Any, Any]) -> None:
    events, receiver = enq_taken(frames_of(*pair))
    assert events == list(pair)
    assert receiver.counters.conflicts == 0


def test_an_s_frame_sent_three_times_is_one_start() -> None:
    events, receiver = enq_taken(frames_of(CommunicationStarted(seq=0x30)) * 3)
    assert events == [CommunicationStarted(seq=0x30)]
    assert receiver.counters.repeats == 2


def test_a_reliable_shoe_reusing_a_number_for_other_content_is_a_conflict_too() -> None:
    receiver = holding(4)
    assert receiver.judge(card(4)) == Intake(take=False, acknowledge=4)
    other = CardDrawn("K", "S", seq=4)
    assert receiver.judge(other) == Intake(take=True, conflict=SequenceConflict(4), acknowledge=4)


def test_a_conflict_recorded_changes_nothing_the_frame_after_it_does() -> None:
    receiver = holding(4)
    before = receiver.state()
    assert not receiver.record(SequenceConflict(4))
    assert receiver.state() == before


def test_a_memory_without_the_content_judges_the_number_alone() -> None:
    """A receiver rebuilt from a memory that kept only `last` (written before the content
    was kept) judges a frame with that number a repeat, as it always did."""
    receiver = FrameReceiver.from_state(enq.SEQUENCE, {"last": 0x31, "held": None, "device": None})
    assert receiver.judge(enq_card(0x31, "KH")) == Intake(take=False, acknowledge=0x31)


# ================================================================ the memory, as data


@st.composite
def enq_event_streams(draw: st.DrawFn) -> list[Event]:
    """ENQ events as a shoe numbers them: mostly counting up, sometimes repeating a number,
    jumping, or copying the frame before."""
    events: list[Event] = []
    seq = draw(st.integers(0, 255))
    for message in draw(st.lists(enq_device_messages, max_size=25)):
        step = draw(st.sampled_from([0, 1, 1, 1, 7]))
        seq = (seq + step) % 256
        event = with_seq(message, seq)
        events.append(event)
        if draw(st.booleans()):
            events.append(event)  # an exact copy
    return events


def judged(receiver: FrameReceiver, events: list[Event]) -> list[Intake]:
    intakes = []
    for event in events:
        intake = receiver.judge(event)
        intakes.append(intake)
        if intake.take:
            receiver.record(event)
    return intakes


@PROPERTY_SETTINGS
@given(before=enq_event_streams(), after=enq_event_streams())
def test_a_receiver_made_again_from_its_state_judges_exactly_as_the_one_it_was(
    before: list[Event], after: list[Event]
) -> None:
    receiver = FrameReceiver(enq.SEQUENCE)
    judged(receiver, before)
    state = json.loads(json.dumps(receiver.state()))  # what a checkpoint stores
    again = FrameReceiver.from_state(enq.SEQUENCE, state)
    assert again.state() == receiver.state()
    assert (again.last, again.held, again.device) == (
        receiver.last,
        receiver.held,
        receiver.device,
    )
    assert judged(again, after) == judged(receiver, after)


@PROPERTY_SETTINGS
@given(start=st.integers(0, 65535), count=st.integers(0, 5), power_up=st.integers(0, 2**32 - 1))
def test_a_reference_receiver_keeps_its_device_across_its_state(
    start: int, count: int, power_up: int
) -> None:
    receiver = FrameReceiver(reference.SEQUENCE)
    receiver.record(identity(start, power_up=power_up))
    judged(receiver, [card((start + i) % 65536) for i in range(count)])
    again = FrameReceiver.from_state(reference.SEQUENCE, json.loads(json.dumps(receiver.state())))
    assert (again.last, again.held, again.device) == (
        receiver.last,
        receiver.held,
        receiver.device,
    )
    assert again.judge(identity(start + count, power_up=power_up)) == receiver.judge(
        identity(start + count, power_up=power_up)
    )


@pytest.mark.parametrize(
    "state",
    [
        {},
        [],
        {"last": "31", "held": None, "device": None},
        {"last": True, "held": None, "device": None},
        {"last": 256, "held": None, "device": None},
        {"last": 1, "held": {"event": "Heartbeat", "next_seq": 1}, "device": None},
        {"last": 1, "held": {"event": "CardDrawn", "rank": "7"}, "device": None},
        {"last": 1, "held": "CardDrawn", "device": None},
        {"last": 1, "held": None, "device": {"event": "CardDrawn", "rank": "7"}},
        {"last": 1, "held": {"event": "VendorMessage", "code": "G", "data": "zz"}, "device": None},
    ],
)
def test_a_state_no_receiver_wrote_is_refused(state: Any) -> None:
    with pytest.raises(ReceiverStateError):
        FrameReceiver.from_state(enq.SEQUENCE, state)
    assert issubclass(ReceiverStateError, ValueError)  # as a damaged checkpoint is caught


# ================================================================ repeats change nothing


@PROPERTY_SETTINGS
@given(messages=st.lists(enq_device_messages, max_size=20), data=st.data())
def test_exact_repeats_inserted_anywhere_change_nothing_a_host_takes(
    messages: list[enq.DeviceMessage], data: st.DataObject
) -> None:
    """The oracle is the same frames without the copies: any ENQ frame sequence, any
    numbers (repeated, jumping, restarting), with each frame sent one to four times, decodes
    and judges to the very events it does sent once."""
    seqs = data.draw(st.lists(st.integers(0, 255), min_size=len(messages), max_size=len(messages)))
    frames = [enq.encode_device_frame(with_seq(m, s)) for m, s in zip(messages, seqs, strict=True)]
    copies = data.draw(st.lists(st.integers(1, 4), min_size=len(frames), max_size=len(frames)))
    repeated = [frame for frame, n in zip(frames, copies, strict=True) for _ in range(n)]
    once, _ = enq_taken(frames)
    taken, receiver = enq_taken(repeated)
    assert taken == once
    assert receiver.counters.repeats >= sum(copies) - len(frames)
