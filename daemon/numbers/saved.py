"""A table's shift numbers as the journal keeps them between rounds: so a restart counts on
from where the numbers stood, not from the shift's first round (decision N22).

Sans-I/O. `saved` turns a `ShiftStats` that holds no open round into plain JSON data: its
shift, its figures as last published, the kept rounds (their compressed blocks as they are,
in base64), every running count of its `Numbers` (the exact distributions its bands are
solved from included, as fractions' text, so that the band after a restart is the one the
numbers would have had), and the folder's table settings, dealer and open shoe. `restore`
puts such data back into a fresh `ShiftStats` of the same table; what it does not recognise
(another format, a field missing) raises `SavedNumbersError`, and the caller counts the
shift from the journal instead: numbers are never worth refusing a start for.
"""

from __future__ import annotations

import functools
from collections import Counter
from datetime import datetime, timedelta
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

from daemon.numbers.records import TableSettings, _OpenShoe
from daemon.numbers.tally import Numbers, WagerNumbers
from rules.analysis.band import UnitDistribution

if TYPE_CHECKING:
    from daemon.numbers.live import ShiftStats

FORMAT: Final = 1


class SavedNumbersError(ValueError):
    """Saved numbers this shoe2mqtt cannot take back (another format, a field missing)."""


def saved(stats: ShiftStats) -> dict[str, Any] | None:
    """`stats` as JSON data; None while a round is open (its numbers are saved at a round's
    end, when nothing of a round is half counted)."""
    folder = stats.folder
    if folder._round is not None:  # noqa: SLF001 - the folder's state, saved whole
        return None
    shoe = folder._shoe  # noqa: SLF001
    return {
        "format": FORMAT,
        "shift": stats.shift,
        "updated": stats.updated,
        "mapping": stats.mapping,
        "history": stats.history.parts(),
        "numbers": _numbers(stats.numbers),
        "folder": {
            "settings": None if folder.settings is None else _settings(folder.settings),
            "dealer": folder.dealer,
            "shoe": None if shoe is None else [shoe.started.isoformat(), shoe.cards, shoe.cut_at],
        },
    }


def restore(stats: ShiftStats, data: dict[str, Any]) -> None:
    """Put `data` (from `saved`) into `stats`, a table's fresh `ShiftStats`."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SavedNumbersError(f"saved numbers of another format: {_format_of(data)!r}")
    try:
        folder = data["folder"]
        shoe = folder["shoe"]
        stats.shift = data["shift"]
        stats.updated = data["updated"]
        stats.mapping = data["mapping"]
        stats.history.restore(data["history"])
        stats.numbers = _numbers_from(data["numbers"])
        stats.folder.settings = (
            None if folder["settings"] is None else _settings_from(folder["settings"])
        )
        stats.folder.dealer = folder["dealer"]
        stats.folder._shoe = (  # noqa: SLF001 - the folder's state, saved whole
            None
            if shoe is None
            else _OpenShoe(datetime.fromisoformat(shoe[0]), int(shoe[1]), shoe[2])
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise SavedNumbersError(f"saved numbers not as this shoe2mqtt saves them: {exc!r}") from exc


def _format_of(data: object) -> object:
    return data.get("format") if isinstance(data, dict) else type(data).__name__


def _settings(settings: TableSettings) -> list[Any]:
    paytable = settings.paytable
    return [
        settings.game,
        settings.decks,
        settings.deck_kind,
        paytable if isinstance(paytable, str) else [list(line) for line in paytable],
        settings.dealer_hits_soft_17,
    ]


def _settings_from(data: list[Any]) -> TableSettings:
    game, decks, deck_kind, paytable, soft_17 = data
    posted = paytable if isinstance(paytable, str) else tuple((a, b) for a, b in paytable)
    return TableSettings(game, int(decks), deck_kind, posted, bool(soft_17))


_COUNTS: Final = (
    "rounds", "voided", "hands", "cards", "seats", "shoes", "cut_cards",
    "queen_of_hearts_pairs_paid", "floorperson_calls", "held_rounds", "reviewed_rounds",
    "unreadable_cards",
)  # fmt: skip


def _numbers(numbers: Numbers) -> dict[str, Any]:
    units: dict[str, list[list[str]]] = {}  # each distribution's values, once
    wagers = []
    for wager in numbers.wagers.values():
        counted = []
        for (unit, stake), times in wager.units.items():
            units.setdefault(unit.name, [[str(v), str(p)] for v, p in unit.values])
            counted.append([unit.name, stake, times])
        wagers.append(
            [wager.wager, wager.settlements, wager.handle, wager.players_won,
             wager.house_win, wager.without_figures, counted]
        )  # fmt: skip
    return {
        "key": numbers.key,
        "posted": dict(numbers.posted),
        "counts": [getattr(numbers, name) for name in _COUNTS],
        "first": _time(numbers.first),
        "last": _time(numbers.last),
        "play": _microseconds(numbers.play),
        "penetration_sum": numbers.penetration_sum,
        "wagers": wagers,
        "units": units,
        "sections": numbers.sections,
        "last_start": {t: s.isoformat() for t, s in numbers._last_start.items()},  # noqa: SLF001
        "last_length": {t: _microseconds(g) for t, g in numbers._last_length.items()},  # noqa: SLF001
    }


def _numbers_from(data: dict[str, Any]) -> Numbers:
    numbers = Numbers(dict(data["key"]), dict(data["posted"]))
    counts = data["counts"]
    if len(counts) != len(_COUNTS):
        raise ValueError(f"{len(counts)} counts where {len(_COUNTS)} are saved")
    for name, value in zip(_COUNTS, counts, strict=True):
        setattr(numbers, name, int(value))
    numbers.first = _time_from(data["first"])
    numbers.last = _time_from(data["last"])
    numbers.play = timedelta(microseconds=int(data["play"]))
    numbers.penetration_sum = float(data["penetration_sum"])
    units = {name: _unit(name, tuple(map(tuple, v))) for name, v in data["units"].items()}
    for wager, settlements, handle, won, house, without, counted in data["wagers"]:
        kept = WagerNumbers(str(wager), settlements, handle, won, house, Counter(), without)
        for name, stake, times in counted:
            kept.units[units[name], int(stake)] = int(times)
        numbers.wagers[kept.wager] = kept
    numbers.sections = {k: list(v) for k, v in data["sections"].items()}
    numbers._last_start = {  # noqa: SLF001 - the running pace, saved whole
        t: datetime.fromisoformat(s) for t, s in data["last_start"].items()
    }
    numbers._last_length = {  # noqa: SLF001
        t: timedelta(microseconds=int(g)) for t, g in data["last_length"].items()
    }
    return numbers


@functools.cache
def _unit(name: str, values: tuple[tuple[str, str], ...]) -> UnitDistribution:
    """One object for each distribution, however many tables restore it."""
    return UnitDistribution(name, tuple((Fraction(v), Fraction(p)) for v, p in values))


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _time_from(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _microseconds(span: timedelta) -> int:
    return (span.days * 86_400 + span.seconds) * 1_000_000 + span.microseconds
