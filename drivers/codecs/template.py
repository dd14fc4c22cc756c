"""A template shoe protocol: one line of ASCII a message, the smallest complete codec.

Not a protocol any shoe speaks, and not a built-in: it is what docs/writing-a-protocol.md
walks through, the shape a third protocol copies (the same as reference.py and enq.py), and
the tests install it as a plugin to show that shape enough for the registry, `listen` and a
capture. Every line ends with a check value, as NMEA sentences do:

    line          BODY '*' CHECK '\\n'        CHECK: XOR of BODY's bytes, 2 uppercase hex
                                             digits; a '\\r' before the '\\n' is allowed
    shoe -> host  SHOE vendor model serial firmware N   who it is, and the number of its
                                                        next line (its answer to STATUS)
                  CARD 10S N                 a card dealt: rank then suit (A 2..10 J Q K,
                                             S H D C)
                  BURN 7C N                  a card burned
                  NOREAD N                   a card left the shoe, its face unread
                  SHUFFLE N                  a new shoe
                  CUT N                      the cut card came out
    host -> shoe  STATUS                     who are you? (whenever the host opens the line)

N counts the shoe's lines 0, 1, ... 999, 0 (decimal): a number skipped is a line lost. The
shoe keeps nothing, so a line the host did not read is gone; the number its SHOE answer
gives tells a host that comes back what it missed while away.
"""

from __future__ import annotations

import functools
import operator
import re
from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias, assert_never

