"""The shift's numbers on the display: a line on each table's tile of the pit view, and the
numbers page's data, from the table's retained `<table>/stats` (docs/numbers.md)."""

from __future__ import annotations

from typing import Any

from rules.money import format_dollars as dollars


def shift_view(stats: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a tile says of the shift: its pace and each bonus wager's result; None before
    the table's first round of the shift was counted."""
    numbers = (stats or {}).get("numbers")
    if not isinstance(numbers, dict):
        return None
    pace = numbers.get("rounds_per_hour")
    wagers = [w for w in numbers.get("wagers") or [] if isinstance(w, dict)]
    return {
        "shift": stats.get("shift") if stats else None,
        "rounds": numbers.get("rounds"),
        "pace": None if pace is None else f"{pace:.0f} rounds/h",
        "wagers": [_wager(w) for w in wagers],
    }


def _wager(money: dict[str, Any]) -> dict[str, Any]:
    hold, theory = money.get("hold"), money.get("theoretical_hold")
    won = int(money.get("house_win_cents") or 0)
    sign = "+" if won >= 0 else "-"
    text = f"{str(money.get('wager', '')).replace('_', ' ')}: house {sign}${dollars(abs(won))}"
    if hold is not None:
        text += f", hold {hold:.1%}"
    if theory is not None:
        text += f" (theory {theory:.1%})"
    return {"text": text, "alert": money.get("alert")}
