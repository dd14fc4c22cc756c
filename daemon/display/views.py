"""What the page shows of a round, a settlement and a notice: JSON-ready data with the words
already made (daemon/display/wording.py), so the page's script only lays it out."""

from __future__ import annotations

from typing import Any, Final

from daemon.display.wording import (
    NOTICE_CLASSES,
    STAGE_NAMES,
    WAGER_NAMES,
    money,
    settlement_parts,
    settlement_text,
    words,
)

NOTICE_TEXT: Final = 300  # characters of a notice shown; the daemon's own are under 200


def round_view(round_: dict[str, Any] | None) -> dict[str, Any] | None:
    if round_ is None:
        return None
    turn = round_.get("turn") or {}
    dealer = round_.get("dealer") or {}
    stage = str(round_.get("stage"))
    return {
        "id": round_.get("id"),
        "stage": stage,
        "stage_name": STAGE_NAMES.get(stage, words(stage)),
        "dealer": {
            "cards": [c if isinstance(c, str) else None for c in dealer.get("cards") or []],
            "total": dealer.get("total"),
        },
        "seats": [
            {
                "seat": seat.get("seat"),
                "wagers": [
                    {"name": WAGER_NAMES.get(kind, words(kind)), "amount": money(amount)}
                    for kind, amount in (seat.get("wagers") or {}).items()
                ],
                "hands": [
                    {
                        "hand": hand.get("hand"),
                        "cards": [str(c) for c in hand.get("cards") or []],
                        "total": hand.get("total"),
                        "soft": bool(hand.get("soft")),
                        "doubled": bool(hand.get("doubled")),
                        "ended": None if hand.get("ended") is None else words(hand["ended"]),
                        "turn": turn == {"seat": seat.get("seat"), "hand": hand.get("hand")},
                    }
                    for hand in seat.get("hands") or []
                ],
            }
            for seat in round_.get("seats") or []
        ],
    }


def settlement_view(body: dict[str, Any], split_seats: set[Any]) -> dict[str, Any]:
    show_hand = body.get("seat") in split_seats
    who, what, action = settlement_parts(body, show_hand=show_hand)
    return {
        "key": "-".join(str(body.get(k)) for k in ("round", "seat", "hand", "wager")),
        "seat": body.get("seat"),
        "result": body.get("result"),
        "phase": body.get("phase"),  # when in the round the rules settled it
        "who": who,
        "what": what,
        "action": action,
        "text": settlement_text(body, show_hand=show_hand),
        "floorperson": bool(body.get("floorperson")),
        "review": bool(body.get("review")),
    }


def notice_view(body: dict[str, Any]) -> dict[str, Any]:
    kind = str(body.get("kind"))
    css, label = NOTICE_CLASSES.get(kind, ("info", words(kind).upper()))
    text = str(body.get("message") or "")
    if len(text) > NOTICE_TEXT:
        text = text[: NOTICE_TEXT - 1] + "…"
    return {"kind": kind, "class": css, "label": label, "text": text}
