"""The numbers as a person or a program reads them: text, CSV and JSON.

Money is printed in dollars from exact cents; holds and rates as percentages and decimals.
Other parts of the daemon add lines of their own to every group's text and JSON with
`add_section` (a name, and a function from a group's numbers to its lines); a section that
has nothing to say for a group returns no lines.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from rules.money import format_amount
from rules.money import format_dollars as dollars

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.numbers.tally import Numbers

Section = tuple[str, "Callable[[Numbers], list[str]]"]
_SECTIONS: list[tuple[str, Callable[[Numbers], list[str]]]] = []


def add_section(name: str, lines: Callable[[Numbers], list[str]]) -> None:
    """Every report from now on shows `name` and the lines `lines` gives for each group."""
    _SECTIONS.append((name, lines))


def sections(numbers: Numbers) -> dict[str, list[str]]:
    """The group's own sections (the report's: surveillance), then those added."""
    added = {name: found for name, lines in _SECTIONS if (found := lines(numbers))}
    return {**{k: v for k, v in numbers.sections.items() if v}, **added}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.2%}"


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def text(groups: list[Numbers], confidence: float) -> str:
    out: list[str] = []
    for numbers in groups:
        title = ", ".join(f"{k} {v}" for k, v in numbers.key.items())
        out.append(title)
        out.append("=" * len(title))
        out.append(
            f"rounds {numbers.rounds:,} ({numbers.voided:,} voided) in {numbers.hours:,.1f} h of "
            f"play: {_number(numbers.rounds_per_hour)} an hour; per round "
            f"{_number(numbers.per_round(numbers.seats))} seats, "
            f"{_number(numbers.per_round(numbers.hands))} hands, "
            f"{_number(numbers.per_round(numbers.cards))} cards"
        )
        out.append(
            f"shoes {numbers.shoes:,}, penetration at the cut card "
            f"{_percent(numbers.penetration)} ({numbers.cut_cards:,} cut cards seen)"
        )
        for wager in sorted(numbers.wagers):
            out.extend(_wager_lines(numbers, wager, confidence))
        out.append(
            f"queen of hearts pairs paid {numbers.queen_of_hearts_pairs_paid:,}; floorperson "
            f"calls {numbers.floorperson_calls:,}; rounds held {numbers.held_rounds:,}, "
            f"flagged for review {numbers.reviewed_rounds:,}; unreadable cards "
            f"{numbers.unreadable_cards:,}"
        )
        for name, lines in sections(numbers).items():
            out.append(f"{name}:")
            out.extend(f"  {line}" for line in lines)
        out.append("")
    return "\n".join(out)


def _wager_lines(numbers: Numbers, wager: str, confidence: float) -> list[str]:
    money = numbers.wagers[wager]
    found = money.band(confidence)
    lines = [
        (
            f"{wager}: handle ${dollars(money.handle)} on {money.settlements:,} wagers, "
            f"players won ${dollars(money.players_won)}, house win "
            f"${dollars(money.house_win)}, hold {_percent(money.hold)}"
        )
    ]
    if found is None:
        lines.append("  theoretical: none (no exact figures for this wager)")
    else:
        lines.append(
            f"  theoretical {found.theoretical:.2%}, {found.confidence:.1%} band "
            f"[{found.low:.2%}, {found.high:.2%}]"
        )
    alert = money.alert(confidence)
    if alert is not None:
        lines.append(f"  ALERT: {alert.words()}")
    return lines


def as_json(groups: list[Numbers], confidence: float) -> str:
    return json.dumps([_mapping(n, confidence) for n in groups], indent=2) + "\n"


def _mapping(numbers: Numbers, confidence: float) -> dict[str, Any]:
    return {**numbers.to_mapping(confidence), "sections": sections(numbers)}


CSV_COLUMNS = (
    "table", "shift", "day", "dealer", "floor", "rounds", "voided", "hours", "rounds_per_hour",
    "hands_per_round", "cards_per_round", "seats_in_play", "shoes", "penetration", "wager",
    "settlements", "handle", "players_won", "house_win", "hold", "theoretical_hold",
    "band_low", "band_high", "alert", "queen_of_hearts_pairs_paid", "floorperson_calls",
    "held_rounds", "reviewed_rounds", "unreadable_cards", "sections",
)  # fmt: skip


def as_csv(groups: list[Numbers], confidence: float) -> str:
    """One row per group and wager kind (a group with no wager settled: one row, wager
    empty); amounts in dollars with two decimals, exact; the group's sections in each of
    its rows, "name: line | line", one section after another."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for numbers in groups:
        whole = numbers.to_mapping(confidence)
        base = {k: whole.get(k, "") for k in CSV_COLUMNS[:14]}
        base["sections"] = "\n".join(
            f"{name}: {' | '.join(line.strip() for line in lines)}"
            for name, lines in sections(numbers).items()
        )
        rows = whole["wagers"] or [None]
        for wager in rows:
            row: dict[str, Any] = dict(base)
            if wager is not None:
                band = wager["band"] or ["", ""]
                row.update(
                    wager=wager["wager"], settlements=wager["settlements"],
                    handle=format_amount(wager["handle_cents"]),
                    players_won=format_amount(wager["players_won_cents"]),
                    house_win=format_amount(wager["house_win_cents"]), hold=wager["hold"],
                    theoretical_hold=wager["theoretical_hold"] or "", band_low=band[0],
                    band_high=band[1], alert=wager["alert"] or "",
                )  # fmt: skip
            for key in CSV_COLUMNS[24:-1]:
                row[key] = whole[key]
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()