from drivers.codecs.base import Decoder, Drop, Rejected, malformed
from drivers.codecs.base import HostLink as ListeningHost
from drivers.codecs.sequence import SequencePolicy, frame_seq
from drivers.errors import EncodeError
from drivers.events import (
    RANKS,
    SUITS,
    CardDrawn,
    CardUnreadable,
    CutCardReached,
    DeviceIdentity,
    NewShoe,
    StatusRequest,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from drivers.events import Event, Rank, Suit

# ================================================================ the protocol, as a table
END: Final = b"\n"
CHECK_MARK: Final = b"*"
MAX_LINE: Final = 80  # bytes before END: a longer line was not one, and is dropped
SEQUENCE: Final = SequencePolicy(modulus=1000, reports_gaps=True, reliable=False)
STATUS: Final = "STATUS"
IDENTITY: Final = "SHOE"
CARD: Final = "CARD"
BURN: Final = "BURN"
NOREAD: Final = "NOREAD"
SHUFFLE: Final = "SHUFFLE"
CUT: Final = "CUT"
# ================================================================ end of the table

DeviceMessage: TypeAlias = DeviceIdentity | CardDrawn | CardUnreadable | NewShoe | CutCardReached
HostMessage: TypeAlias = StatusRequest

_NUMBER: Final = re.compile(r"0|[1-9][0-9]{0,2}")  # 0..999, no sign, no leading zeros
_WORD: Final = re.compile(r"[!-)+-~]+")  # printable ASCII, no space, no CHECK_MARK
_CHECK_DIGITS: Final = re.compile(rb"[0-9A-F]{2}")


def check_value(body: bytes) -> int:
    """The line's check value: XOR of every byte of its body."""
    return functools.reduce(operator.xor, body, 0)


def _line(*words: str) -> bytes:
    body = " ".join(words).encode("ascii")
    return body + CHECK_MARK + b"%02X" % check_value(body) + END


# ---------------------------------------------------------------- encoders


def encode_device_frame(message: DeviceMessage, *, seq: int | None = None) -> bytes:
    """One shoe -> host line. Numbered messages carry their own number (a card's `seq`, the
    identity's `next_seq`); pass `seq` only for one that has none."""
    n = str(frame_seq(message, seq, SEQUENCE))
    match message:
        case DeviceIdentity(vendor=vendor, model=model, serial_number=serial, firmware=firmware):
            if message.power_up is not None:
                raise EncodeError(
                    "this protocol carries no power-up number", field="power_up", value=message
                )
            return _line(IDENTITY, *map(_word, (vendor, model, serial, firmware)), n)
        case CardDrawn(rank=rank, suit=suit, burned=burned, origin=origin):
            if origin != "dealt":
                raise EncodeError(
                    "this protocol tells no card origin", field="origin", value=origin
                )
            return _line(BURN if burned else CARD, f"{rank}{suit}", n)
        case CardUnreadable(burned=False):
            return _line(NOREAD, n)
        case CardUnreadable():
            raise EncodeError("an unread card is never said burned", field="burned", value=message)
        case NewShoe():
            return _line(SHUFFLE, n)
        case CutCardReached():
            return _line(CUT, n)
        case _:
            assert_never(message)


def encode_host_frame(message: HostMessage) -> bytes:
    """One host -> shoe line; the host's lines carry no number."""
    if not isinstance(message, StatusRequest):
        raise EncodeError("the host only asks STATUS", field="message", value=message)
    return _line(STATUS)


def _word(text: str) -> str:
    if not _WORD.fullmatch(text):
        raise EncodeError(
            "a word is printable ASCII without spaces or '*'", field="word", value=text
        )
    return text


# ---------------------------------------------------------------- the host's part of the link


class HostLink(ListeningHost):
    """The host asks STATUS whenever it opens the line and takes nothing until the shoe's
    SHOE line answers (then a jump from the last number it holds is a loss at once). It
    acknowledges nothing: the shoe keeps no line for it."""

    greets: ClassVar[bool] = True

    def greeting(self) -> bytes:
        return encode_host_frame(StatusRequest())

    def answers_greeting(self, event: Event) -> bool:
        return isinstance(event, DeviceIdentity)


# ---------------------------------------------------------------- decoders


class _LineDecoder(Decoder):
    """Splits the stream at END and judges each line; a line over MAX_LINE bytes is dropped
    as soon as it is one, and what follows of it up to END is skipped."""

    codec_name: ClassVar[str] = "template"

    def __init__(self) -> None:
        super().__init__()
        self._buffer = bytearray()
        self._skipping = False  # inside a line already dropped as too long

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        self._buffer += data
        while (end := self._buffer.find(END)) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._skipping:
                self._skipping = False
            elif len(line) > MAX_LINE:
                self._drop(Drop.MALFORMED, f"a line over {MAX_LINE} bytes", line)
            else:
                self._judge(line, events)
        if len(self._buffer) > MAX_LINE:
            if not self._skipping:
                self._drop(Drop.MALFORMED, f"a line over {MAX_LINE} bytes", bytes(self._buffer))
            self._skipping = True
            self._buffer.clear()
        return events

    def _judge(self, line: bytes, events: list[Event]) -> None:
        body = line.removesuffix(b"\r")
        if not body:
            self._skip_garbage(line + END)  # a blank line says nothing
            return
        try:
            words = _checked_words(body)
            events.append(self._message(words[0], words[1:]))
        except Rejected as rejected:
            self._drop(rejected.reason, rejected.detail, line)
            return
        self._counters.frames_ok += 1

    @abstractmethod
    def _message(self, word: str, args: list[str]) -> Event:
        """The event of a checked line whose first word is `word`; raises `Rejected`."""


class DeviceFrameDecoder(_LineDecoder):
    """Decodes what the shoe sends; the host runs this one (the registry's entry)."""

    sequence: ClassVar[SequencePolicy | None] = SEQUENCE
    host_link: ClassVar[type[ListeningHost]] = HostLink

    def _message(self, word: str, args: list[str]) -> Event:
        if word not in _DEVICE_LINES:
            raise Rejected(Drop.UNKNOWN_MESSAGE, f"{word!r}")
        arity, make = _DEVICE_LINES[word]
        if len(args) != arity:
            raise malformed(f"{word} with {len(args)} argument(s), not {arity}")
        return make(*args)


class HostFrameDecoder(_LineDecoder):
    """Decodes what the host sends; a shoe (or an emulator of one) runs this one."""

    def _message(self, word: str, args: list[str]) -> Event:
        if word != STATUS:
            raise Rejected(Drop.UNKNOWN_MESSAGE, f"{word!r}")
        if args:
            raise malformed(f"{STATUS} takes no argument")
        return StatusRequest()


def _checked_words(body: bytes) -> list[str]:
    """The words of a line whose check value is right; raises `Rejected` otherwise."""
    text, mark, check = body.rpartition(CHECK_MARK)
    if not mark or not _CHECK_DIGITS.fullmatch(check):
        raise malformed("no '*' and two uppercase hex digits at the end")
    if int(check, 16) != check_value(text):
        raise Rejected(Drop.BAD_CHECKSUM, "check value mismatch")
    if not text.isascii() or not text.decode("ascii").isprintable():
        raise malformed("not printable ASCII")
    words = text.decode("ascii").split(" ")
    if "" in words:
        raise malformed("words are separated by one space")
    return words


def _number(text: str) -> int:
    if not _NUMBER.fullmatch(text):
        raise malformed(f"not a line number 0-999: {text!r}")
    return int(text)


def _card_drawn(card: str, n: str, *, burned: bool) -> CardDrawn:
    rank, suit = _card(card)
    return CardDrawn(rank=rank, suit=suit, seq=_number(n), burned=burned)


# Each line the shoe sends: its first word -> how many words follow, and the event they make.
_DEVICE_LINES: Final[dict[str, tuple[int, Callable[..., Event]]]] = {
    CARD: (2, lambda card, n: _card_drawn(card, n, burned=False)),
    BURN: (2, lambda card, n: _card_drawn(card, n, burned=True)),
    NOREAD: (1, lambda n: CardUnreadable(seq=_number(n))),
    SHUFFLE: (1, lambda n: NewShoe(seq=_number(n))),
    CUT: (1, lambda n: CutCardReached(seq=_number(n))),
    IDENTITY: (
        5,
        lambda vendor, model, serial, firmware, n: DeviceIdentity(
            vendor, model, serial, firmware, next_seq=_number(n)
        ),
    ),
}
_RANKS: Final[dict[str, Rank]] = {rank: rank for rank in RANKS}
_SUITS: Final[dict[str, Suit]] = {suit: suit for suit in SUITS}


def _card(text: str) -> tuple[Rank, Suit]:
    rank, suit = _RANKS.get(text[:-1]), _SUITS.get(text[-1:])
    if rank is None or suit is None:
        raise malformed(f"not a card: {text!r}")
    return rank, suit
