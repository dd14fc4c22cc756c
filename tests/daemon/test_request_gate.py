"""The request gate and the table's inbox, without a broker: what is refused, what is answered,
what waits, and in which order the table hears it."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.request_gate import (
    ANSWERED_PER_INTERVAL,
    MUTE_MAX_SECONDS,
    MUTE_SECONDS,
    QUEUE_FULL,
    RATE_LIMITED,
    REPORT_INTERVAL,
    TOO_LARGE,
    Admitted,
    Refused,
    RequestGate,
    RequestLimits,
    request_weight,
)
from daemon.table.inbox import TableInbox
from daemon.wire.requests import MAX_REQUEST_BYTES

STATUS = b'{"transaction": "t-1"}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _gate(limits: RequestLimits | None = None) -> tuple[RequestGate, Clock]:
    clock = Clock()
    return RequestGate(limits or RequestLimits(), ["bj-1", "bj-2"], clock=clock), clock


def test_a_request_within_the_limits_is_admitted() -> None:
    gate, _ = _gate()
    assert gate.judge("bj-1", "status", STATUS, room=True) == Admitted()
    assert gate.take_reports() == []


def test_an_oversized_request_is_refused_unread_and_answered() -> None:
    gate, _ = _gate()
    verdict = gate.judge("bj-1", "status", b"\xff" * (1 << 20), room=True)
    assert verdict == Refused(TOO_LARGE, "a request is at most 4096 bytes", None, answer=True)
    padded = json.dumps({"transaction": 7, "x": "y" * (MAX_REQUEST_BYTES - 40)}).encode()
    assert len(padded) <= MAX_REQUEST_BYTES
    assert gate.judge("bj-1", "status", padded, room=True) == Admitted()


def test_the_rate_is_a_burst_then_a_steady_rate_per_table() -> None:
    gate, clock = _gate(RequestLimits(rate=10, burst=5, queue=100))
    verdicts = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(8)]
    assert verdicts[:5] == [Admitted()] * 5
    assert all(isinstance(v, Refused) and v.code == RATE_LIMITED for v in verdicts[5:])
    # Another table has its own bucket.
    assert gate.judge("bj-2", "status", STATUS, room=True) == Admitted()
    clock.now += 0.35  # 3.5 tokens at 10 a second
    admitted = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(5)]
    assert admitted.count(Admitted()) == 3
    clock.now += 60  # a quiet minute fills the bucket to its burst, no more
    admitted = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(10)]
    assert admitted.count(Admitted()) == 5


def test_a_refusal_carries_the_callers_transaction_when_it_can_be_read() -> None:
    gate, _ = _gate(RequestLimits(rate=1, burst=1, queue=1))
    gate.judge("bj-1", "status", STATUS, room=True)
    verdict = gate.judge("bj-1", "status", STATUS, room=True)
    assert isinstance(verdict, Refused)
    assert verdict.transaction == "t-1"


@pytest.mark.parametrize(
    ("command", "payload", "code"),
    [
        ("dance", b"{}", "unknown_command"),
        ("status", b"[1, 2]", "malformed_request"),
        ("status", b"{nope", "malformed_request"),
        ("wager", b'{"transaction": [1]}', "malformed_request"),
        ("status", b"[" * 2000 + b"]" * 2000, "malformed_request"),
    ],
)
def test_a_request_of_the_wrong_shape_is_refused_at_the_gate(
    command: str, payload: bytes, code: str
) -> None:
    gate, _ = _gate()
    verdict = gate.judge("bj-1", command, payload, room=True)
    assert isinstance(verdict, Refused)
    assert verdict.code == code


def test_a_full_request_lane_refuses() -> None:
    gate, _ = _gate()
    verdict = gate.judge("bj-1", "status", STATUS, room=False)
    assert isinstance(verdict, Refused)
    assert (verdict.code, verdict.transaction) == (QUEUE_FULL, "t-1")


def test_a_flood_is_answered_a_few_times_then_reported_once_per_interval() -> None:
    gate, clock = _gate(RequestLimits(rate=1, burst=1, queue=10))
    gate.judge("bj-1", "status", STATUS, room=True)  # the one token
    verdicts = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(5000)]
    answered = [v for v in verdicts if isinstance(v, Refused) and v.answer]
    assert len(answered) == ANSWERED_PER_INTERVAL
    assert verdicts[:ANSWERED_PER_INTERVAL] == answered  # the first ones, not random ones
    big = [gate.judge("bj-1", "status", b" " * 5000, room=True) for _ in range(3)]
    assert not any(isinstance(v, Refused) and v.answer for v in big)
    clock.now += 5
    (report,) = gate.take_reports()
    assert report.table == "bj-1"
    assert report.unanswered == {RATE_LIMITED: 5000 - ANSWERED_PER_INTERVAL, TOO_LARGE: 3}
    assert report.seconds == pytest.approx(5)
    assert "4,993 requests refused in the last 5 s" in report.message()
    # A new interval: the table answers again, and reports nothing it has not refused.
    assert gate.take_reports() == []
    verdict = gate.judge("bj-1", "status", b" " * 5000, room=True)
    assert isinstance(verdict, Refused)
    assert verdict.answer


# ---------------------------------------------------------------- the inbox
async def test_everything_is_served_in_arrival_order_with_requests_bounded() -> None:
    """A request that arrived before a card is applied before it: a new shoe or a void asked
    for before a card must come first, as at the table (daemon.table.inbox)."""
    inbox: TableInbox[str] = TableInbox(request_capacity=3)
    assert inbox.offer("r1")
    assert inbox.offer("r2")
    await inbox.put("card-1")
    inbox.put_nowait("card-2")
    assert inbox.offer("r3")
    assert not inbox.offer("r4")  # full: refused, not queued
    for card in range(10):
        await inbox.put(f"late-{card}")  # the shoe's lane has room: requests do not take it
    room = [inbox.has_request_room]
    taken = [await inbox.get() for _ in range(5)]
    assert taken == ["r1", "r2", "card-1", "card-2", "r3"]
    assert [inbox.get_nowait() for _ in range(10)] == [f"late-{card}" for card in range(10)]
    room.append(inbox.has_request_room)
    assert room == [False, True]
    with pytest.raises(asyncio.QueueEmpty):
        inbox.get_nowait()


async def test_a_request_that_only_reads_waits_behind_everything_else() -> None:
    """`status` changes nothing at the table: a flood of polls never holds a card back."""
    inbox: TableInbox[str] = TableInbox(request_capacity=3)
    assert inbox.offer("status-1", reads_only=True)
    assert inbox.offer("wager")
    inbox.put_nowait("card")
    assert inbox.offer("status-2", reads_only=True)
    assert not inbox.offer("status-3", reads_only=True)  # reads take room like any request
    assert [await inbox.get() for _ in range(4)] == ["wager", "card", "status-1", "status-2"]


async def test_requests_that_queued_together_are_taken_together() -> None:
    inbox: TableInbox[str] = TableInbox(request_capacity=10)
    for name in ("w1", "w2"):
        assert inbox.offer(name)
    inbox.put_nowait("card")
    assert inbox.offer("w3")
    assert inbox.offer("status", reads_only=True)
    assert inbox.get_requests_nowait(10) == ["w1", "w2"]  # up to the card, not past it
    assert inbox.get_nowait() == "card"
    assert inbox.get_requests_nowait(10) == ["w3", "status"]


async def test_a_waiting_consumer_wakes_for_either_lane() -> None:
    inbox: TableInbox[str] = TableInbox(request_capacity=1)
    waiting = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    assert inbox.offer("r1")
    assert await asyncio.wait_for(waiting, 1) == "r1"
    waiting = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    inbox.put_nowait("card")
    assert await asyncio.wait_for(waiting, 1) == "card"


async def test_the_shoe_waits_for_room_and_the_daemon_never_does() -> None:
    """At `shoe_capacity` of the shoe's items, `put` waits until the table takes one (the
    driver reads no more meanwhile) and `try_put` refuses; the daemon's own items and the
    requests have room of their own."""
    inbox: TableInbox[str] = TableInbox(request_capacity=2, shoe_capacity=2)
    await inbox.put("card-1")
    assert inbox.try_put("card-2")
    assert not inbox.has_shoe_room
    assert not inbox.try_put("card-3")  # refused, not queued
    putting = asyncio.create_task(inbox.put("card-3"))
    await asyncio.sleep(0.01)
    assert not putting.done()
    inbox.put_nowait("timer")  # the consumer's own: never waits
    assert inbox.offer("request")
    assert inbox.get_nowait() == "card-1"  # room: the shoe's item goes in, after the rest
    await asyncio.wait_for(putting, 1)
    taken = [inbox.get_nowait() for _ in range(len(inbox))]
    assert taken == ["card-2", "timer", "request", "card-3"]


async def test_a_driver_waiting_for_room_is_cancelled_cleanly() -> None:
    inbox: TableInbox[str] = TableInbox(request_capacity=1, shoe_capacity=1)
    await inbox.put("card-1")
    putting = asyncio.create_task(inbox.put("card-2"))
    await asyncio.sleep(0)
    putting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await putting
    assert inbox.get_nowait() == "card-1"
    assert inbox.try_put("card-3")
    assert len(inbox) == 1


@given(st.lists(st.sampled_from(["card", "daemon", "request", "get"]), max_size=80))
def test_any_mix_is_served_in_arrival_order_each_kind_bounded(steps: list[str]) -> None:
    capacity = 4
    inbox: TableInbox[tuple[str, int]] = TableInbox(request_capacity=capacity, shoe_capacity=3)
    waiting: list[tuple[str, int]] = []  # the oracle: one plain list
    for number, step in enumerate(steps):
        if step == "daemon":
            inbox.put_nowait(("daemon", number))
            waiting.append(("daemon", number))
        elif step == "card":
            accepted = inbox.try_put(("card", number))
            assert accepted == (sum(kind == "card" for kind, _ in waiting) < 3)
            if accepted:
                waiting.append(("card", number))
        elif step == "request":
            accepted = inbox.offer(("request", number))
            assert accepted == (sum(kind == "request" for kind, _ in waiting) < capacity)
            if accepted:
                waiting.append(("request", number))
        elif waiting:
            assert inbox.get_nowait() == waiting.pop(0)
    assert len(inbox) == len(waiting)


def test_a_flood_mutes_its_table_longer_each_time_it_comes_straight_back() -> None:
    limits = RequestLimits(rate=1, burst=10, queue=10)
    gate, clock = _gate(limits)

    def flood(requests: int) -> list[float]:
        verdicts = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(requests)]
        return [v.mute_for for v in verdicts if isinstance(v, Refused) and v.mute_for]

    # The burst, then the threshold's worth of refusals: one mute, at the threshold.
    assert flood(limits.burst + limits.flood_threshold - 1) == []
    assert flood(1) == [MUTE_SECONDS]
    # What was on its way when the mute began is refused, and mutes nothing more.
    assert flood(10 * limits.flood_threshold) == []
    clock.now += MUTE_SECONDS + 1  # the mute ends and the flood is still there
    assert flood(limits.burst + 2 * limits.flood_threshold) == [2 * MUTE_SECONDS]
    clock.now += 2 * MUTE_SECONDS
    assert flood(limits.burst + 2 * limits.flood_threshold) == [4 * MUTE_SECONDS]
    mutes = [4 * MUTE_SECONDS]
    for _ in range(10):
        clock.now += mutes[-1]
        mutes += flood(limits.burst + 2 * limits.flood_threshold)
    assert mutes[-3:] == [MUTE_MAX_SECONDS] * 3  # doubled up to the longest, and no further
    assert mutes == sorted(mutes)
    # A flood long after the last one starts again from the first mute's length.
    clock.now += MUTE_MAX_SECONDS + REPORT_INTERVAL * 10
    assert flood(limits.burst + 2 * limits.flood_threshold) == [MUTE_SECONDS]
    # A console that merely hurries (twice the rate) is refused, never muted.
    other = [gate.judge("bj-2", "status", STATUS, room=True) for _ in range(limits.burst)]
    assert other == [Admitted()] * limits.burst
    for step in range(100):
        clock.now += 0.5
        if step % 10 == 0:  # the daemon's reports, every interval
            gate.take_reports()
        verdict = gate.judge("bj-2", "status", STATUS, room=True)
        assert not (isinstance(verdict, Refused) and verdict.mute_for)


def test_oversized_requests_count_towards_a_mute_by_their_bytes() -> None:
    """Refused before the rate is asked, they take no token; what counts is what their bytes
    would make in requests of the largest size admitted (daemon.request_gate)."""
    limits = RequestLimits()
    assert [request_weight(b"x" * size) for size in (2, 4096, 4100, 11_000, 1 << 20)] == [
        1, 1, 2, 3, 256,
    ]  # fmt: skip
    for size, weight in ((4_100, 2), (11_000, 3)):
        gate, clock = _gate(limits)
        needed = -(-limits.flood_threshold // weight)
        verdicts = [gate.judge("bj-1", "status", b"x" * size, room=True) for _ in range(needed)]
        mutes = [v.mute_for for v in verdicts if isinstance(v, Refused) and v.mute_for]
        assert mutes == [MUTE_SECONDS]
        assert isinstance(verdicts[-1], Refused)
        assert verdicts[-1].mute_for == MUTE_SECONDS  # the one that reached the threshold
        assert {v.code for v in verdicts if isinstance(v, Refused)} == {TOO_LARGE}
        # The rate was never asked: the other table, and this one's own bucket, are full.
        clock.now += MUTE_SECONDS + REPORT_INTERVAL * 2
        gate.take_reports()
        admitted = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(limits.burst)]
        assert admitted == [Admitted()] * limits.burst


def test_refusals_of_shape_and_of_a_full_queue_never_mute() -> None:
    """A malformed request took a token (a flood of them is over the rate soon enough), and a
    full queue says the table is slow, not that its console floods it."""
    limits = RequestLimits(rate=100, burst=100, queue=1)
    gate, clock = _gate(limits)
    for _ in range(3 * limits.flood_threshold):
        clock.now += 2 / limits.rate  # a token for each: within the rate
        for verdict in (
            gate.judge("bj-1", "status", b"[not an object]", room=True),
            gate.judge("bj-1", "status", STATUS, room=False),
        ):
            assert isinstance(verdict, Refused)
            assert verdict.mute_for is None


def test_new_limits_apply_from_the_next_request() -> None:
    """A reload's `[requests]`: the bucket takes the new rate and size at once, keeping no more
    tokens than the new size holds."""
    gate, clock = _gate(RequestLimits(rate=20, burst=50, queue=50))
    gate.retune(RequestLimits(rate=1, burst=2, queue=50))
    verdicts = [gate.judge("bj-1", "status", STATUS, room=True) for _ in range(3)]
    assert verdicts[:2] == [Admitted()] * 2
    assert isinstance(verdicts[2], Refused)
    assert verdicts[2].code == RATE_LIMITED
    assert "more than 1 requests a second" in verdicts[2].message
    clock.now += 1.0
    assert gate.judge("bj-1", "status", STATUS, room=True) == Admitted()
    assert gate.limits.flood_threshold == max(2, round(10 * 1 * REPORT_INTERVAL))
