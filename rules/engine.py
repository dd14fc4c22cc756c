"""The round engine: table events in, outputs out, one event at a time.

`TableEngine.apply` either applies an event completely and returns what it caused, in the
order it happens at the table, or raises a `RulesError` and changes nothing: every handler
validates before it mutates. The engine has no clock, no I/O and no randomness, so replaying
the same events always gives the same outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, assert_never

from rules import double_attack, triple_attack, twenty_point
from rules.cards import shoe_composition
from rules.errors import ActionRejected, CardRejected, RoundStateError, WagerRejected
from rules.events import (
    CloseBetting,
    DealCard,
    PlaceWager,
    PlayerAction,
    Shuffle,
    VoidRound,
    WithdrawWager,
)
from rules.games import ATTACK_WAGERS, Action, Game, Step, WagerKind, WagerRule
from rules.hands import hand_value, is_blackjack
from rules.money import format_amount
from rules.outputs import (
    BettingClosed,
    CardBurned,
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    Phase,
    PlayerActed,
    Result,
    RoundEnded,
    RoundOpened,
    Settlement,
    ShoeShuffled,
    WagerAccepted,
    WagerWithdrawn,
)
from rules.table import Hand, HandEnd, Round, RoundStage, Seat

if TYPE_CHECKING:
    from collections import Counter

    from rules.cards import Card
    from rules.config import TableConfig
    from rules.events import TableEvent
    from rules.outputs import Output

_LIVE_STAGES = (RoundStage.DEALING, RoundStage.PLAYING, RoundStage.DEALER)


@dataclass(frozen=True, slots=True)
class Awaiting:
    """What the table must be told before its next card can be placed (`TableEngine.awaiting`).

    `round`: no round is open (wagers open one, then "No more bets"); `close_betting`: a
    wager window is open; `decision`: the hand in play (`seat`, `hand`) has no decision
    declared that takes a card. A card the engine is given meanwhile is still placed as the
    deal has always placed it (a round log needs no declaration); a table that reads its
    cards from a shoe keeps them until what is awaited is declared (docs/rules.md).
    """

    declaration: Literal["round", "close_betting", "decision"]
    seat: int | None = None
    hand: int | None = None

    def to_mapping(self) -> dict[str, Any]:
        return {"declaration": self.declaration, "seat": self.seat, "hand": self.hand}


_AWAITING_ROUND = Awaiting("round")
_AWAITING_CLOSE = Awaiting("close_betting")


class TableEngine:
    """One table's rounds, shoe after shoe."""

    def __init__(self, config: TableConfig, *, next_round_id: int = 1) -> None:
        self.config = config
        self.rules = config.rules
        self.shoe = 0  # shuffles seen
        self.remaining: Counter[Card] | None = None  # unknown until the first shuffle
        self.burns_due = 0
        # Cards the shoe burned while no burn was due and before any card of a round: a
        # shuffle the table has not heard of yet (an ENQ shoe does not announce its shuffles;
        # the console's request can arrive after the burn). The shuffle, when it comes,
        # counts them as its burns and as gone from its shoe.
        self.burned_unannounced: list[Card] = []
        self.round: Round | None = None
        self.next_round_id = next_round_id
        # Looked up for every card, wager and hand: computed once from the game's data.
        self._ranks = frozenset(config.deck_kind.ranks)
        self._collects_busts = config.game is Game.TRIPLE_ATTACK
        order = self.rules.deal_order
        self._offered: dict[WagerKind, WagerRule] = {
            rule.kind: rule
            for rule in self.rules.wagers
            if rule.kind is not WagerKind.TWENTY_POINT_BONUS or config.offers_twenty_point_bonus
        }
        self._windows = {
            rule.kind: (
                0 if rule.opens_after is None else order.index(rule.opens_after) + 1,
                order.index(rule.closes_at),
            )
            for rule in self.rules.wagers
        }
        self._dependents = {
            kind: tuple(rule for rule in self.rules.wagers if rule.requires is kind)
            for kind in WagerKind
        }
        # Deal steps after which a wager window opens (Double and Triple Attack).
        self._reopens_after = frozenset(
            rule.opens_after for rule in self.rules.wagers if rule.opens_after is not None
        )
        self._hand_wagers = frozenset(
            ATTACK_WAGERS if config.game is Game.TRIPLE_ATTACK else (self.rules.main_wager,)
        )
        # 13:69F-36.5(j): seats that sat out a round of this shoe, barred until a reshuffle
        # when the table does not allow mid-shoe entry.
        self.barred_seats: set[int] = set()

    # ------------------------------------------------------------------ entry point
    def apply(self, event: TableEvent) -> list[Output]:  # noqa: PLR0911 - a dispatch, one return per kind of event
        # isinstance in order of frequency: a round is mostly cards and wagers, and this runs
        # for every event (a match statement's class patterns cost a fifth of a wager).
        if isinstance(event, DealCard):
            return self._card(event.card, burned=event.burned)
        if isinstance(event, PlaceWager):
            return self._wager(event.seat, event.kind, event.amount)
        if isinstance(event, PlayerAction):
            return self._action(event.action, event.seat, event.hand)
        if isinstance(event, WithdrawWager):
            return self._withdraw(event.seat, event.kind)
        if isinstance(event, CloseBetting):
            return self._close_betting()
        if isinstance(event, Shuffle):
            return self._shuffle()
        if isinstance(event, VoidRound):
            return self._void(event.reason)
        assert_never(event)

    def reconfigured(self, config: TableConfig) -> TableEngine:
        """This table under new settings, between rounds: the shoe goes on as it is.

        The shuffle count, the burn still due, the seats barred until the next shuffle
        (13:69F-36.5(j)) and the round numbering carry over; so does what is left in the
        shoe, unless the new settings describe a different shoe (decks or deck kind), whose
        composition is then unknown until its shuffle.
        """
        if self.round_open:
            raise RoundStateError("mid_round", "the table's settings change only between rounds")
        fresh = TableEngine(config, next_round_id=self.next_round_id)
        fresh.shoe, fresh.burns_due = self.shoe, self.burns_due
        fresh.burned_unannounced = list(self.burned_unannounced)
        fresh.barred_seats = set(self.barred_seats)
        if config.decks == self.config.decks and config.deck_kind is self.config.deck_kind:
            fresh.remaining = self.remaining
        return fresh

    @property
    def round_id(self) -> int | None:
        """The round in progress or last played; None before the first."""
        return None if self.round is None else self.round.round_id

    @property
    def round_open(self) -> bool:
        return self.round is not None and self.round.stage is not RoundStage.OVER

    def awaiting(self) -> Awaiting | None:
        """What must be declared before the next card is placed; None when it can be now.

        A burn due between rounds takes the next card as it comes; otherwise the deal waits
        for a round, for "No more bets" on the window open (13:69F-2.24(d)), and, in play,
        for the decision of the hand in play that takes a card (a hit or a double). A split
        hand's second card and the dealer's cards need no decision.
        """
        round_ = self.round
        stage = None if round_ is None else round_.stage
        if self.burns_due > 0 and stage not in _LIVE_STAGES:
            return None
        if round_ is None or stage is RoundStage.OVER:
            return _AWAITING_ROUND
        if round_.betting_open:
            return _AWAITING_CLOSE
        if stage is RoundStage.PLAYING and round_.turn is not None:
            seat, hand = self._in_play(round_)
            if len(hand.cards) >= 2 and not (hand.doubled or hand.drawing):
                return Awaiting("decision", seat.number, hand.number)
        return None

    # ------------------------------------------------------------------ shoe
    def _shuffle(self) -> list[Output]:
        if self.round is not None and self.round.stage in _LIVE_STAGES:
            raise RoundStateError("mid_round", "the shoe cannot be shuffled during a round")
        self.shoe += 1
        self.remaining = shoe_composition(self.config.decks, self.config.deck_kind)
        early, self.burned_unannounced = self.burned_unannounced, []
        for card in early:  # burned from this shoe before its shuffle was announced
            self._consume(card)
        self.burns_due = max(0, self.config.burn_cards - len(early))
        self.barred_seats.clear()
        return [ShoeShuffled(self.shoe)]

    def burned_unread(self) -> None:
        """The shoe burned a card it could not read. The burn happened, face unseen: between
        rounds a burn due is no longer due, or the round's first card would be taken for it
        and every card after would move; during a round (a burn comes before the deal, never
        in it) nothing is due. Its face unknown, the shoe's count cannot take it out."""
        round_ = self.round
        if (round_ is None or round_.stage not in _LIVE_STAGES) and self.burns_due > 0:
            self.burns_due -= 1

    def burned_unheard(self, count: int) -> None:
        """The dealer burned `count` cards while no one heard (the table was away): they went
        to the rack, not to the round, so that many burns are no longer due. `RoundStateError`
        for a count outside 0 to the burns due, changing nothing."""
        if not 0 <= count <= self.burns_due:
            raise RoundStateError(
                "burns_not_due",
                f"{count} burn cards dealt unheard; from 0 to the burns due ({self.burns_due})",
            )
        self.burns_due -= count

    def check_card(self, card: Card, *, next_shoe: bool = False) -> None:
        """`CardRejected` unless this table's shoe can hold `card` now (its deck kind, and
        what is left since the shuffle; `next_shoe`: the deck kind only, for a card of a
        shoe not yet shuffled); never names the card: it may be the hole card."""
        if card.rank not in self._ranks:
            raise CardRejected(
                "not_in_deck_kind", f"a {self.config.deck_kind.value} deck has no card of that rank"
            )
        if not next_shoe and self.remaining is not None and self.remaining[card] <= 0:
            raise CardRejected(
                "not_in_shoe",
                f"the {self.config.decks}-deck shoe holds no more of that card since the shuffle",
            )

    # ------------------------------------------------------------------ wagers
    def _wager(self, seat: int, kind: WagerKind, amount: int) -> list[Output]:
        rule = self._offered_rule(seat, kind)
        round_ = self.round if self.round_open else None
        self._check_window(rule, round_, seat)
        if kind is self.rules.main_wager and seat in self.barred_seats:
            raise WagerRejected(
                seat,
                kind.value,
                "sat_out",
                "this seat sat out a round of this shoe and may wager again after the "
                "reshuffle (13:69F-36.5(j))",
            )
        holder = round_.seats.get(seat) if round_ else None
        wagers = holder.wagers if holder else {}
        self._check_amount(rule, seat, amount, wagers)
        self._check_dependents(seat, kind, wagers, amount)

        out: list[Output] = []
        if round_ is None:
            round_ = self._open_round()
            out.append(RoundOpened(round_.round_id))
        target = round_.seat(seat)
        target.wagers[kind] = amount
        if target.hands and kind in self._hand_wagers:
            target.hands[0].stakes[kind] = amount
        out.append(WagerAccepted(round_.round_id, seat, kind, amount))
        return out

    def _check_amount(
        self, rule: WagerRule, seat: int, amount: int, wagers: dict[WagerKind, int]
    ) -> None:
        """The posted limits, and the wager this one rides on (26.6(b), 36.5(f))."""
        kind = rule.kind
        limits = self.config.limits[kind]
        if amount < limits.minimum:
            raise WagerRejected(
                seat,
                kind.value,
                "below_minimum",
                f"below the table minimum of {format_amount(limits.minimum)}",
            )
        if amount > limits.maximum:
            raise WagerRejected(
                seat,
                kind.value,
                "above_maximum",
                f"above the posted maximum of {format_amount(limits.maximum)}",
            )
        if rule.requires is not None:
            required = wagers.get(rule.requires)
            if required is None:
                raise WagerRejected(
                    seat,
                    kind.value,
                    "requires_wager",
                    f"needs a {rule.requires.value} wager first ({rule.citation})",
                )
            if rule.at_most_requirement and amount > required:
                raise WagerRejected(
                    seat,
                    kind.value,
                    "above_required_wager",
                    f"may not exceed the {rule.requires.value} wager of "
                    f"{format_amount(required)} ({rule.citation})",
                )
            if rule.equal_to_requirement and amount != required:
                raise WagerRejected(
                    seat,
                    kind.value,
                    "must_equal_required_wager",
                    f"must equal the {rule.requires.value} wager of "
                    f"{format_amount(required)} ({rule.citation})",
                )

    def _withdraw(self, seat: int, kind: WagerKind) -> list[Output]:
        rule = self._offered_rule(seat, kind)
        round_ = self.round if self.round_open else None
        holder = round_.seats.get(seat) if round_ else None
        if round_ is None or holder is None or kind not in holder.wagers:
            raise WagerRejected(
                seat, kind.value, "no_such_wager", "there is no such wager to withdraw"
            )
        if round_.stage is not RoundStage.BETTING:
            # 13:69F-36.5(f), (h): the subchapter lets the second and third attack wagers be
            # made after the first card, never withdrawn; no game's text lets any wager go.
            raise WagerRejected(
                seat,
                kind.value,
                "window_closed",
                f"no wager may be withdrawn after the first card of the round ({rule.citation})",
            )
        self._check_window(rule, round_, seat)
        self._check_dependents(seat, kind, holder.wagers, None)
        del holder.wagers[kind]
        if holder.hands:
            holder.hands[0].stakes.pop(kind, None)
        return [WagerWithdrawn(round_.round_id, seat, kind)]

    def _offered_rule(self, seat: int, kind: WagerKind) -> WagerRule:
        if not 1 <= seat <= self.config.seats:
            raise WagerRejected(
                seat, kind.value, "no_such_seat", f"this table has seats 1 to {self.config.seats}"
            )
        rule = self._offered.get(kind)
        if rule is None:
            raise WagerRejected(
                seat,
                kind.value,
                "not_offered",
                f"not a wager of this {self.config.game.value} table",
            )
        return rule

    def _check_window(self, rule: WagerRule, round_: Round | None, seat: int) -> None:
        opens, closes = self._windows[rule.kind]
        if round_ is None or round_.stage is RoundStage.BETTING:
            completed, between_steps = 0, True
        elif round_.stage is RoundStage.DEALING:
            completed, between_steps = round_.step, round_.step_cursor == 0
        else:
            completed, between_steps = len(self.rules.deal_order), True
        within = between_steps and opens <= completed <= closes
        if within and round_ is not None and not round_.betting_open:
            # 13:69F-2.24(d): once the dealer has called "No more bets" the window is shut,
            # even before its first card has come.
            raise WagerRejected(
                seat,
                rule.kind.value,
                "betting_closed",
                f'betting is closed: the dealer has called "No more bets" '
                f"(13:69F-2.24(d); {rule.citation})",
            )
        if not within:
            when = (
                "before the first card of the round"
                if rule.opens_after is None
                else f"after the {rule.opens_after.value.replace('_', ' ')} and before the "
                f"{rule.closes_at.value.replace('_', ' ')}"
            )
            raise WagerRejected(
                seat,
                rule.kind.value,
                "window_closed",
                f"may be made, changed or withdrawn only {when} ({rule.citation})",
            )

    def _check_dependents(
        self, seat: int, kind: WagerKind, wagers: dict[WagerKind, int], new_amount: int | None
    ) -> None:
        """Changing or withdrawing a wager may not leave a wager that depends on it invalid."""
        for rule in self._dependents[kind]:
            if rule.kind not in wagers:
                continue
            dependent = wagers[rule.kind]
            broken = (
                new_amount is None
                or (rule.at_most_requirement and dependent > new_amount)
                or (rule.equal_to_requirement and dependent != new_amount)
            )
            if broken:
                raise WagerRejected(
                    seat,
                    kind.value,
                    "dependent_wager",
                    f"the {rule.kind.value} wager of {format_amount(dependent)} depends on it; "
                    "change or withdraw that first",
                )

    def _close_betting(self) -> list[Output]:
        """13:69F-2.24(d): "No more bets", then the deal (or its next step) goes on."""
        round_ = self.round if self.round_open else None
        if round_ is None:
            raise RoundStateError("no_round", "no round is open: a round opens with a wager")
        if not round_.betting_open:
            raise RoundStateError(
                "betting_not_open", "no wager window is open: betting was closed already"
            )
        main = self.rules.main_wager
        if round_.stage is RoundStage.BETTING and not any(
            main in seat.wagers for seat in round_.seats.values()
        ):
            raise RoundStateError(
                "no_wager", f"no seat holds a {main.value} wager: there is no one to deal to"
            )
        round_.betting_open = False
        return [BettingClosed(round_.round_id, self.rules.deal_order[round_.step].value)]

    def _open_round(self) -> Round:
        self.round = Round(self.next_round_id)
        self.next_round_id += 1
        return self.round

    # ------------------------------------------------------------------ cards
    def _card(self, card: Card, *, burned: bool) -> list[Output]:
        round_ = self.round
        if round_ is not None and round_.stage is RoundStage.OVER:
            round_ = None
        live = round_ is not None and round_.stage in _LIVE_STAGES
        # A burn with none due, between rounds, is the next shoe's, come before its shuffle
        # was announced: what the old shoe gave says nothing of it, only its rank does.
        self.check_card(card, next_shoe=burned and self.burns_due == 0 and not live)
        if burned or (self.burns_due > 0 and not live):
            if live:
                raise CardRejected("burn_mid_round", "a burned card in the middle of a round")
            self._consume(card)
            if self.burns_due > 0:
                self.burns_due -= 1
            else:
                self.burned_unannounced.append(card)
            return [CardBurned(self.shoe)]
        if round_ is None:
            raise CardRejected(
                "no_round", "no round is open: a card cannot belong to a round without wagers"
            )
        if round_.stage is RoundStage.BETTING:
            dealt_in = tuple(
                n for n in sorted(round_.seats) if self.rules.main_wager in round_.seats[n].wagers
            )
            if not dealt_in:
                raise CardRejected(
                    "no_round", "no seat holds a wager: a card cannot belong to the round"
                )
            self._consume(card)
            self._start_deal(round_, dealt_in)
        else:
            self._consume(card)
        round_.betting_open = False  # a round log without "No more bets": the card says it
        self.burned_unannounced.clear()  # a round's card: those burns were the old shoe's
        if round_.stage is RoundStage.DEALING:
            return self._deal_initial(round_, card)
        if round_.stage is RoundStage.PLAYING:
            return self._deal_to_player(round_, card)
        return self._deal_to_dealer(round_, card)

    def _consume(self, card: Card) -> None:
        remaining = self.remaining
        if remaining is not None:
            remaining[card] -= 1

    def _start_deal(self, round_: Round, dealt_in: tuple[int, ...]) -> None:
        round_.stage = RoundStage.DEALING
        round_.dealt_in = dealt_in
        for number in dealt_in:
            seat = round_.seats[number]
            stakes = {k: v for k, v in seat.wagers.items() if k in self._hand_wagers}
            seat.hands = [Hand(1, stakes=stakes)]

    def _deal_initial(self, round_: Round, card: Card) -> list[Output]:
        order = self.rules.deal_order
        step = order[round_.step]
        out: list[Output] = []
        if step in (Step.PLAYERS_FIRST_CARD, Step.PLAYERS_SECOND_CARD):
            number = round_.dealt_in[round_.step_cursor]
            round_.seats[number].hands[0].add(card)
            out.append(CardDealt(round_.round_id, number, 1, card))
            round_.step_cursor += 1
            if round_.step_cursor == len(round_.dealt_in):
                round_.step, round_.step_cursor = round_.step + 1, 0
        else:
            round_.dealer.append(card)
            face_up = step is Step.DEALER_UPCARD
            out.append(CardDealt(round_.round_id, None, None, card if face_up else None))
            round_.step += 1
        if round_.step == len(order):
            out.extend(self._after_initial_deal(round_))
        elif round_.step_cursor == 0 and step in self._reopens_after:
            round_.betting_open = True  # the next window (36.5(f); the double attack wager)
        return out

    def _after_initial_deal(self, round_: Round) -> list[Output]:
        out: list[Output] = []
        if self.config.offers_twenty_point_bonus:
            out.extend(twenty_point.settle_after_initial_deal(round_, self.config))
        upcard = round_.upcard
        assert upcard is not None
        peek = self.config.hole_card_reader and upcard.points in (1, 10)
        if peek and is_blackjack(round_.dealer):
            # 13:69F-2.6(j): the reader shows the dealer's blackjack; the hand is revealed and
            # the blackjack wagers are settled at once, before any player acts.
            out.append(self._reveal(round_))
            out.extend(
                twenty_point.settle_deferred_pairs(
                    round_,
                    self.config,
                    dealer_blackjack=True,
                    phase=Phase.BLACKJACK_WAGER,
                    citation="13:69F-2.24(e)1.i",
                )
            )
            if double_attack.bonus_up(round_):
                # 26.6(d): settled before any other wager is paid or collected.
                out.extend(double_attack.settle_on_two_cards(round_))
            for seat, hand in round_.hands_in_order():
                out.append(
                    self._end_hand(
                        round_,
                        seat,
                        hand,
                        HandEnd.BLACKJACK if hand.natural else HandEnd.DEALER_BLACKJACK,
                    )
                )
            out.extend(self._finish_round(round_))
            return out
        if peek and round_.deferred_queens:
            out.extend(
                twenty_point.settle_deferred_pairs(
                    round_,
                    self.config,
                    dealer_blackjack=False,
                    phase=Phase.INITIAL_DEAL,
                    citation="13:69F-2.24(e)1.ii",
                )
            )
        round_.stage = RoundStage.PLAYING
        for seat, hand in round_.hands_in_order():
            if hand.value.total == 21:
                out.append(self._end_hand(round_, seat, hand, HandEnd.BLACKJACK))
        out.extend(self._next_turn(round_))
        return out

    def _deal_to_player(self, round_: Round, card: Card) -> list[Output]:
        assert round_.turn is not None
        seat, hand = self._in_play(round_)
        hand.add(card)
        hand.drawing = False
        out: list[Output] = [CardDealt(round_.round_id, seat.number, hand.number, card)]
        value = hand.value
        end: HandEnd | None = None
        if value.total > 21:
            end = HandEnd.BUST
        elif value.total == 21:
            end = HandEnd.TWENTY_ONE
        elif hand.doubled:
            end = HandEnd.DOUBLED
        elif self.rules.six_card_hand_wins and len(hand.cards) >= 6:
            end = HandEnd.SIX_CARDS
        elif hand.split_aces and self.config.split_aces_one_card and len(hand.cards) == 2:
            end = HandEnd.SPLIT_ACE
        if end is not None:
            out.append(self._end_hand(round_, seat, hand, end))
            if end is HandEnd.BUST and self._collects_busts:
                # 36.5(g): a busted hand's attack wagers are collected at once.
                out.extend(triple_attack.settle_bust(round_, seat.number, hand))
            out.extend(self._next_turn(round_))
        return out

    def _end_hand(self, round_: Round, seat: Seat, hand: Hand, end: HandEnd) -> Output:
        hand.ended = end
        return HandCompleted(round_.round_id, seat.number, hand.number, hand.value.total, end.value)

    def _next_turn(self, round_: Round) -> list[Output]:
        """Play moves to the next unfinished hand, seat 1 up; after the last, the dealer."""
        for seat, hand in round_.hands_in_order():
            if hand.ended is None:
                round_.turn = (seat.number, hand.number - 1)
                return []
        round_.turn = None
        return self._dealer_turn(round_)

    def _in_play(self, round_: Round) -> tuple[Seat, Hand]:
        assert round_.turn is not None
        number, index = round_.turn
        seat = round_.seats[number]
        return seat, seat.hands[index]

    # ------------------------------------------------------------------ actions
    def _action(self, action: Action, seat_number: int, hand_number: int | None) -> list[Output]:
        name = action.value
        round_ = self.round if self.round_open else None
        if round_ is None or round_.stage is not RoundStage.PLAYING or round_.turn is None:
            raise ActionRejected(name, "not_in_play", "no player hand is in play")
        if action not in self.rules.actions or (
            action is Action.SURRENDER and not self.config.surrender
        ):
            raise ActionRejected(
                name, "not_offered", f"not offered at this {self.config.game.value} table"
            )
        seat, hand = self._in_play(round_)
        if seat_number != seat.number or (hand_number is not None and hand_number != hand.number):
            raise ActionRejected(
                name,
                "out_of_turn",
                f"seat {seat.number} hand {hand.number} is in play, not seat {seat_number}",
            )
        self._check_action(action, seat, hand)
        out: list[Output] = [PlayerActed(round_.round_id, seat.number, hand.number, name)]
        hand.acted = True
        hand.drawing = action is Action.HIT  # the next card of the hand is its hit's
        if action is Action.STAND:
            out.append(self._end_hand(round_, seat, hand, HandEnd.STAND))
            out.extend(self._next_turn(round_))
        elif action is Action.SURRENDER:
            out.append(self._end_hand(round_, seat, hand, HandEnd.SURRENDER))
            out.extend(self._next_turn(round_))
        elif action is Action.DOUBLE:
            # 36.5: doubling matches every attack wager placed.
            hand.doubled = True
            hand.stakes = {kind: stake * 2 for kind, stake in hand.stakes.items()}
        elif action is Action.SPLIT:
            self._split(seat, hand)
        return out

    def _check_action(self, action: Action, seat: Seat, hand: Hand) -> None:
        name = action.value
        two_cards = len(hand.cards) == 2
        if hand.drawing:
            # A hit declared is dealt before anything else is decided for the hand: its card
            # may be on its way (held, unread) when a later decision arrives.
            raise ActionRejected(
                name, "hit_pending", "a hit is declared: its card comes before any other decision"
            )
        if hand.doubled:
            # A doubled hand receives exactly one more card and no further decision
            # (36.5: doubling matches every attack wager once; a second double would not).
            raise ActionRejected(name, "doubled", "a doubled hand takes exactly one more card")
        if action is Action.STAND and len(hand.cards) < 2:
            raise ActionRejected(name, "needs_a_card", "a split hand takes its second card first")
        if action is Action.DOUBLE:
            if not two_cards:
                raise ActionRejected(
                    name, "two_cards_only", "a hand may double on its first two cards only"
                )
            if hand.from_split and not self.config.double_after_split:
                raise ActionRejected(
                    name, "no_double_after_split", "this table does not double after a split"
                )
        if action is Action.SPLIT:
            self._check_split(seat, hand)
        if action is Action.SURRENDER and (not two_cards or hand.from_split or hand.acted):
            raise ActionRejected(
                name, "too_late", "surrender is the first decision on the first two cards only"
            )

    def _check_split(self, seat: Seat, hand: Hand) -> None:
        name = Action.SPLIT.value
        if len(hand.cards) != 2 or hand.cards[0].points != hand.cards[1].points:
            raise ActionRejected(
                name, "not_a_pair", "only two cards of the same value may be split"
            )
        if len(seat.hands) >= self.config.max_hands_per_seat:
            raise ActionRejected(
                name, "too_many_hands", f"at most {self.config.max_hands_per_seat} hands per seat"
            )
        if hand.split_aces and self.config.split_aces_one_card:
            raise ActionRejected(name, "resplit_aces", "split aces are not split again")

    def _split(self, seat: Seat, hand: Hand) -> None:
        aces = hand.cards[0].points == 1
        second = Hand(
            0, cards=[hand.split_off()], stakes=dict(hand.stakes), from_split=True, split_aces=aces
        )
        hand.from_split, hand.split_aces = True, aces
        index = seat.hands.index(hand)
        seat.hands.insert(index + 1, second)
        for number, each in enumerate(seat.hands, start=1):
            each.number = number

    # ------------------------------------------------------------------ dealer
    def _reveal(self, round_: Round) -> HoleCardRevealed:
        round_.hole_revealed = True
        hole = round_.hole_card
        assert hole is not None
        return HoleCardRevealed(round_.round_id, hole, round_.dealer_value.total)

    def _dealer_turn(self, round_: Round) -> list[Output]:
        round_.stage = RoundStage.DEALER
        out: list[Output] = [self._reveal(round_)]
        if round_.deferred_queens:
            # 2.24(e)2 (no reader): paid when the player's blackjack wager is settled, which
            # is when the hole card decides it. With a reader they were settled already.
            out.extend(
                twenty_point.settle_deferred_pairs(
                    round_,
                    self.config,
                    dealer_blackjack=is_blackjack(round_.dealer),
                    phase=Phase.BLACKJACK_WAGER,
                    citation="13:69F-2.24(e)2",
                )
            )
        if double_attack.bonus_up(round_) and round_.dealer_value.total >= 17:
            out.extend(double_attack.settle_on_two_cards(round_))
        if not self._dealer_needs_card(round_):
            out.extend(self._finish_round(round_))
        return out

    def _dealer_rule_draws(self, round_: Round) -> bool:
        """Whether the table's dealer rule (stand on 17, or hit soft 17) says draw."""
        value = round_.dealer_value
        return value.total < 17 or (
            value.total == 17 and value.soft and self.config.dealer_hits_soft_17
        )

    def _dealer_needs_card(self, round_: Round) -> bool:
        if not self._dealer_rule_draws(round_):
            return False
        if any(self._hand_needs_dealer(hand) for _, hand in round_.hands_in_order()):
            return True
        # Double Attack: the dealer always draws a third card to a two-card total under 17
        # while an optional bonus wager is up (docs/procedures.md; 26.6(d)).
        return (
            self.rules.dealer_draws_for_bonus
            and len(round_.dealer) == 2
            and double_attack.bonus_up(round_)
        )

    def _hand_needs_dealer(self, hand: Hand) -> bool:
        if hand.ended in (HandEnd.BUST, HandEnd.SURRENDER):
            return False
        if self.config.game is Game.TRIPLE_ATTACK:
            return triple_attack.hand_needs_dealer(hand)
        return not hand.natural

    def _deal_to_dealer(self, round_: Round, card: Card) -> list[Output]:
        round_.dealer.append(card)
        out: list[Output] = [CardDealt(round_.round_id, None, None, card)]
        if len(round_.dealer) == 3 and double_attack.bonus_up(round_):
            out.extend(double_attack.settle_on_third_card(round_, self.config))
        if not self._dealer_needs_card(round_):
            out.extend(self._finish_round(round_))
        return out

    def _finish_round(self, round_: Round) -> list[Output]:
        value = round_.dealer_value
        if is_blackjack(round_.dealer):
            reason = "blackjack"
        elif value.total > 21:
            reason = "bust"
        elif self._dealer_rule_draws(round_):
            reason = "not_needed"  # no hand needed the dealer's total: the dealer stops short
        else:
            reason = "stand"
        out: list[Output] = [HandCompleted(round_.round_id, None, None, value.total, reason)]
        if self.config.game is Game.TRIPLE_ATTACK:
            out.extend(triple_attack.settle_round_end(round_))
        round_.stage = RoundStage.OVER
        round_.turn = None
        if not self.config.mid_shoe_entry:
            sat_out = set(range(1, self.config.seats + 1)) - set(round_.dealt_in)
            self.barred_seats |= sat_out
        out.append(RoundEnded(round_.round_id))
        return out

    # ------------------------------------------------------------------ void
    def _void(self, reason: str) -> list[Output]:
        round_ = self.round if self.round_open else None
        if round_ is None:
            raise RoundStateError("no_round", "no round is open to void")
        out: list[Output] = []
        for number in sorted(round_.seats, reverse=True):
            out.extend(self._void_seat(round_, round_.seats[number]))
        round_.stage = RoundStage.OVER
        round_.turn = None
        out.append(RoundEnded(round_.round_id, voided=True, reason=reason))
        return out

    def _void_seat(self, round_: Round, seat: Seat) -> list[Output]:
        """Return every wager of the seat this daemon settles and has not settled yet."""
        out: list[Output] = []
        if self.config.game is Game.TRIPLE_ATTACK:
            # Before the deal the attack wagers sit on the seat; after it, on its hands.
            hands = seat.hands or [Hand(1, stakes=dict(seat.wagers))]
            for hand in hands:
                if hand.settled:
                    continue
                hand.settled = True
                out.extend(
                    self._void_settlement(round_, seat.number, hand.number, kind, hand.stakes[kind])
                    for kind in ATTACK_WAGERS
                    if kind in hand.stakes
                )
            return out
        for kind in self.rules.settled_kinds:
            if kind in seat.wagers and kind not in seat.settled:
                seat.settled.add(kind)
                out.append(
                    self._void_settlement(round_, seat.number, None, kind, seat.wagers[kind])
                )
        return out

    def _void_settlement(
        self, round_: Round, seat: int, hand: int | None, kind: WagerKind, stake: int
    ) -> Settlement:
        return round_.settle(
            seat,
            kind,
            stake,
            outcome="round_voided",
            phase=Phase.VOID,
            citation="void round: wagers returned",
            result=Result.VOID,
            hand=hand,
        )

    # ------------------------------------------------------------------ public view
    def public_view(self) -> dict[str, Any]:
        """What anyone at the table can see: never a face-down card, never a burned one."""
        round_ = self.round
        view: dict[str, Any] = {
            "table": self.config.table_id,
            "game": self.config.game.value,
            "shoe": self.shoe,
            "round": None,
        }
        if round_ is None:
            return view
        dealer_cards: list[str | None] = []
        for index, card in enumerate(round_.dealer):
            hidden = index == 1 and not round_.hole_revealed
            dealer_cards.append(None if hidden else str(card))
        visible = [c for i, c in enumerate(round_.dealer) if i != 1 or round_.hole_revealed]
        view["round"] = {
            "id": round_.round_id,
            "stage": round_.stage.value,
            "betting_open": round_.betting_open and round_.stage is not RoundStage.OVER,
            "turn": None
            if round_.turn is None
            else {"seat": round_.turn[0], "hand": round_.turn[1] + 1},
            "dealer": {
                "cards": dealer_cards,
                "total": hand_value(visible).total if visible else None,
                "hole_revealed": round_.hole_revealed,
            },
            "seats": [
                {
                    "seat": number,
                    "wagers": {k.value: format_amount(v) for k, v in seat.wagers.items()},
                    "hands": [
                        {
                            "hand": hand.number,
                            "cards": [str(card) for card in hand.cards],
                            "total": hand.value.total,
                            "soft": hand.value.soft,
                            "doubled": hand.doubled,
                            "drawing": hand.drawing,
                            "ended": None if hand.ended is None else hand.ended.value,
                        }
                        for hand in seat.hands
                    ],
                }
                for number, seat in sorted(round_.seats.items())
            ],
        }
        return view
