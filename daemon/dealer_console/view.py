"""What the console page shows, as JSON-ready data with its words made here (sans I/O).

`setup` is what the table is (game, seats, wagers with their limits and windows, chips,
decisions): it changes only with the configuration. `state` is the table as the daemon
publishes it (the display's model, daemon/display/model.py, which holds only what the broker
told it: never a face-down card) with, for the dealer, each doubt in words with what to do,
and each request the table has not answered with what may be done about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from daemon.display.wording import GAME_NAMES, REVIEW_REASONS, WAGER_NAMES, money, words
from rules.games import Action, Step, WagerKind
from rules.money import format_amount

if TYPE_CHECKING:
    from daemon.dealer_console.contract import Contract, Sent
    from daemon.display.model import PitModel
    from rules.config import TableConfig

STEPS: Final = {
    Step.PLAYERS_FIRST_CARD: "the players' first cards",
    Step.DEALER_UPCARD: "the dealer's upcard",
    Step.PLAYERS_SECOND_CARD: "the players' second cards",
    Step.DEALER_HOLE_CARD: "the dealer's hole card",
}
COMMAND_WORDS: Final = {
    "wager": "wager",
    "withdraw": "take back",
    "close_betting": "No more bets",
    "action": "decision",
    "card": "card entered",
    "resume": "confirm",
    "void": "void the round",
    "shuffle": "shuffle",
    "status": "status",
}
# What the dealer does about each reason the table holds its cards (the snapshot's `doubt`).
DOUBT_ADVICE: Final = {
    "card_before_round": "a card came before any wager: if it was dealt for this round, "
    "place the wagers and tap No more bets, then Confirm; if it belongs to no round, "
    "Confirm with 'set aside' for it",
    "declaration_missing": "a card waited too long for a decision: tap the decision that "
    "was made for it, then Confirm",
    "unheard_shuffle": "the table did not hear the shoe while it was shuffled: if the burn "
    "card was dealt, Confirm with 'burned 1', else Confirm",
    "crossed_request": "a request crossed a card: check the cards on the layout against "
    "this screen, then Confirm, or Void the round",
}
# What the dealer does about each of the pit's alerts (daemon/display/alerts.py), by its label.
ALERT_ADVICE: Final = {
    "OFFLINE": "do not deal: the table is not live; call the floorperson",
    "CONTESTED": "do not deal: two daemons serve this table; call the floorperson",
    "JOURNAL": "do not deal: the table waits until its journal can be written; call the "
    "floorperson",
    "READER": "check the shoe's cable and power; deal nothing until it is connected",
    "READER FAULT": "show the shoe's fault to the floorperson",
    "ENTER CARD": "read the card's face and enter it: Enter card",
    "WAITING": "tap what the card waits for: the wagers and No more bets, or the seat's decision",
    "REVIEW": "the round is flagged: pay as shown, and have the floorperson check it",
    "FLOORPERSON": "call the floorperson",
}
DEFAULT_ADVICE: Final = (
    "call the floorperson: enter any card that went by unread (Enter card), then Confirm; "
    "or Void the round"
)


def setup(config: TableConfig, chips: tuple[int, ...], dealer: str) -> dict[str, Any]:
    rules = config.rules
    offered = [
        rule
        for rule in rules.wagers
        if rule.kind is not WagerKind.TWENTY_POINT_BONUS or config.offers_twenty_point_bonus
    ]
    actions = [
        a.value
        for a in Action
        if a in rules.actions and (a is not Action.SURRENDER or config.surrender)
    ]
    return {
        "table": config.table_id,
        "game": config.game.value,
        "game_name": GAME_NAMES.get(config.game.value, words(config.game.value)),
        "seats": config.seats,
        "dealer_name": dealer,
        "chips": [format_amount(c) for c in chips],
        "chip_names": [_short(c) for c in chips],
        "actions": actions,
        "wagers": [
            {
                "kind": rule.kind.value,
                "name": WAGER_NAMES.get(rule.kind.value, words(rule.kind.value)),
                "min": format_amount(config.limits[rule.kind].minimum),
                "max": format_amount(config.limits[rule.kind].maximum),
                "limits": f"{_short(config.limits[rule.kind].minimum)} to "
                f"{_short(config.limits[rule.kind].maximum)}",
                "window": _window(rule.opens_after, rule.closes_at),
                "requires": None if rule.requires is None else rule.requires.value,
            }
            for rule in offered
        ],
    }


def _short(cents: int) -> str:
    """A chip or a limit as a dealer says it: `$25`, `$1,000`, `$2.50`."""
    text = money(format_amount(cents))
    return text.removesuffix(".00")


def _window(opens_after: Step | None, closes_at: Step) -> str:
    start = "from the round's start" if opens_after is None else f"after {STEPS[opens_after]}"
    return f"{start}, until No more bets before {STEPS[closes_at]}"


def state(model: PitModel, table: str, contract: Contract, *, linked: bool) -> dict[str, Any]:
    known = model.tables.get(table)
    view = model.view(table) if known is not None else None
    if view is not None:  # the pit's words, and what the dealer does; HOLD is said below
        view["alerts"] = [
            {**alert, "advice": ALERT_ADVICE.get(alert["label"], "")}
            for alert in view["alerts"]
            if alert["label"] != "HOLD"
        ]
    raw = (known.round if known is not None else None) or {}
    return {
        "broker": model.broker if linked or model.broker != "connected" else "lost",
        "table": view,
        "betting_open": bool(raw.get("betting_open")),
        "turn": raw.get("turn"),
        "drawing": [
            {"seat": seat.get("seat"), "hand": hand.get("hand")}
            for seat in raw.get("seats") or []
            for hand in seat.get("hands") or []
            if hand.get("drawing")
        ],
        "wagers": {
            str(seat.get("seat")): dict(seat.get("wagers") or {}) for seat in raw.get("seats") or []
        },
        "awaiting_entry": known.awaiting_entry if known is not None else 0,
        "doubt": None if known is None else _doubt(known.doubt, known.cards_held),
        "unanswered": [_unanswered(sent) for sent in contract.unanswered()],
        "seen": contract.seen,
    }


def _doubt(reason: str | None, held: int) -> dict[str, Any] | None:
    if reason is None:
        return None
    return {
        "reason": reason,
        "text": f"the table holds {held} card{'' if held == 1 else 's'}: "
        f"{REVIEW_REASONS.get(reason, words(reason))}",
        "advice": DOUBT_ADVICE.get(reason, DEFAULT_ADVICE),
        "held": held,
    }


def request_words(sent: Sent) -> str:
    """`seat 3 hit`, `seat 2 20 point bonus $25.00`, `No more bets`."""
    fields = sent.fields
    parts = [] if "seat" not in fields else [f"seat {fields['seat']}"]
    if "hand" in fields and fields["hand"] not in (None, 1):
        parts.append(f"hand {fields['hand']}")
    if "kind" in fields:
        parts.append(WAGER_NAMES.get(str(fields["kind"]), words(fields["kind"])))
    if "amount" in fields:
        parts.append(money(fields["amount"]))
    if "action" in fields:
        parts.append(str(fields["action"]))
    if "card" in fields:
        parts.append(f"card {fields['card']}")
    if sent.command not in ("wager", "action"):
        parts.insert(0, COMMAND_WORDS.get(sent.command, words(sent.command)))
    return " ".join(parts)


def _unanswered(sent: Sent) -> dict[str, Any]:
    what = request_words(sent)
    if sent.command in ("action", "card") and not sent.status_checked:
        advice = (
            "the table has not answered: the console asks its status; send again only "
            "if the round below does not show it"
        )
    elif sent.command == "close_betting":
        advice = "the table has not answered No more bets: do not deal; send it again"
    else:
        advice = "the table has not answered: send it again, or let it go"
    return {
        "transaction": sent.transaction,
        "command": sent.command,
        "what": what,
        "advice": advice,
        "may_again": sent.command not in ("action", "card") or sent.status_checked,
        "times": sent.times,
    }
