"""Per-table configuration, validated against the regulations with an error for every bad value.

`TableConfig.from_mapping` takes plain data (from a TOML file, a replay log's `table` line or
a test) and either returns a complete, valid configuration or raises `ConfigError` naming
the field. Amounts are dollars as decimal strings (`"25.00"`) or whole-dollar integers.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rules.cards import DeckKind
from rules.errors import ConfigError
from rules.games import GAMES, Game, GameRules, WagerKind
from rules.money import AmountError, Cents, Odds, format_amount, parse_amount
from rules.paytables import (
    OPTIONAL_BONUS_MINIMUM,
    OPTIONAL_BONUS_PAYTABLES,
    TWENTY_POINT_MINIMUM,
    TWENTY_POINT_PAYTABLES,
    BonusOutcome,
    TwentyPointOutcome,
    at_least,
)

if TYPE_CHECKING:
    import enum
    from collections.abc import Iterable

# 13:69F-2.24(i): the 20 point bonus may not be offered beside any of these.
EXCLUSIVE_WITH_TWENTY_POINT_BONUS = {
    "multiple_action": "13:69E-2.18 multiple action blackjack",
    "progressive": "13:69F-2.19 progressive blackjack wager",
    "blackjack_bonus": "13:69F-2.20 blackjack bonus wager",
    "streak": "13:69F-2.22 streak wager",
    "optional_bonus": "13:69F-2.25 optional bonus wager",
    "in_between": "13:69F-2.26 in-between wager",
}
# Other wagers a blackjack table may offer beside the 20 point bonus (recorded, not settled).
OTHER_WAGERS_ALLOWED = {"insurance", "match_the_dealer", "lucky_ladies", "twenty_one_plus_three"}

AGGREGATE_LIMIT_FLOOR: Cents = 2_500_000  # $25,000, 13:69F-2.24(h)
OPTIONAL_BONUS_FLOOR: Cents = 100  # $1.00, 13:69F-26.6(b)
MAX_SEATS = 7
MAX_DECKS = 8
MAX_BURN_CARDS = 10
# The largest amount a table's configuration may name: $10,000,000.00. The highest table
# limits in the trade are in the hundreds of thousands and the 20 point bonus's aggregate
# limit starts at $25,000 (2.24(h)); a larger figure is a typo (a zero too many, a decimal
# point left out), and refusing it keeps every product of an amount and the odds small.
MAX_AMOUNT: Cents = 1_000_000_000
_AMOUNT_TEXT_MAX = len("10000000.00")  # longer text cannot be an amount within MAX_AMOUNT
_SHOWN_TEXT = 40  # a mistake quotes at most this much of a string it refuses
_SHOWN_DIGITS_LIMIT = 10**15
_E = TypeVar("_E", bound="enum.Enum")
# Matched whole (fullmatch): `$` would accept "bj-1\n", a trailing newline that the broker
# then refuses inside every topic name.
_TABLE_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class WagerLimits:
    minimum: Cents
    maximum: Cents


@dataclass(frozen=True, slots=True)
class TableConfig:
    table_id: str
    game: Game
    decks: int
    deck_kind: DeckKind
    seats: int
    limits: Mapping[WagerKind, WagerLimits]
    paytable_name: str
    paytable: Mapping[Any, Odds]  # TwentyPointOutcome or BonusOutcome lines
    hole_card_reader: bool
    dealer_hits_soft_17: bool
    burn_cards: int
    queen_of_hearts_aggregate_limit: Cents | None
    other_wagers: frozenset[str]
    surrender: bool
    max_hands_per_seat: int
    split_aces_one_card: bool
    double_after_split: bool
    mid_shoe_entry: bool  # False: 13:69F-36.5(j), sit out a round and wait for a reshuffle
    offers_twenty_point_bonus: bool = field(default=False)

    @property
    def rules(self) -> GameRules:
        return GAMES[self.game]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> TableConfig:
        return _Parser(data).parse()

    def to_mapping(self) -> dict[str, Any]:
        """The plain-data form `from_mapping` reads back: what a replay log's `table` line holds."""
        out: dict[str, Any] = {
            "id": self.table_id,
            "game": self.game.value,
            "decks": self.decks,
            "deck_kind": self.deck_kind.value,
            "seats": self.seats,
            "limits": {
                kind.value: {
                    "min": format_amount(limit.minimum),
                    "max": format_amount(limit.maximum),
                }
                for kind, limit in self.limits.items()
            },
            "hole_card_reader": self.hole_card_reader,
            "dealer_hits_soft_17": self.dealer_hits_soft_17,
            "burn_cards": self.burn_cards,
            "other_wagers": sorted(self.other_wagers),
            "surrender": self.surrender,
            "max_hands_per_seat": self.max_hands_per_seat,
            "split_aces_one_card": self.split_aces_one_card,
            "double_after_split": self.double_after_split,
            "mid_shoe_entry": self.mid_shoe_entry,
        }
        if self.game is not Game.TRIPLE_ATTACK:
            builtin = _builtin_paytables(self.game)
            out["paytable"] = (
                self.paytable_name
                if self.paytable_name in builtin
                else {line.value: str(odds) for line, odds in self.paytable.items()}
            )
        if self.game is Game.BLACKJACK:
            out["twenty_point_bonus"] = self.offers_twenty_point_bonus
            if self.queen_of_hearts_aggregate_limit is not None:
                out["queen_of_hearts_aggregate_limit"] = format_amount(
                    self.queen_of_hearts_aggregate_limit
                )
        return out


