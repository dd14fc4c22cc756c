"""Words for the pit: what a settlement, a notice or a reader state says to a person.

"seat 3 — 20 point bonus, suited 20, 9 to 1: pay $225.00". Built from the message's fields
alone (the display knows nothing else), tables of names as data.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Final

GAME_NAMES: Final = {
    "blackjack": "Blackjack",
    "double_attack": "Double Attack",
    "triple_attack": "Triple Attack",
}
WAGER_NAMES: Final = {
    "blackjack": "blackjack",
    "initial": "initial wager",
    "first_attack": "first attack",
    "second_attack": "second attack",
    "third_attack": "third attack",
    "twenty_point_bonus": "20 point bonus",
    "double_attack": "double attack",
    "optional_bonus": "optional bonus",
}
STAGE_NAMES: Final = {
    "betting": "wagers",
    "dealing": "dealing",
    "playing": "players",
    "dealer": "dealer",
    "over": "settled",
}
# Why a round is flagged for review (snapshot `review`), in words.
REVIEW_REASONS: Final = {
    "sequence_gap": "frames lost",
    "reader_reconnected": "reader reconnected",
    "daemon_restarted": "daemon restarted",
    "reader_restarted": "reader restarted",
    "internal_error": "internal error",
    "table_claimed": "another daemon claims the table",
    "client_id_in_use": "another client uses the daemon's client id",
    "card_before_round": "a card came before any wager",
    "declaration_missing": "the console did not declare in time",
    "crossed_request": "a request crossed a card",
    "unheard_round": "dealt while the table was unheard",
    "unheard_shuffle": "shuffled while the table was unheard",
    "retransmitted_card": "the shoe resent a card never received",
    "card_outside_game": "a card drawn outside a game",
    "sequence_conflict": "a frame number used twice",
    "reader_fault": "the reader reported an error",
    "foreign_card": "a card the shoe cannot hold",
}
# What a held card waits for, as the pit reads it (the snapshot's `awaiting`).
AWAITED: Final = {
    "round": "a round: the console's wagers, then no more bets",
    "close_betting": "no more bets",
    "decision": "the decision of seat {seat}",
}
# How each notice kind stands out: a class for its colour, a word for those who cannot
# tell the colours apart. Unlisted kinds are plain information.
NOTICE_CLASSES: Final = {
    "floorperson_required": ("floor", "FLOORPERSON"),
    "card_unreadable": ("entry", "ENTER CARD"),
    "sequence_gap": ("review", "REVIEW"),
    "reader_reconnected": ("review", "REVIEW"),
    "daemon_restarted": ("review", "REVIEW"),
    "reader_restarted": ("review", "REVIEW"),
    "held_cards_dropped": ("review", "REVIEW"),
    "internal_error": ("review", "REVIEW"),
    "reader_fault": ("fault", "READER FAULT"),
    "reader_disconnected": ("fault", "READER"),
    "outbox_filling": ("fault", "BROKER"),
    "client_id_in_use": ("fault", "BROKER"),
    "link_unstable": ("fault", "BROKER"),
    "table_claimed": ("fault", "CONTESTED"),
    "card_before_round": ("review", "HOLD"),
    "declaration_missing": ("review", "HOLD"),
    "crossed_request": ("review", "HOLD"),
    "unheard_round": ("review", "HOLD"),
    "unheard_shuffle": ("review", "HOLD"),
    "retransmitted_card": ("review", "HOLD"),
    "card_outside_game": ("review", "HOLD"),
    "sequence_conflict": ("review", "HOLD"),
    "foreign_card": ("review", "HOLD"),
    "reader_silent": ("fault", "READER"),
    "clock_stepped": ("fault", "CLOCK"),
    "archive_quarantined": ("fault", "ARCHIVE"),
}


def words(identifier: object) -> str:
    """`queen_of_hearts_pair` → `queen of hearts pair`."""
    return str(identifier).replace("_", " ")


def money(amount: object) -> str:
    """`"1250.00"` → `$1,250.00`; the amount exactly as sent, only grouped."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        return str(amount)
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def settlement_action(body: dict[str, Any]) -> str:
    """What the dealer does: pay the win, collect the stake, leave it, or return it."""
    result = body.get("result")
    if result == "win":
        return f"pay {money(body.get('won'))}"
    if result == "lose":
        return f"collect {money(body.get('stake'))}"
    if result == "push":
        return "push"  # the stake stays where it is
    if result == "void":
        return f"return {money(body.get('stake'))}"
    return words(result)


def settlement_parts(body: dict[str, Any], *, show_hand: bool = False) -> tuple[str, str, str]:
    """Who, what and what to do: ("seat 3", "20 point bonus, suited 20, 9 to 1",
    "pay $225.00")."""
    who = f"seat {body.get('seat')}"
    if show_hand and body.get("hand") is not None:
        who += f" hand {body['hand']}"
    wager = WAGER_NAMES.get(str(body.get("wager")), words(body.get("wager")))
    what = [wager, words(body.get("outcome"))]
    if body.get("odds"):
        what.append(str(body["odds"]))
    action = settlement_action(body)
    if body.get("limited"):
        action += " (limited by the aggregate limit)"
    return who, ", ".join(what), action


def settlement_text(body: dict[str, Any], *, show_hand: bool = False) -> str:
    """ "seat 3 — 20 point bonus, suited 20, 9 to 1: pay $225.00"."""
    who, what, action = settlement_parts(body, show_hand=show_hand)
    return f"{who} — {what}: {action}"


def reader_text(reader: dict[str, Any]) -> str:
    link = str(reader.get("link") or "unknown")
    text = f"reader {link}"
    if link != "connected" and reader.get("reason"):
        text += f": {reader['reason']}"
    return text
