"""The login guard on its own clock: what wrong passwords cost, per address and overall,
and that an attack never locks out a screen of the pit that logged in before."""

from __future__ import annotations

import pytest

from daemon.web.login_guard import (
    FIRST_WAIT,
    FORGET_AFTER,
    FREE_FAILURES,
    KNOWN_FOR,
    MAX_ADDRESSES,
    MAX_WAIT,
    OVERALL_BURST,
    OVERALL_RATE,
    Failure,
    LoginGuard,
    Wait,
)


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def _guard() -> tuple[LoginGuard, Clock]:
    clock = Clock()
    return LoginGuard(clock=clock), clock


def test_a_few_wrong_passwords_cost_nothing_then_each_doubles_the_wait() -> None:
    guard, clock = _guard()
    for n in range(1, FREE_FAILURES):
        assert guard.wait("10.0.0.7") is None
        assert guard.failed("10.0.0.7") == Failure(n, 0)
    waits = []
    for _ in range(12):
        assert guard.wait("10.0.0.7") is None
        waits.append(guard.failed("10.0.0.7").wait)
        wait = guard.wait("10.0.0.7")
        assert wait == Wait(waits[-1], overall=False, first=True)
        assert guard.wait("10.0.0.7") == Wait(waits[-1], overall=False, first=False)  # told once
        clock.now += waits[-1]
    expected = [min(MAX_WAIT, FIRST_WAIT * 2**k) for k in range(12)]
    assert waits == expected
    assert waits[-1] == MAX_WAIT
    # Another address is not held back by this one's count.
    assert guard.wait("10.0.0.8") is None


def test_a_right_password_or_an_hour_without_a_wrong_one_ends_the_count() -> None:
    guard, clock = _guard()
    for _ in range(FREE_FAILURES):
        guard.failed("10.0.0.7")
    assert guard.wait("10.0.0.7") is not None
    clock.now += FIRST_WAIT
    guard.succeeded("10.0.0.7")
    assert [guard.failed("10.0.0.7").wait for _ in range(FREE_FAILURES - 1)] == [0] * 4
    clock.now += FORGET_AFTER
    assert [guard.failed("10.0.0.7").wait for _ in range(FREE_FAILURES - 1)] == [0] * 4


def test_many_addresses_share_one_overall_limit_that_spares_the_pits_own_screens() -> None:
    guard, clock = _guard()
    guard.succeeded("10.1.0.1")  # a screen of the pit, logged in this morning
    clock.now += KNOWN_FOR / 2
    attackers = (f"192.0.2.{n}" for n in range(1, 255))
    for _ in range(OVERALL_BURST):  # one wrong password each: no address reaches its own limit
        address = next(attackers)
        assert guard.wait(address) is None
        guard.failed(address)
    stranger = next(attackers)
    wait = guard.wait(stranger)
    assert wait == Wait(1 / OVERALL_RATE, overall=True, first=True)
    assert guard.wait(next(attackers)) == Wait(1 / OVERALL_RATE, overall=True, first=False)
    assert guard.wait("10.1.0.1") is None  # the pit's screen logs in as before
    guard.failed("10.1.0.1")  # and its dealer's typo costs the others nothing
    clock.now += 1 / OVERALL_RATE
    assert guard.wait(stranger) is None  # refilled: one more try overall
    guard.failed(stranger)
    assert guard.wait(next(attackers)) is not None
    # A screen that has not logged in for longer than KNOWN_FOR is a stranger again.
    clock.now += KNOWN_FOR
    for n in range(OVERALL_BURST):
        guard.failed(f"198.51.100.{n}")
    assert guard.wait("10.1.0.1") is not None


def test_what_it_remembers_is_bounded() -> None:
    guard, _ = _guard()
    for n in range(MAX_ADDRESSES + 100):
        address = f"2001:db8::{n:x}"
        guard.failed(address)
        guard.succeeded(address)
        guard.failed(address)
    assert guard.remembered() == (MAX_ADDRESSES, MAX_ADDRESSES)


@pytest.mark.parametrize(
    ("seconds", "retry_after"), [(0.0, 1), (0.2, 1), (1.0, 1), (1.01, 2), (299.5, 300)]
)
def test_a_wait_is_told_in_whole_seconds_never_less_than_one(
    seconds: float, retry_after: int
) -> None:
    assert Wait(seconds, overall=False, first=True).retry_after == retry_after
