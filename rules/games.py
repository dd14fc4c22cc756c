"""The three games as data: wager kinds, deal orders, wager windows, allowed actions.

Deal orders and windows come from docs/procedures.md (their sources are secondary, so they
are data a table's configuration could replace, not branches in the engine). Each deal order
is a sequence of steps; a wager window is the stretch of the deal before a given step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Game(enum.Enum):
    BLACKJACK = "blackjack"
    DOUBLE_ATTACK = "double_attack"
    TRIPLE_ATTACK = "triple_attack"


class WagerKind(enum.Enum):
    # The main wager of each game: it decides who is dealt in.
    BLACKJACK = "blackjack"  # 13:69F-2.3(a)
    INITIAL = "initial"  # double attack's initial wager (13:69F-26)
    FIRST_ATTACK = "first_attack"  # 13:69F-36.5
    # Wagers the game adds.
    TWENTY_POINT_BONUS = "twenty_point_bonus"  # 13:69F-2.24
    DOUBLE_ATTACK = "double_attack"  # the "double attack" raise after the upcard
    OPTIONAL_BONUS = "optional_bonus"  # 13:69F-26.6, the dealer-bust bonus
    SECOND_ATTACK = "second_attack"  # 13:69F-36.5
    THIRD_ATTACK = "third_attack"  # 13:69F-36.5

    # Identity hash, computed in C (see cards.Suit): wager kinds key every stakes dict.
    __hash__ = object.__hash__


ATTACK_WAGERS = (WagerKind.FIRST_ATTACK, WagerKind.SECOND_ATTACK, WagerKind.THIRD_ATTACK)


class Action(enum.Enum):
    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"


class Step(enum.Enum):
    """One step of an initial deal."""

    PLAYERS_FIRST_CARD = "players_first_card"  # one card face up to each seat in, seat 1 up
    PLAYERS_SECOND_CARD = "players_second_card"
    DEALER_UPCARD = "dealer_upcard"  # face up
    DEALER_HOLE_CARD = "dealer_hole_card"  # face down: the hole card (13:69F-2B.1)


@dataclass(frozen=True, slots=True)
class WagerRule:
    """When and how a wager kind may be made.

    The window opens when the deal step `opens_after` is complete (`None`: when the round
    opens) and closes at the first card of step `closes_at`. Inside it the wager may be made,
    changed or withdrawn; outside it, never (13:69F-36.5(f), 2.24(c), 26.6(b)).
    """

    kind: WagerKind
    closes_at: Step
    opens_after: Step | None = None
    requires: WagerKind | None = None  # the wager a seat must hold first
    at_most_requirement: bool = False  # no more than the required wager (26.6(b)1)
    equal_to_requirement: bool = False  # exactly the required wager (triple attack)
    citation: str = ""


@dataclass(frozen=True, slots=True)
class GameRules:
    game: Game
    main_wager: WagerKind
    deal_order: tuple[Step, ...]
    wagers: tuple[WagerRule, ...]
    actions: frozenset[Action]
    six_card_hand_wins: bool  # 13:69F-36.5(b)
    dealer_draws_for_bonus: bool  # 26.6: a third card to a two-card total under 17
    default_hits_soft_17: bool
    default_deck_kind: str
    default_decks: int

    def wager_rule(self, kind: WagerKind) -> WagerRule | None:
        for rule in self.wagers:
            if rule.kind is kind:
                return rule
        return None

    @property
    def settled_kinds(self) -> tuple[WagerKind, ...]:
        """The regulated wagers this daemon settles at this game."""
        return _SETTLED[self.game]


_US_DEAL = (
    Step.PLAYERS_FIRST_CARD,
    Step.DEALER_UPCARD,
    Step.PLAYERS_SECOND_CARD,
    Step.DEALER_HOLE_CARD,
)

_SETTLED = {
    Game.BLACKJACK: (WagerKind.TWENTY_POINT_BONUS,),
    Game.DOUBLE_ATTACK: (WagerKind.OPTIONAL_BONUS,),
    Game.TRIPLE_ATTACK: ATTACK_WAGERS,
}

GAMES: dict[Game, GameRules] = {
    Game.BLACKJACK: GameRules(
        game=Game.BLACKJACK,
        main_wager=WagerKind.BLACKJACK,
        # 13:69F-2.6(e): players, dealer up, players, dealer hole.
        deal_order=_US_DEAL,
        wagers=(
            WagerRule(WagerKind.BLACKJACK, Step.PLAYERS_FIRST_CARD, citation="13:69F-2.3(a)"),
            WagerRule(
                WagerKind.TWENTY_POINT_BONUS,
                Step.PLAYERS_FIRST_CARD,
                requires=WagerKind.BLACKJACK,
                citation="13:69F-2.24(c)",
            ),
        ),
        actions=frozenset(Action),
        six_card_hand_wins=False,
        dealer_draws_for_bonus=False,
        default_hits_soft_17=False,
        default_deck_kind="standard",
        default_decks=6,
    ),
    Game.DOUBLE_ATTACK: GameRules(
        game=Game.DOUBLE_ATTACK,
        main_wager=WagerKind.INITIAL,
        # Reversed deal: the upcard first, then the double attack window, then the players.
        deal_order=(
            Step.DEALER_UPCARD,
            Step.PLAYERS_FIRST_CARD,
            Step.PLAYERS_SECOND_CARD,
            Step.DEALER_HOLE_CARD,
        ),
        wagers=(
            WagerRule(WagerKind.INITIAL, Step.DEALER_UPCARD, citation="13:69F-26"),
            WagerRule(
                WagerKind.OPTIONAL_BONUS,
                Step.DEALER_UPCARD,
                requires=WagerKind.INITIAL,
                at_most_requirement=True,
                citation="13:69F-26.6(b)",
            ),
            WagerRule(
                WagerKind.DOUBLE_ATTACK,
                Step.PLAYERS_FIRST_CARD,
                opens_after=Step.DEALER_UPCARD,
                requires=WagerKind.INITIAL,
                at_most_requirement=True,
                citation="docs/procedures.md: up to the initial wager, after the upcard",
            ),
        ),
        actions=frozenset(Action),
        six_card_hand_wins=False,
        dealer_draws_for_bonus=True,
        default_hits_soft_17=False,
        default_deck_kind="spanish",
        default_decks=8,
    ),
    Game.TRIPLE_ATTACK: GameRules(
        game=Game.TRIPLE_ATTACK,
        main_wager=WagerKind.FIRST_ATTACK,
        deal_order=_US_DEAL,
        wagers=(
            WagerRule(WagerKind.FIRST_ATTACK, Step.PLAYERS_FIRST_CARD, citation="13:69F-36.5"),
            WagerRule(
                WagerKind.SECOND_ATTACK,
                Step.DEALER_UPCARD,
                opens_after=Step.PLAYERS_FIRST_CARD,
                requires=WagerKind.FIRST_ATTACK,
                equal_to_requirement=True,
                citation="13:69F-36.5(f); docs/procedures.md",
            ),
            WagerRule(
                WagerKind.THIRD_ATTACK,
                Step.PLAYERS_SECOND_CARD,
                opens_after=Step.DEALER_UPCARD,
                requires=WagerKind.FIRST_ATTACK,
                equal_to_requirement=True,
                citation="13:69F-36.5(f); docs/procedures.md",
            ),
        ),
        # 36.5 says nothing of surrender, so no surrendered hand has a settlement to apply.
        actions=frozenset({Action.HIT, Action.STAND, Action.DOUBLE, Action.SPLIT}),
        six_card_hand_wins=True,
        dealer_draws_for_bonus=False,
        default_hits_soft_17=True,
        default_deck_kind="spanish",
        default_decks=8,
    ),
}
