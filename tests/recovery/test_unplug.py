"""Unplug the shoe mid-round (socat killed) and plug it back (socat restarted).

The daemon reads one end of a socat-linked pty pair, as it reads a USB-serial adapter; the
test is the shoe on the other end and writes reference-protocol frames with the codec's own
encoder. Killing socat makes the daemon's end read EIO and both links vanish, as udev
removes an unplugged adapter's name; restarting it with the same links is the replug. One
frame is lost while the cable is out (its sequence number is skipped).

The driver must come back by itself, and the round that spans the outage must be flagged:
`reader_disconnected`, then `reader_reconnected` and `sequence_gap` notices, the round
snapshot's `review` naming both, and every settlement decided after it `"review": true`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing import TABLE_ID, SocatPair, recovery_run, verify
from drivers.codecs.reference import encode_device_frame
from drivers.events import CardDrawn, NewShoe, Rank, Suit
from rules.events import PlaceWager, PlayerAction
from rules.games import Action, WagerKind

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from daemon.testing import Mosquitto, Received


class Cable(SocatPair):
    """The shoe's cable: the daemon opens `host_path`, the test writes frames to the other end."""

    seq = 0

    def send(self, message: Any) -> None:
        """One frame, with the shoe's next sequence number."""
        self.seq += 1
        if isinstance(message, CardDrawn):
            message = CardDrawn(message.rank, message.suit, self.seq, burned=message.burned)
            self.write(encode_device_frame(message))
        else:
            self.write(encode_device_frame(message, seq=self.seq))


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
async def test_an_unplugged_shoe_is_read_again_and_its_round_flagged(
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
        await dealer.resync()
        await deal(NewShoe(), card("4C", burned=True))
        await dealer.step(PlaceWager(1, WagerKind.BLACKJACK, 2500))
        await dealer.step(PlaceWager(1, WagerKind.TWENTY_POINT_BONUS, 500))
        await deal(card("10H"))  # seat 1
        await deal(card("9S"))  # the dealer's upcard
        mark = collector.mark()
        await shoe.stop()  # the cable is pulled out
        await collector.wait(_notice("reader_disconnected"), after=mark)
        shoe.seq += 1  # a card dealt while the cable was out: never seen
        await shoe.start()  # and plugged back in
        await collector.wait(_notice("reader_reconnected"), after=mark)
        await deal(card("QH"))  # seat 1: 20 with the 9 up; the gap is seen first
        await deal(card("7C"))  # the hole card
        await dealer.step(PlayerAction(Action.STAND, 1, 1))
        await deal(card("5D"))  # the dealer: 9 + 7 + 5
        assert await run.finish() == 0, run.daemon.tail()
    gap = collector.on(TABLE_ID, "notice/sequence_gap")
    assert len(gap) == 1
    snapshots = [m.body for m in collector.on(TABLE_ID, "round")]
    last = max(snapshots, key=lambda body: body["seq"])
    assert last["review"] == ["reader_reconnected", "sequence_gap"]
    assert last["round"]["stage"] == "over"
    settlements = [m.body for m in collector.on(TABLE_ID, "settlement")]
    assert settlements
    assert all(s["review"] is True for s in settlements), settlements
    verdict = verify(collector.messages, run.replay())
    assert verdict.ok, verdict.explain()
