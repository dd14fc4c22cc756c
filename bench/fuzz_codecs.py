"""Fuzz every shoe codec with random and mutated frames; no exception may escape a decoder.

    uv run python bench/fuzz_codecs.py [--frames N] [--seed S]

For each codec, builds a pool of valid frames from random messages, then streams N frames
through the host-side decoder: most clean, the rest bit-flipped, truncated, duplicated,
prefixed with junk, overwritten or replaced by random bytes, all cut into random chunks of
1 to 512 bytes. Prints one line per codec. Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from dataclasses import asdict
from typing import TYPE_CHECKING

from drivers.codecs import enq, reference
from drivers.events import (
    CARD_ORIGINS,
    FAULT_KINDS,
    RANKS,
    SUITS,
    CardDrawn,
    CardUnreadable,
    CommandAccepted,
    CommandRejected,
    CommunicationStarted,
    CutCardReached,
    DeviceIdentity,
    FaultCleared,
    FaultSet,
    Heartbeat,
    LockChanged,
    NewShoe,
    Standby,
    VendorMessage,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.codecs.base import Decoder

POOL_SIZE = 4096
BATCH_FRAMES = 10_000
MAX_CHUNK = 512
PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))
REFERENCE_EMPTY: list[reference.DeviceMessage] = [NewShoe(), CutCardReached(), Heartbeat()]
ENQ_EMPTY: list[enq.DeviceMessage] = [CommunicationStarted(), Standby(), CutCardReached()]
FAULTS: list[type[FaultSet | FaultCleared]] = [FaultSet, FaultCleared]


def reference_frame(rng: random.Random, seq: int) -> bytes:
    seq %= reference.SEQUENCE.modulus
    pick = rng.random()
    message: reference.DeviceMessage
    if pick < 0.6:
        message = CardDrawn(rng.choice(RANKS), rng.choice(SUITS), seq, burned=rng.random() < 0.1)
    elif pick < 0.65:
        message = CardUnreadable(seq, burned=rng.random() < 0.5)
    elif pick < 0.7:
        vendor, model, serial, firmware = (
            "".join(rng.choices(PRINTABLE, k=rng.randint(1, 32))) for _ in range(4)
        )
        message = DeviceIdentity(vendor, model, serial, firmware, power_up=rng.getrandbits(32))
    elif pick < 0.85:
        message = rng.choice(REFERENCE_EMPTY)
    else:
        fault = rng.choice(FAULTS)
        message = fault(rng.choice(FAULT_KINDS), rng.randint(0, 255))
    return reference.encode_device_frame(message, seq=seq)


def enq_frame(rng: random.Random, seq: int) -> bytes:
    seq %= enq.SEQUENCE.modulus
    pick = rng.random()
    message: enq.DeviceMessage
    if pick < 0.05:
        return enq.encode_device_frame(CommandAccepted())
    if pick < 0.08:
        return enq.encode_device_frame(CommandRejected(rng.choice([0x30, 0x31, 0x41])))
    if pick < 0.6:
        origin = rng.choice(CARD_ORIGINS)
        message = CardDrawn(rng.choice(RANKS), rng.choice(SUITS), seq, rng.random() < 0.1, origin)
    elif pick < 0.65:
        message = CardUnreadable(seq, burned=rng.random() < 0.5)
    elif pick < 0.8:
        message = rng.choice(ENQ_EMPTY)
    elif pick < 0.9:
        fault = rng.choice(FAULTS)
        message = fault("other", rng.randint(0, 63))
    elif pick < 0.95:
        message = LockChanged(locked=rng.random() < 0.5)
    else:
        message = VendorMessage("M", bytes(rng.choices(b"0123456789", k=6)))
    return enq.encode_device_frame(message, seq=seq)


def mutate(rng: random.Random, frame: bytes) -> bytes:  # noqa: PLR0911 - one return per mutation reads best
    """The frame as a hostile line might deliver it; 70 % of the time, untouched."""
    pick = rng.random()
    if pick < 0.70:
        return frame
    if pick < 0.78:
        return flip_bits(rng, frame, 1)
    if pick < 0.82:
        return flip_bits(rng, frame, rng.randint(2, 4))
    if pick < 0.86:
        return frame[: rng.randrange(len(frame))]
    if pick < 0.90:
        return rng.randbytes(rng.randint(1, 20)) + frame
    if pick < 0.93:
        return frame * 2
    if pick < 0.96:
        at = rng.randrange(len(frame))
        return frame[:at] + rng.randbytes(1) + frame[at + 1 :]
    return rng.randbytes(rng.randint(1, 40))


def flip_bits(rng: random.Random, frame: bytes, count: int) -> bytes:
    flipped = bytearray(frame)
    for _ in range(count):
        bit = rng.randrange(len(flipped) * 8)
        flipped[bit // 8] ^= 1 << (bit % 8)
    return bytes(flipped)


def fuzz(
    name: str,
    make_decoder: Callable[[], Decoder],
    make_frame: Callable[[random.Random, int], bytes],
    frames: int,
    seed: int,
) -> bool:
    rng = random.Random(f"{seed}:{name}")  # noqa: S311 - reproducible test data, not secrets
    pool = [make_frame(rng, seq) for seq in range(POOL_SIZE)]
    decoder = make_decoder()
    events = fed_bytes = 0
    started = time.perf_counter()
    for batch_start in range(0, frames, BATCH_FRAMES):
        count = min(BATCH_FRAMES, frames - batch_start)
        stream = b"".join(mutate(rng, pool[(batch_start + i) % POOL_SIZE]) for i in range(count))
        at = 0
        while at < len(stream):
            chunk = stream[at : at + rng.randint(1, MAX_CHUNK)]
            at += len(chunk)
            try:
                events += len(decoder.feed(chunk))
            except Exception:  # noqa: BLE001 - the finding this script exists to report
                print(f"{name}: exception escaped the decoder, seed {seed}, chunk {chunk.hex()}")
                traceback.print_exc()
                return False
        fed_bytes += len(stream)
    elapsed = time.perf_counter() - started
    counters = " ".join(f"{k}={v}" for k, v in asdict(decoder.counters).items())
    print(
        f"{name:<9} frames={frames} bytes={fed_bytes} events={events} {counters}"
        f" elapsed={elapsed:.2f}s rate={frames / elapsed:,.0f} frames/s"
    )
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=1_000_000, help="frames per codec")
    parser.add_argument("--seed", type=int, default=20240601, help="random seed")
    args = parser.parse_args()
    ok = fuzz("reference", reference.DeviceFrameDecoder, reference_frame, args.frames, args.seed)
    ok &= fuzz("enq", enq.DeviceFrameDecoder, enq_frame, args.frames, args.seed)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
