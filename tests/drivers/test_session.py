"""The host's session, sans-I/O (drivers.session): the greeting due, repeated and answered,
replies to no command counted, acknowledgements as the protocol writes them. The same duties
over real ptys are in test_driver.py and test_noise.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drivers.codecs import enq, reference
from drivers.events import (
    Acknowledge,
    CardDrawn,
    CommandAccepted,
    CommandRejected,
    DeviceIdentity,
    StatusRequest,
    VendorCommand,
)
from drivers.session import GREETING_REPEAT, HostSession

if TYPE_CHECKING:
    from drivers.events import Event

IDENTITY = DeviceIdentity("Acme", "Shoe-1", "SN0001", "1.2.3", power_up=1, next_seq=0)
CARD = CardDrawn(rank="K", suit="H", seq=1)


def test_the_greeting_is_due_at_once_and_again_until_answered() -> None:
    session = HostSession(reference.HostLink())
    assert session.due(0.0) == b""  # no link yet
    session.opened(10.0)
    host = reference.HostFrameDecoder()
    assert host.feed(session.due(10.0)) == [StatusRequest()]
    assert session.due(10.0 + GREETING_REPEAT / 2) == b""
    assert host.feed(session.due(10.0 + GREETING_REPEAT)) == [StatusRequest()]
    assert session.greetings == 2
    assert not session.admits(CARD)  # a frame before the answer is not taken
    assert session.admits(IDENTITY)
    assert session.admits(CARD)
    assert (session.next_at, session.due(99.0)) == (None, b"")
    session.opened(100.0)  # every link is greeted again
    assert (session.answered, session.greetings, session.next_at) == (False, 0, 100.0)


def test_a_host_that_only_listens_greets_no_one_and_takes_everything() -> None:
    session = HostSession(enq.HostLink())
    session.opened(0.0)
    assert (session.due(0.0), session.admits(CARD), session.acknowledgement(1)) == (
        b"",
        True,
        b"",
    )


def test_a_reply_is_taken_only_where_a_command_on_this_link_awaits_one() -> None:
    session = HostSession(enq.HostLink())
    session.opened(0.0)
    replies: list[Event] = [CommandAccepted(), CARD, CommandRejected(code=3)]
    assert session.replies(replies) == [CARD]
    session.sending(enq.encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)))
    assert session.replies(replies) == [CommandAccepted(), CARD]
    session.sending(enq.encode_host_frame(VendorCommand(enq.LOCK, enq.LOCK_ON)))
    session.opened(1.0)  # the answer to a command sent on the lost link never comes
    assert session.replies(replies) == [CARD]
    assert session.unsolicited == 5


def test_acknowledgements_are_the_protocols_numbered_host_frames() -> None:
    session = HostSession(reference.HostLink())
    session.opened(0.0)
    host = reference.HostFrameDecoder()
    assert host.feed(session.due(0.0) + session.acknowledgement(7)) == [
        StatusRequest(),
        Acknowledge(acknowledged_seq=7),
    ]
