"""What a host must take from each ENQ example capture (examples/captures/enq/), written out
by hand from the case's description, not from the code that plays or judges it: the oracle
of the capture tests, in process and through `listen`.

An event is a token: a card as its code (`9H*` burned, `7H/retransmission` for another
origin), `S@30` a start of communication and its SEQ, `E:name` / `e:name` an error set and
cleared, `L:False` a lock-status frame, `conflict@31` a `SequenceConflict`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from drivers.events import (
    CardDrawn,
    CardUnreadable,
    CommunicationStarted,
    FaultCleared,
    FaultSet,
    LockChanged,
    SequenceConflict,
    SequenceGap,
)

CAPTURES: Final = Path(__file__).parents[2] / "examples" / "captures" / "enq"
_DEAL: Final = ["10C", "KH", "KS", "6S", "7H", "2D", "QD", "9C", "8D"]
_TRUE: Final = ["S@30", "9H*", *_DEAL]


def _upcard_then(extra: list[str], *, skip: int = 0) -> list[str]:
    at = _TRUE.index("6S") + 1
    return [*_TRUE[:at], *extra, *_TRUE[at + skip :]]


EXPECTED: Final[dict[str, list[str]]] = {
    "clean-round": _TRUE,
    "exact-repeats": _TRUE,
    "error-can-not-read": _upcard_then(["E:can not read", "e:can not read"], skip=1),
    "error-reverse-run-at-exit": _upcard_then(["E:reverse run at exit", "e:reverse run at exit"]),
    "retransmitted-unseen-card": _upcard_then(["7H/retransmission"], skip=1),
    "card-outside-game": _upcard_then(["7H/outside_game"], skip=1),
    "same-seq-after-lock": ["S@2F", "9H*", "10C", "L:False", *_DEAL[1:]],
    "two-cards-one-seq": ["S@2F", "9H*", "10C", "conflict@31", *_DEAL[1:]],
    "restart-after-burn": ["S@30", "9H*", "S@30", *_DEAL],
    "restart-mid-round": ["S@30", "9H*", "10C", "KH", "S@30", *_DEAL[2:]],
}


def cards_in(case: str) -> int:
    """How many cards (burn included) a host takes from the case."""
    return sum(1 for token in EXPECTED[case] if token[0].isdigit() or token[0] in "AJQK")


def token(event: object) -> str:  # noqa: PLR0911 - one return per kind of event
    match event:
        case CardDrawn(burned=burned, origin=origin):
            return (
                event.code + ("*" if burned else "") + ("" if origin == "dealt" else f"/{origin}")
            )
        case CardUnreadable():
            return "?"
        case FaultSet(name=name):
            return f"E:{name}"
        case FaultCleared(name=name):
            return f"e:{name}"
        case CommunicationStarted(seq=seq):
            return f"S@{seq:02X}"
        case LockChanged(locked=locked):
            return f"L:{locked}"
        case SequenceConflict(seq=seq):
            return f"conflict@{seq:02X}"
        case SequenceGap():
            return "gap"
    return type(event).__name__


def record_token(record: dict[str, object]) -> str | None:
    """The token of one line `listen` printed; None for a line about the link or the bytes."""
    kind = record["type"]
    if kind in {"raw", "repeat", "Connecting", "Connected", "Disconnected", "Reconnected"}:
        return None
    if kind == "CardDrawn":
        card = f"{record['card']}{'*' if record['burned'] else ''}"
        return card if record["origin"] == "dealt" else f"{card}/{record['origin']}"
    seq = record.get("seq")
    by_kind = {
        "FaultSet": f"E:{record.get('name')}",
        "FaultCleared": f"e:{record.get('name')}",
        "CommunicationStarted": f"S@{seq:02X}" if isinstance(seq, int) else "S",
        "LockChanged": f"L:{record.get('locked')}",
        "SequenceConflict": f"conflict@{seq:02X}" if isinstance(seq, int) else "conflict",
        "SequenceGap": "gap",
    }
    return by_kind.get(str(kind), str(kind))
