"""Per-table configuration, validated against the regulations with an error for every bad value.

`TableConfig.from_mapping` takes plain data (from a TOML file, a replay log's `table` line or
a test) and either returns a complete, valid configuration or raises `ConfigError` naming
the field. Amounts are dollars as decimal strings (`"25.00"`) or whole-dollar integers.
"""

from __future__ import annotations

import re
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
    from collections.abc import Mapping

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
_E = TypeVar("_E", bound="enum.Enum")
_TABLE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


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


_KNOWN_KEYS = {
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


class _Parser:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def parse(self) -> TableConfig:
        data = self.data
        unknown = sorted(set(data) - _KNOWN_KEYS)
        if unknown:
            raise ConfigError(unknown[0], f"unknown setting; known ones: {sorted(_KNOWN_KEYS)}")
        table_id = self._str("id")
        if not _TABLE_ID.match(table_id):
            raise ConfigError(
                "id", "a table id is 1-32 lowercase ASCII letters, digits, '-' or '_'"
            )
        game = self._enum("game", Game, None)
        rules = GAMES[game]
        decks = self._int("decks", rules.default_decks, 1, MAX_DECKS)
        deck_kind = self._enum("deck_kind", DeckKind, rules.default_deck_kind)
        seats = self._int("seats", MAX_SEATS, 1, MAX_SEATS)
        offers_twenty = game is Game.BLACKJACK and self._bool("twenty_point_bonus", True)
        if game is not Game.BLACKJACK and "twenty_point_bonus" in data:
            raise ConfigError("twenty_point_bonus", "the 20 point bonus is a blackjack wager")
        other_wagers = self._other_wagers(game, offers_twenty=offers_twenty)
        if offers_twenty and decks < 2:
            raise ConfigError(
                "decks", "the 20 point bonus needs at least two decks (13:69F-2.2(a)2)"
            )
        limits = self._limits(rules, offers_twenty=offers_twenty)
        paytable_name, paytable = self._paytable(game)
        aggregate = self._aggregate_limit(game, limits, paytable, offers_twenty=offers_twenty)
        return TableConfig(
            table_id=table_id,
            game=game,
            decks=decks,
            deck_kind=deck_kind,
            seats=seats,
            limits=limits,
            paytable_name=paytable_name,
            paytable=paytable,
            hole_card_reader=self._bool("hole_card_reader", True),
            dealer_hits_soft_17=self._bool("dealer_hits_soft_17", rules.default_hits_soft_17),
            burn_cards=self._int("burn_cards", 1, 0, 10),
            queen_of_hearts_aggregate_limit=aggregate,
            other_wagers=other_wagers,
            surrender=self._bool("surrender", game is not Game.TRIPLE_ATTACK),
            max_hands_per_seat=self._int("max_hands_per_seat", 4, 1, 4),
            split_aces_one_card=self._bool("split_aces_one_card", True),
            double_after_split=self._bool("double_after_split", True),
            mid_shoe_entry=self._bool("mid_shoe_entry", True),
            offers_twenty_point_bonus=offers_twenty,
        )

    # -- field readers: each names its field in the error ------------------------------
    def _str(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str) or not value:
            raise ConfigError(key, "required, a non-empty string")
        return value

    def _bool(self, key: str, default: bool) -> bool:  # noqa: FBT001 - a default, not a flag
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise ConfigError(key, f"must be true or false, not {value!r}")
        return value

    def _int(self, key: str, default: int, low: int, high: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, f"must be a whole number, not {value!r}")
        if not low <= value <= high:
            raise ConfigError(key, f"must be between {low} and {high}, not {value}")
        return value

    def _enum(self, key: str, kind: type[_E], default: str | None) -> _E:
        value = self.data.get(key, default)
        choices = [member.value for member in kind]
        if value is None:
            raise ConfigError(key, f"required, one of {choices}")
        try:
            return kind(value)
        except ValueError:
            raise ConfigError(key, f"must be one of {choices}, not {value!r}") from None

    def _amount(self, key: str, value: object) -> Cents:
        try:
            return parse_amount(value)  # type: ignore[arg-type]  # parse_amount checks types
        except AmountError as exc:
            raise ConfigError(key, str(exc)) from None

    def _other_wagers(self, game: Game, *, offers_twenty: bool) -> frozenset[str]:
        value = self.data.get("other_wagers", [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError("other_wagers", "must be a list of wager names")
        known = set(EXCLUSIVE_WITH_TWENTY_POINT_BONUS) | OTHER_WAGERS_ALLOWED
        for name in value:
            if name not in known:
                raise ConfigError("other_wagers", f"unknown wager {name!r}; known: {sorted(known)}")
            if offers_twenty and name in EXCLUSIVE_WITH_TWENTY_POINT_BONUS:
                raise ConfigError(
                    "other_wagers",
                    f"the 20 point bonus may not be offered beside the "
                    f"{EXCLUSIVE_WITH_TWENTY_POINT_BONUS[name]} (13:69F-2.24(i))",
                )
        if value and game is not Game.BLACKJACK:
            raise ConfigError("other_wagers", "other wagers are listed for blackjack tables only")
        return frozenset(value)

    def _limits(self, rules: GameRules, *, offers_twenty: bool) -> dict[WagerKind, WagerLimits]:
        raw = self.data.get("limits")
        if not isinstance(raw, dict):
            raise ConfigError("limits", "required: a table of {min, max} per wager kind")
        offered = {rule.kind for rule in rules.wagers}
        if not offers_twenty:
            offered.discard(WagerKind.TWENTY_POINT_BONUS)
        limits: dict[WagerKind, WagerLimits] = {}
        for name, entry in raw.items():
            kind = self._offered_kind(f"limits.{name}", name, offered)
            limits[kind] = self._one_limit(f"limits.{name}", kind, entry)
        missing = sorted(kind.value for kind in offered - set(limits))
        if missing:
            raise ConfigError(
                f"limits.{missing[0]}",
                "required: every wager the table offers needs a minimum and a maximum",
            )
        return limits

    def _offered_kind(self, where: str, name: str, offered: set[WagerKind]) -> WagerKind:
        names = sorted(kind.value for kind in offered)
        try:
            kind = WagerKind(name)
        except ValueError:
            raise ConfigError(where, f"unknown wager kind; this table has {names}") from None
        if kind not in offered:
            raise ConfigError(where, f"not a wager of this table; it has {names}")
        return kind

    def _one_limit(self, where: str, kind: WagerKind, entry: object) -> WagerLimits:
        if not isinstance(entry, dict) or set(entry) != {"min", "max"}:
            raise ConfigError(where, "must hold exactly 'min' and 'max'")
        low = self._amount(f"{where}.min", entry["min"])
        high = self._amount(f"{where}.max", entry["max"])
        if low <= 0:
            raise ConfigError(f"{where}.min", "must be more than zero")
        if high < low:
            raise ConfigError(f"{where}.max", "must not be below the minimum")
        if kind is WagerKind.OPTIONAL_BONUS and low < OPTIONAL_BONUS_FLOOR:
            raise ConfigError(f"{where}.min", "must be at least $1.00 (13:69F-26.6(b))")
        return WagerLimits(low, high)

    def _paytable(self, game: Game) -> tuple[str, dict[Any, Odds]]:
        if game is Game.TRIPLE_ATTACK:
            if "paytable" in self.data:
                raise ConfigError(
                    "paytable", "triple attack pays 1 to 1 (13:69F-36.5(g)); no paytable"
                )
            return "even_money", {}
        builtin = _builtin_paytables(game)
        default = "A" if game is Game.BLACKJACK else "regulation"
        value = self.data.get("paytable", default)
        if isinstance(value, str):
            if value not in builtin:
                raise ConfigError(
                    "paytable",
                    f"unknown paytable {value!r}: name one of {sorted(builtin)} "
                    "or give the odds of every line",
                )
            return value, dict(builtin[value])
        if not isinstance(value, dict):
            raise ConfigError("paytable", "must name a built-in paytable or give odds per line")
        return "custom", self._custom_paytable(game, value)

    def _custom_paytable(self, game: Game, value: Mapping[str, Any]) -> dict[Any, Odds]:
        lines: type[enum.Enum] = TwentyPointOutcome if game is Game.BLACKJACK else BonusOutcome
        minimum: Mapping[Any, Odds] = (
            TWENTY_POINT_MINIMUM if game is Game.BLACKJACK else OPTIONAL_BONUS_MINIMUM
        )
        posted: dict[Any, Odds] = {}
        for name, odds_text in value.items():
            try:
                line = lines(name)
            except ValueError:
                raise ConfigError(
                    f"paytable.{name}", f"unknown line; lines: {[m.value for m in lines]}"
                ) from None
            if not isinstance(odds_text, str):
                raise ConfigError(f"paytable.{name}", "odds are text such as '25 to 1'")
            try:
                posted[line] = Odds.parse(odds_text)
            except ValueError as exc:
                raise ConfigError(f"paytable.{name}", str(exc)) from None
        missing = [line.value for line in lines if line not in posted]
        if missing:
            raise ConfigError(f"paytable.{missing[0]}", "a posted paytable needs every line")
        short = at_least(posted, minimum)
        if short:
            line = short[0]
            raise ConfigError(
                f"paytable.{line.value}",
                f"{posted[line]} is below the regulation's {minimum[line]}",
            )
        return posted

    def _aggregate_limit(
        self,
        game: Game,
        limits: Mapping[WagerKind, WagerLimits],
        paytable: Mapping[Any, Odds],
        *,
        offers_twenty: bool,
    ) -> Cents | None:
        key = "queen_of_hearts_aggregate_limit"
        if key not in self.data:
            return None
        if game is not Game.BLACKJACK or not offers_twenty:
            raise ConfigError(key, "applies to the 20 point bonus at blackjack only")
        limit = self._amount(key, self.data[key])
        top = paytable[TwentyPointOutcome.QUEEN_OF_HEARTS_PAIR_DEALER_BLACKJACK]
        one_patron = top.winnings(limits[WagerKind.TWENTY_POINT_BONUS].minimum)
        floor = max(AGGREGATE_LIMIT_FLOOR, one_patron)
        if limit < floor:
            raise ConfigError(
                key,
                f"must be at least {format_amount(floor)}: $25,000 or what one patron betting "
                f"the minimum could win, whichever is greater (13:69F-2.24(h))",
            )
        return limit