def _builtin_paytables(game: Game) -> Mapping[str, Mapping[Any, Odds]]:
    if game is Game.BLACKJACK:
        return TWENTY_POINT_PAYTABLES
    return OPTIONAL_BONUS_PAYTABLES


# Every setting of a table (docs/configuration.md lists each, and a test keeps it so).
TABLE_KEYS = frozenset(
    {
        "id",
        "game",
        "decks",
        "deck_kind",
        "seats",
        "limits",
        "paytable",
        "hole_card_reader",
        "dealer_hits_soft_17",
        "burn_cards",
        "queen_of_hearts_aggregate_limit",
        "other_wagers",
        "surrender",
        "max_hands_per_seat",
        "split_aces_one_card",
        "double_after_split",
        "mid_shoe_entry",
        "twenty_point_bonus",
    }
)


class _Parser:
    """Reads every field, records every problem, and raises them all at the end.

    A field that is wrong is replaced by its default for the checks that follow, and a check
    that needs a field that was wrong is skipped: one mistake is reported once, never again as
    the cause of another.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.problems: list[ConfigError] = []

    def refuse(self, key: str, message: str) -> None:
        self.problems.append(ConfigError(key, message))

    def parse(self) -> TableConfig:
        data = self.data
        for key in sorted(set(data) - TABLE_KEYS):
            self.refuse(key, unknown_setting(key, TABLE_KEYS))
        table_id = self._table_id()
        game = self._enum("game", Game, None)
        rules = GAMES[game or Game.BLACKJACK]  # defaults only, while `game` is wrong
        decks = self._int("decks", rules.default_decks, 1, MAX_DECKS)
        deck_kind = self._enum("deck_kind", DeckKind, rules.default_deck_kind)
        seats = self._int("seats", MAX_SEATS, 1, MAX_SEATS)
        offers_twenty = self._twenty_point_bonus(game)
        other_wagers = self._other_wagers(game, offers_twenty=offers_twenty)
        if offers_twenty and decks < 2:
            self.refuse("decks", "the 20 point bonus needs at least two decks (13:69F-2.2(a)2)")
        limits = self._limits(None if game is None else rules, offers_twenty=offers_twenty)
        paytable_name, paytable = self._paytable(game)
        aggregate = self._aggregate_limit(game, limits, paytable, offers_twenty=offers_twenty)
        hole_card_reader = self._bool("hole_card_reader", True)
        hits_soft_17 = self._bool("dealer_hits_soft_17", rules.default_hits_soft_17)
        burn_cards = self._int("burn_cards", 1, 0, MAX_BURN_CARDS)
        surrender = self._bool("surrender", game is not Game.TRIPLE_ATTACK)
        max_hands = self._int("max_hands_per_seat", 4, 1, 4)
        split_aces_one_card = self._bool("split_aces_one_card", True)
        double_after_split = self._bool("double_after_split", True)
        mid_shoe_entry = self._bool("mid_shoe_entry", True)
        if self.problems:
            raise ConfigError.of_all(self.problems)
        assert game is not None  # else a problem was recorded
        assert deck_kind is not None
        return TableConfig(
            table_id=table_id,
            game=game,
            decks=decks,
            deck_kind=deck_kind,
            seats=seats,
            limits=limits,
            paytable_name=paytable_name,
            paytable=paytable,
            hole_card_reader=hole_card_reader,
            dealer_hits_soft_17=hits_soft_17,
            burn_cards=burn_cards,
            queen_of_hearts_aggregate_limit=aggregate,
            other_wagers=other_wagers,
            surrender=surrender,
            max_hands_per_seat=max_hands,
            split_aces_one_card=split_aces_one_card,
            double_after_split=double_after_split,
            mid_shoe_entry=mid_shoe_entry,
            offers_twenty_point_bonus=offers_twenty,
        )

    # -- field readers: each records its own problem and answers with a usable stand-in -----
    def _table_id(self) -> str:
        value = self.data.get("id")
        if value is None:
            self.refuse("id", "required: the table's id, e.g. 'bj-1'")
        elif not isinstance(value, str) or not _TABLE_ID.fullmatch(value):
            self.refuse(
                "id",
                "a table id is 1-32 lowercase ASCII letters, digits, '-' or '_', starting "
                f"with a letter or digit; not {describe_value(value)}",
            )
        else:
            return value
        return ""

    def _bool(self, key: str, default: bool) -> bool:  # noqa: FBT001 - a default, not a flag
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.refuse(key, f"must be true or false, not {describe_value(value)}")
            return default
        return value

    def _int(self, key: str, default: int, low: int, high: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.refuse(key, f"must be a whole number, not {describe_value(value)}")
        elif not low <= value <= high:
            self.refuse(key, out_of_range(low, high, value))
        else:
            return value
        return default

    def _enum(self, key: str, kind: type[_E], default: str | None) -> _E | None:
        value = self.data.get(key, default)
        choices = [member.value for member in kind]
        if value is None:
            self.refuse(key, f"required, one of {choices}")
            return None
        try:
            return kind(value)
        except ValueError:
            self.refuse(key, f"must be one of {choices}, not {describe_value(value)}")
        return None if default is None else kind(default)

    def _amount(self, key: str, value: object) -> Cents | None:
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.refuse(
                key,
                "an amount is dollars in quotes such as '25.00' (or whole dollars, 25), "
                f"not {describe_value(value)}",
            )
            return None
        if len(str(value).strip()) > _AMOUNT_TEXT_MAX:
            self.refuse(key, f"at most {format_amount(MAX_AMOUNT)}, not {describe_value(value)}")
            return None
        try:
            cents = parse_amount(value)
        except AmountError as exc:
            self.refuse(key, str(exc))
            return None
        if cents > MAX_AMOUNT:
            self.refuse(key, f"at most {format_amount(MAX_AMOUNT)}, not {describe_value(value)}")
            return None
        return cents

    def _twenty_point_bonus(self, game: Game | None) -> bool:
        if game is Game.BLACKJACK or game is None:
            return self._bool("twenty_point_bonus", True) and game is not None
        if "twenty_point_bonus" in self.data:
            self.refuse("twenty_point_bonus", "the 20 point bonus is a blackjack wager")
        return False

    def _other_wagers(self, game: Game | None, *, offers_twenty: bool) -> frozenset[str]:
        value = self.data.get("other_wagers", [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.refuse(
                "other_wagers",
                f"must be an array of wager names in quotes, not {describe_value(value)}",
            )
            return frozenset()
        if value and game is not Game.BLACKJACK and game is not None:
            self.refuse("other_wagers", "other wagers are listed for blackjack tables only")
            return frozenset()
        known = set(EXCLUSIVE_WITH_TWENTY_POINT_BONUS) | OTHER_WAGERS_ALLOWED
        for name in value:
            if name not in known:
                self.refuse(
                    "other_wagers",
                    f"unknown wager {describe_value(name)}; known: {sorted(known)}",
                )
            elif offers_twenty and name in EXCLUSIVE_WITH_TWENTY_POINT_BONUS:
                self.refuse(
                    "other_wagers",
                    f"the 20 point bonus may not be offered beside the "
                    f"{EXCLUSIVE_WITH_TWENTY_POINT_BONUS[name]} (13:69F-2.24(i))",
                )
        return frozenset(value)

    def _limits(
        self, rules: GameRules | None, *, offers_twenty: bool
    ) -> dict[WagerKind, WagerLimits]:
        """`rules` None: the game is wrong, so only each limit's own shape can be checked."""
        raw = self.data.get("limits")
        if not isinstance(raw, Mapping):
            self.refuse(
                "limits",
                "required: a table of {min, max} per wager kind"
                + ("" if raw is None else f", not {describe_value(raw)}"),
            )
            return {}
        offered: set[WagerKind] | None = None
        if rules is not None:
            offered = {rule.kind for rule in rules.wagers}
            if not offers_twenty:
                offered.discard(WagerKind.TWENTY_POINT_BONUS)
        limits: dict[WagerKind, WagerLimits] = {}
        for name, entry in raw.items():
            kind = self._offered_kind(f"limits.{name}", name, offered)
            limit = self._one_limit(f"limits.{name}", kind, entry)
            if kind is not None and limit is not None:
                limits[kind] = limit
        for kind in sorted(offered or (), key=lambda k: k.value):
            if kind.value not in raw:
                self.refuse(
                    f"limits.{kind.value}",
                    "required: every wager the table offers needs a minimum and a maximum",
                )
        return limits

    def _offered_kind(
        self, where: str, name: str, offered: set[WagerKind] | None
    ) -> WagerKind | None:
        try:
            kind = WagerKind(name)
        except ValueError:
            kind = None
        if offered is None:
            return kind
        names = sorted(kind.value for kind in offered)
        if kind is None:
            self.refuse(where, f"unknown wager kind; this table has {names}")
        elif kind not in offered:
            self.refuse(where, f"not a wager of this table; it has {names}")
        else:
            return kind
        return None

    def _one_limit(self, where: str, kind: WagerKind | None, entry: object) -> WagerLimits | None:
        if not isinstance(entry, Mapping):
            self.refuse(where, f"must be a table with min and max, not {describe_value(entry)}")
            return None
        refused = len(self.problems)
        for key in sorted(set(entry) - {"min", "max"}):
            self.refuse(f"{where}.{key}", "unknown setting; a limit has min and max")
        bounds: dict[str, Cents | None] = {}
        for key in ("min", "max"):
            if key not in entry:
                self.refuse(f"{where}.{key}", "required: the limit's minimum and its maximum")
            bounds[key] = self._amount(f"{where}.{key}", entry[key]) if key in entry else None
        low, high = bounds["min"], bounds["max"]
        if low is not None and low <= 0:
            self.refuse(f"{where}.min", "must be more than zero")
        elif low is not None and kind is WagerKind.OPTIONAL_BONUS and low < OPTIONAL_BONUS_FLOOR:
            self.refuse(f"{where}.min", "must be at least $1.00 (13:69F-26.6(b))")
        elif low is not None and high is not None and high < low:
            self.refuse(
                f"{where}.max",
                f"must not be below the minimum, {format_amount(low)}; not {format_amount(high)}",
            )
        if len(self.problems) > refused or low is None or high is None:
            return None
        return WagerLimits(low, high)

    def _paytable(self, game: Game | None) -> tuple[str, dict[Any, Odds]]:
        if game is None:
            return "", {}
        if game is Game.TRIPLE_ATTACK:
            if "paytable" in self.data:
                self.refuse("paytable", "triple attack pays 1 to 1 (13:69F-36.5(g)); no paytable")
            return "even_money", {}
        builtin = _builtin_paytables(game)
        default = "A" if game is Game.BLACKJACK else "regulation"
        value = self.data.get("paytable", default)
        if isinstance(value, str):
            if value not in builtin:
                self.refuse(
                    "paytable",
                    f"unknown paytable {value[:40]!r}: name one of {sorted(builtin)} "
                    "or give the odds of every line",
                )
                return "", {}
            return value, dict(builtin[value])
        if not isinstance(value, Mapping):
            self.refuse(
                "paytable",
                f"must name a built-in paytable or give odds per line, not {describe_value(value)}",
            )
            return "", {}
        return "custom", self._custom_paytable(game, value)

    def _custom_paytable(self, game: Game, value: Mapping[str, Any]) -> dict[Any, Odds]:
        lines: type[enum.Enum] = TwentyPointOutcome if game is Game.BLACKJACK else BonusOutcome
        minimum: Mapping[Any, Odds] = (
            TWENTY_POINT_MINIMUM if game is Game.BLACKJACK else OPTIONAL_BONUS_MINIMUM
        )
        posted: dict[Any, Odds] = {}
        refused = len(self.problems)
        for name, odds_text in value.items():
            try:
                line = lines(name)
            except ValueError:
                self.refuse(f"paytable.{name}", f"unknown line; lines: {[m.value for m in lines]}")
                continue
            if not isinstance(odds_text, str):
                self.refuse(
                    f"paytable.{name}",
                    f"odds are text such as '25 to 1', not {describe_value(odds_text)}",
                )
                continue
            try:
                posted[line] = Odds.parse(odds_text)
            except ValueError as exc:
                self.refuse(f"paytable.{name}", str(exc))
        for line in lines:
            if line.value not in value:
                self.refuse(f"paytable.{line.value}", "a posted paytable needs every line")
        if len(posted) < len(lines):
            return {}
        for line in at_least(posted, minimum):
            self.refuse(
                f"paytable.{line.value}",
                f"{posted[line]} is below the regulation's {minimum[line]}",
            )
        return {} if len(self.problems) > refused else posted

    def _aggregate_limit(
        self,
        game: Game | None,
        limits: Mapping[WagerKind, WagerLimits],
        paytable: Mapping[Any, Odds],
        *,
        offers_twenty: bool,
    ) -> Cents | None:
        key = "queen_of_hearts_aggregate_limit"
        if key not in self.data:
            return None
        if game is not None and (game is not Game.BLACKJACK or not offers_twenty):
            self.refuse(key, "applies to the 20 point bonus at blackjack only")
            return None
        limit = self._amount(key, self.data[key])
        top = paytable.get(TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK)
        bonus = limits.get(WagerKind.TWENTY_POINT_BONUS)
        if limit is None or top is None or bonus is None:
            return limit  # what it is judged against is wrong, and reported already
        floor = max(AGGREGATE_LIMIT_FLOOR, top.winnings(bonus.minimum))
        if limit < floor:
            self.refuse(
                key,
                f"must be at least {format_amount(floor)}: $25,000 or what one patron betting "
                f"the minimum could win, whichever is greater (13:69F-2.24(h))",
            )
        return limit


