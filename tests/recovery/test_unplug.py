"""Unplug the shoe mid-round (socat killed) and plug it back (socat restarted), with a shoe
that lost a frame meanwhile.

The daemon reads one end of a socat-linked pty pair, as it reads a USB-serial adapter; the
test is the shoe on the other end and writes reference-protocol frames with the codec's own
encoder. Killing socat makes the daemon's end read EIO and both links vanish, as udev
removes an unplugged adapter's name; restarting it with the same links is the replug.

A reference shoe keeps what it deals while the cable is out (tests/recovery/test_link.py
shows that nothing is lost then). This one lost a frame, as an overflowing buffer would, and
says so the only way a device can: its DEVICE_IDENTITY, answering the daemon's greeting,
names a next frame beyond the one the daemon expects. The driver must come back by itself;
the daemon must see the gap before any later card, hold those cards (never shift them to the
wrong seat), and go on once the dealer console entered the missed card and confirmed; every
settlement after it `"review": true`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing import TABLE_ID, SocatPair, recovery_run, verify
from drivers.codecs.reference import encode_device_frame
from drivers.events import CardDrawn, DeviceIdentity, NewShoe, Rank, Suit
from rules.events import CloseBetting, PlaceWager, PlayerAction
from rules.games import Action, WagerKind

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from daemon.testing import Mosquitto, Received


class Cable(SocatPair):
    """The shoe's cable: the daemon opens `host_path`, the test writes frames to the other end."""

    seq = 0  # the number the shoe's next frame gets

    def send(self, message: Any) -> None:
        """One numbered frame, with the shoe's next sequence number."""
        if isinstance(message, CardDrawn):
            message = CardDrawn(message.rank, message.suit, self.seq, burned=message.burned)
            self.write(encode_device_frame(message))
        else:
            self.write(encode_device_frame(message, seq=self.seq))
        self.seq += 1

    def identify(self) -> None:
        """The answer to the daemon's greeting: who, and which frame comes next."""
        identity = DeviceIdentity("test", "socat shoe", "SOCAT-1", "1", power_up=1)
        self.write(encode_device_frame(identity, seq=self.seq))


def card(text: str, *, burned: bool = False) -> CardDrawn:
    rank: Rank = text[:-1]  # type: ignore[assignment]
    suit: Suit = text[-1]  # type: ignore[assignment]
    return CardDrawn(rank, suit, 0, burned=burned)


def _notice(kind: str) -> Callable[[Received], bool]:
    def match(message: Received) -> bool:
        return message.topic.endswith(f"/notice/{kind}")

    return match


def _link_is(state: str) -> Callable[[Received], bool]:
    topic = f"shoe2mqtt/{TABLE_ID}/state"
    return lambda m: m.topic == topic and m.body["reader"]["link"] == state


@pytest.mark.timeout(60)
async def test_a_frame_lost_while_unplugged_holds_the_round_for_the_dealer(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    rng = random.Random(1)  # noqa: S311 - not a secret; this dealer deals no cards anyway
    async with (
        Cable(tmp_path) as shoe,
        recovery_run(tmp_path, mosquitto, rng, shoe=None, shoe_port=shoe.host_path) as run,
    ):
        collector, dealer = run.collector, run.dealer

        async def deal(*frames: Any) -> None:
            mark = collector.mark()
            for frame in frames:
                shoe.send(frame)
            await collector.wait(lambda m: m.topic.endswith("/round"), after=mark)

        mark = collector.mark()
        await run.daemon.start()
        await collector.wait(lambda m: not m.retain and _link_is("connecting")(m), after=mark)
        await collector.wait(_link_is("connected"), after=mark)  # the port is open: write
        shoe.identify()
        await dealer.resync()
        await deal(NewShoe(), card("4C", burned=True))
        await dealer.step(PlaceWager(1, WagerKind.BLACKJACK, 2500))
        await dealer.step(PlaceWager(1, WagerKind.TWENTY_POINT_BONUS, 500))
        await dealer.step(CloseBetting())
        await deal(card("10H"))  # seat 1
        await deal(card("9S"))  # the dealer's upcard
        mark = collector.mark()
        await shoe.stop()  # the cable is pulled out
        await collector.wait(_notice("reader_disconnected"), after=mark)
        shoe.seq += 1  # QH for seat 1, dealt while the cable was out: this shoe lost it
        await shoe.start()  # and plugged back in
        await collector.wait(_link_is("connected"), after=mark)
        shoe.identify()  # says frame 6 comes next: the daemon expects 5
        await collector.wait(_notice("sequence_gap"), after=mark)
        shoe.send(card("7C"))  # the hole card: held, not given to seat 1
        held = (
            await collector.wait(
                lambda m: m.topic.endswith("/round") and m.body["cards_held"] == 1, after=mark
            )
        ).body
        assert held["doubt"] == "sequence_gap"
        assert held["round"]["seats"][0]["hands"][0]["cards"] == ["10H"]
        await dealer.step_request("card", {"card": "QH"})  # the dealer enters what was missed
        await dealer.step_request("resume", {})  # and confirms: the hole card is dealt
        await dealer.step(PlayerAction(Action.STAND, 1, 1))
        await deal(card("5D"))  # the dealer: 9 + 7 + 5
        assert await run.finish() == 0, run.daemon.tail()
    assert len(collector.on(TABLE_ID, "notice/sequence_gap")) == 1
    assert collector.on(TABLE_ID, "notice/reader_reconnected") == []  # this shoe keeps frames
    last = collector.latest_state(TABLE_ID)
    assert last is not None
    assert last["review"] == ["sequence_gap"]
    assert last["round"]["stage"] == "over"
    assert last["round"]["seats"][0]["hands"][0]["cards"] == ["10H", "QH"]
    settlements = [m.body for m in collector.on(TABLE_ID, "settlement")]
    assert [(s["outcome"], s["review"]) for s in settlements] == [("suited_20", True)]
    verdict = verify(collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
