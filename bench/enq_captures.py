"""Make the ENQ example captures: one round of blackjack as an ENQ shoe says it, ten ways.

    uv run python bench/enq_captures.py [--out DIR] [--check]

Writes examples/captures/enq/*.jsonl (docs/captures.md), every frame made by the codec's own
encoder (`drivers.codecs.enq.encode_device_frame`), so they can be made again whenever the
codec's table changes; `--check` writes nothing and fails if a file differs from what it
would write. The table: seven-seat blackjack, burn 1. The true physical deal: burn 9H; seat 1
10C, seat 2 KH, seat 3 KS; dealer upcard 6S; seat 1 7H, seat 2 2D, seat 3 QD; dealer hole
card 9C; everyone stands; the dealer draws 8D (bust). The shoe says `S` when the host opens
the line; SEQ counts from 0x30, one a frame, unless a case says otherwise. Each case is what
one odd shoe could send instead (examples/captures/enq/README.md says what each shows).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from drivers.captures import CaptureHeader, CaptureWriter
from drivers.codecs import enq
from drivers.events import (
    CardDrawn,
    CommunicationStarted,
    FaultCleared,
    FaultSet,
    LockChanged,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from drivers.events import CardOrigin, Rank, Suit

OUT: Final = Path(__file__).parents[1] / "examples" / "captures" / "enq"
HEADER: Final = CaptureHeader(
    protocol="enq",
    # The family's line settings as described (docs/protocol.md §2.1).
    transport={"kind": "serial", "baudrate": 4800, "bytesize": 8, "parity": "N", "stopbits": 1},
    endpoint=None,
    started="2026-12-01T20:00:00.000Z",
    recorder="bench/enq_captures.py: made with the codec's encoder, not recorded from a shoe",
)
BURN: Final = "9H"
# Seats 1-3, the dealer's upcard, seats 1-3, the dealer's hole card, the dealer's draw.
DEAL: Final = ("10C", "KH", "KS", "6S", "7H", "2D", "QD", "9C", "8D")
UPCARD: Final = "6S"
FIRST_SEQ: Final = 0x30
# Seconds: between frames; after the burn, where the console's wagers go; between copies.
FRAME_GAP: Final = 0.1
WAGER_GAP: Final = 0.5
COPY_GAP: Final = 0.02


@dataclass(frozen=True, slots=True)
class Step:
    """One frame of a case, before it is numbered: a card by its code, or an event."""

    card: str | None = None  # "10C"; the burn card is `burned`
    origin: CardOrigin = "dealt"
    burned: bool = False
    event: enq.DeviceMessage | None = None  # any other frame (its seq is given when numbered)
    seq: int | None = None  # this number instead of the next one (then counting on from it)


def card(code: str, origin: CardOrigin = "dealt", *, burned: bool = False) -> Step:
    return Step(card=code, origin=origin, burned=burned)


def true_deal() -> list[Step]:
    """`S`, the burn, then the deal: what a well-behaved shoe says."""
    return [Step(event=CommunicationStarted()), card(BURN, burned=True), *map(card, DEAL)]


def after_upcard(extra: list[Step], *, skip: int = 0) -> list[Step]:
    """The true deal with `extra` after the upcard and the `skip` cards after it left out."""
    steps = true_deal()
    at = next(i for i, step in enumerate(steps) if step.card == UPCARD) + 1
    return [*steps[:at], *extra, *steps[at + skip :]]


def error(code: int) -> list[Step]:
    """`E` with the error mode bit and `code`, then its `e`."""
    return [Step(event=FaultSet("other", code)), Step(event=FaultCleared("other", code))]


def renumbered(steps: list[Step], seqs: dict[int, int]) -> list[Step]:
    """`steps` with step i given number seqs[i]."""
    return [
        dataclasses.replace(step, seq=seqs[i]) if i in seqs else step
        for i, step in enumerate(steps)
    ]


def same_seq_after_lock() -> list[Step]:
    """10C at 0x31, a lock-status frame at 0x32, KH at 0x31 again, on from 0x33."""
    steps = true_deal()
    steps.insert(3, Step(event=LockChanged(locked=False)))  # after 10C, before KH
    return renumbered(steps, {0: 0x2F, 2: 0x31, 3: 0x32, 4: 0x31, 5: 0x33})


def two_cards_one_seq() -> list[Step]:
    """10C and KH both at 0x31."""
    return renumbered(true_deal(), {0: 0x2F, 2: 0x31, 3: 0x31, 4: 0x32})


def restart_after_burn() -> list[Step]:
    """The burn at 0x31, `S` at 0x30 (the shoe restarted its count), the first card at 0x31."""
    steps = true_deal()
    steps.insert(2, Step(event=CommunicationStarted(), seq=FIRST_SEQ))
    return renumbered(steps, {3: FIRST_SEQ + 1})


def restart_mid_round() -> list[Step]:
    """`S` between seat 2's first card and seat 3's, the count starting again at 0x30."""
    steps = true_deal()
    steps.insert(4, Step(event=CommunicationStarted(), seq=FIRST_SEQ))
    return steps


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    steps: Callable[[], list[Step]]
    copies: int = 1  # every frame sent this many times in a row


CASES: Final = (
    Case("clean-round", true_deal),
    Case("exact-repeats", true_deal, copies=3),
    Case("error-can-not-read", lambda: after_upcard(error(1), skip=1)),
    Case("error-reverse-run-at-exit", lambda: after_upcard(error(4))),
    Case("retransmitted-unseen-card", lambda: after_upcard([card("7H", "retransmission")], skip=1)),
    Case("card-outside-game", lambda: after_upcard([card("7H", "outside_game")], skip=1)),
    Case("same-seq-after-lock", same_seq_after_lock),
    Case("two-cards-one-seq", two_cards_one_seq),
    Case("restart-after-burn", restart_after_burn),
    Case("restart-mid-round", restart_mid_round),
)


def frames(steps: list[Step]) -> Iterator[bytes]:
    """Each step's frame, numbered: the next number, or the step's own and on from it."""
    seq = FIRST_SEQ
    for step in steps:
        seq = step.seq if step.seq is not None else seq
        if step.card is not None:
            rank, suit = cast("Rank", step.card[:-1]), cast("Suit", step.card[-1])
            message: enq.DeviceMessage = CardDrawn(
                rank, suit, seq=seq, burned=step.burned, origin=step.origin
            )
        else:
            assert step.event is not None
            message = dataclasses.replace(step.event, seq=seq)  # type: ignore[arg-type]
        yield enq.encode_device_frame(message)
        seq = (seq + 1) % enq.SEQUENCE.modulus


def capture_text(case: Case) -> str:
    """The capture file of `case`: one chunk a frame (each copy its own), timed."""
    out = io.StringIO()
    writer = CaptureWriter(out, HEADER)
    t = 0.0
    for index, frame in enumerate(frames(case.steps())):
        for copy in range(case.copies):
            writer.chunk("rx", frame, t=t + copy * COPY_GAP)
        t += WAGER_GAP if index == 1 else FRAME_GAP  # the burn is the second frame
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"directory (default {OUT})")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; fail if a file differs"
    )
    args = parser.parse_args(argv)
    stale = []
    for case in CASES:
        path = args.out / f"{case.name}.jsonl"
        text = capture_text(case)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {text.count(chr(10)) - 1} chunks")
    for path in stale:
        print(f"{path}: differs from what the codec makes now", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