def describe_value(value: object, *, show: bool = True) -> str:
    """A value as a mistake names it: its TOML type, and the value itself when it is short.

    `seats = "7"` is refused as "not a string ('7')", so a person sees at once that the
    quotes are the mistake. Arrays and tables are named, never printed: they may be long,
    or nested deeper than a printout can go. `show=False` names the type alone, for
    settings whose value may be a secret typed in the wrong place.

    drivers.transports.errors has the same function for the transports' settings (neither
    layer may import the other); tests/test_describe_value.py holds the two to one answer.
    """
    kind = _kind(value)
    if not show or isinstance(value, list | tuple | dict):
        return kind
    return f"{kind} ({_shown(value)})"


def _kind(value: object) -> str:
    if isinstance(value, dt.date | dt.time):  # a datetime is a date too
        return "a date or time"
    return _KINDS.get(type(value), f"a {type(value).__name__}")


def out_of_range(low: object, high: object, value: int) -> str:
    """A number of the right type outside its range: the number alone, as typed (a whole
    number is not called "not a whole number")."""
    if -_SHOWN_DIGITS_LIMIT < value < _SHOWN_DIGITS_LIMIT:
        return f"must be from {low} to {high}, not {value}"
    return f"must be from {low} to {high}, not a number of more than 15 digits"


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and not -_SHOWN_DIGITS_LIMIT < value < _SHOWN_DIGITS_LIMIT:
        return "more than 15 digits"  # and str() refuses ints past 4,300 digits
    if isinstance(value, str):
        return repr(value if len(value) <= _SHOWN_TEXT else value[: _SHOWN_TEXT - 3] + "...")
    return str(value)


_KINDS: dict[type, str] = {
    bool: "a boolean",
    int: "a whole number",
    float: "a decimal number",
    str: "a string",
    list: "an array",
    tuple: "an array",
    dict: "a table",
}


def unknown_setting(key: str, known: Iterable[str]) -> str:
    """The message for a key nobody reads: the likeliest meant one, or them all."""
    known = sorted(known)
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"unknown setting; did you mean {close[0]!r}?"
    return f"unknown setting; settings: {', '.join(known)}"
