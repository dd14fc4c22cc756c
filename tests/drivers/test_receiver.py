"""The receiver's judgement (docs/protocol.md §1.4): new, a repeat, or after a loss, against
what the receiver holds; the same for the daemon's journal and for `listen`'s terminal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import enq, reference
from drivers.events import (
    CardDrawn,
    CutCardReached,
    DeviceIdentity,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    SequenceGap,
)
from drivers.receiver import FrameReceiver, Intake
from tests.drivers.helpers import PROPERTY_SETTINGS

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
    receiver = holding(4)
    for repeat in (NewShoe(seq=4), CutCardReached(seq=4), FaultSet("jam", seq=4)):
        assert receiver.judge(repeat) == Intake(take=False, acknowledge=4)


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
