"""What must stand out on a table's view, most urgent first, each in colour and words: the
table offline or contested, a journal that cannot be written, the reader, cards kept back
(to enter, waiting for the console, held for a doubt), a review, a floorperson."""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.display.wording import AWAITED, REVIEW_REASONS, reader_text, words

if TYPE_CHECKING:
    from daemon.display.table_model import TableModel


def alerts(
    table: TableModel, offline: str | None, *, contested: bool = False
) -> list[dict[str, str]]:
    """What must stand out on the pit view, most urgent first, each in colour and words;
    `offline` says why the table is not live (None: it is); `contested`: because two
    daemons claim it (then it is not OFFLINE either: both serve it)."""
    alerts = []
    if contested and offline is not None:
        alerts.append({"class": "contested", "label": "CONTESTED", "text": offline})
    elif offline is not None:
        alerts.append({"class": "offline", "label": "OFFLINE", "text": offline})
    if table.journal.get("state") == "failing":
        reason = str(table.journal.get("reason") or "it cannot be written")
        text = f"{reason}: the table waits for it, and loses nothing the shoe holds"
        alerts.append({"class": "fault", "label": "JOURNAL", "text": text})
    link = table.reader.get("link")
    if link is not None and link not in ("connected", "starting"):
        alerts.append({"class": "fault", "label": "READER", "text": reader_text(table.reader)})
    for fault in table.reader.get("faults") or []:
        if isinstance(fault, dict):
            text = f"{words(fault.get('kind'))} (code {fault.get('code')})"
            alerts.append({"class": "fault", "label": "READER FAULT", "text": text})
    alerts += custody_alerts(table)
    if table.review:
        reasons = ", ".join(REVIEW_REASONS.get(r, words(r)) for r in table.review)
        alerts.append({"class": "review", "label": "REVIEW", "text": f"this round: {reasons}"})
    alerts += [
        {"class": "floor", "label": "FLOORPERSON", "text": str(n.get("message") or "")}
        for n in table.notices
        if n.get("kind") == "floorperson_required"
    ]
    return alerts


def custody_alerts(table: TableModel) -> list[dict[str, str]]:
    """The cards the table keeps back: unreadable ones to enter, one waiting for the dealer
    console's declaration, and those held for a doubt."""
    alerts = []
    if table.awaiting_entry:
        count = table.awaiting_entry
        cards = "card is" if count == 1 else "cards are"
        alerts.append(
            {
                "class": "entry",
                "label": "ENTER CARD",
                "text": f"{count} unreadable {cards} waiting: enter at the dealer console",
            }
        )
    if table.awaiting is not None and table.doubt is None:
        alerts.append({"class": "entry", "label": "WAITING", "text": awaiting_text(table)})
    if table.doubt is not None:
        held = table.cards_held
        cards = "no card held yet" if not held else f"{held} card{'s' if held > 1 else ''} held"
        reason = REVIEW_REASONS.get(table.doubt, words(table.doubt))
        alerts.append(
            {
                "class": "review",
                "label": "HOLD",
                "text": f"cards wait for the dealer console ({reason}): {cards}; "
                "enter any missed card, then confirm, or void the round",
            }
        )
    return alerts


def awaiting_text(table: TableModel) -> str:
    """`a card from the shoe waits for no more bets`, in the pit's words."""
    awaiting = table.awaiting or {}
    what = AWAITED.get(str(awaiting.get("declaration")), "the dealer console")
    cards = "a card waits" if table.cards_held <= 1 else f"{table.cards_held} cards wait"
    return f"{cards} for {what.format(seat=awaiting.get('seat'))} from the dealer console"
