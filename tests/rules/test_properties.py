"""Properties of the round engine over random tables, shoes, wagers and legal play.

Each example builds a random table, then plays a few rounds from seeded shoes with
`rules.player` (random legal play or basic strategy), injecting illegal events and the odd
VoidRound, and records every event with its outputs and the public view after it. The
recorded run is then checked against the properties the daemon relies on:

(i)   every wager the daemon settles is settled exactly once per round, voids included;
(ii)  no payout exceeds its paytable line, and result, odds and winnings agree;
(iii) settlement order: `order` counts 1, 2, 3... within a phase; 20PB and optional bonus
      wagers go from the highest seat down (13:69F-2.24(d), 26.6(d)2), the 2.24(e) pairs
      after the others; a Triple Attack bust is collected right after its card (36.5(g));
      no 20PB settlement before the hole card is dealt;
(iv)  neither the public view nor any output shows the hole card before it is revealed, or
      a burned card, ever (card objects are tracked by identity);
(v)   replaying the accepted events through a fresh engine gives the same outputs;
(vi)  a rejected event raises an EventError and changes nothing; the round still ends.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.cards import QUEEN_OF_HEARTS, Card, DeckKind, Rank, Suit
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.errors import (
    ActionRejected,
    CardRejected,
    EventError,
    MalformedEvent,
    RoundStateError,
    WagerRejected,
)
from rules.events import (
    DealCard,
    PlaceWager,
    PlayerAction,
    Shuffle,
    TableEvent,
    VoidRound,
    WithdrawWager,
    event_from_mapping,
    event_to_mapping,
)
from rules.games import ATTACK_WAGERS, GAMES, Action, Game, Step, WagerKind
from rules.hands import hand_value
from rules.money import Odds, format_amount
from rules.outputs import (
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    Phase,
    Result,
    RoundEnded,
    RoundOpened,
    Settlement,
    WagerAccepted,
    WagerWithdrawn,
)
from rules.paytables import BonusOutcome, TwentyPointOutcome
from rules.player import (
    Shoe,
    SimulatedRound,
    basic_strategy_policy,
    random_policy,
    seeded_shoe,
)

if TYPE_CHECKING:
    from rules.outputs import Output
    from rules.player import Policy

MAIN = {game: rules.main_wager for game, rules in GAMES.items()}
EXTRAS = {
    Game.BLACKJACK: (WagerKind.TWENTY_POINT_BONUS,),
    Game.DOUBLE_ATTACK: (WagerKind.OPTIONAL_BONUS, WagerKind.DOUBLE_ATTACK),
    Game.TRIPLE_ATTACK: (WagerKind.SECOND_ATTACK, WagerKind.THIRD_ATTACK),
}
SIMULATION = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- tables
@st.composite
def table_configs(draw: st.DrawFn) -> TableConfig:
    game = draw(st.sampled_from(Game))
    data: dict[str, Any] = {
        "id": "prop",
        "game": game.value,
        "seats": draw(st.integers(1, 7)),
        "deck_kind": draw(st.sampled_from(DeckKind)).value,
        "hole_card_reader": draw(st.booleans()),
        "dealer_hits_soft_17": draw(st.booleans()),
        "burn_cards": draw(st.integers(0, 2)),
        "surrender": draw(st.booleans()),
        "max_hands_per_seat": draw(st.integers(1, 4)),
        "split_aces_one_card": draw(st.booleans()),
        "double_after_split": draw(st.booleans()),
    }
    offers_twenty = game is Game.BLACKJACK and draw(st.sampled_from([True, True, True, False]))
    if game is Game.BLACKJACK:
        data["twenty_point_bonus"] = offers_twenty
        data["paytable"] = draw(st.sampled_from(["A", "B"]))
    data["decks"] = draw(st.integers(2 if offers_twenty else 1, 8))
    kinds = [MAIN[game], *EXTRAS[game]]
    if game is Game.BLACKJACK and not offers_twenty:
        kinds = [WagerKind.BLACKJACK]
    limits: dict[str, dict[str, str]] = {}
    same_attack_limits = draw(st.booleans()) or draw(st.booleans())
    for kind in kinds:
        if game is Game.TRIPLE_ATTACK and same_attack_limits and kind is not MAIN[game]:
            limits[kind.value] = limits[MAIN[game].value]
            continue
        low = draw(st.integers(1, 50)) * 100 + draw(st.sampled_from([0, 0, 50]))
        high = low * draw(st.integers(1, 20))
        limits[kind.value] = {"min": format_amount(low), "max": format_amount(high)}
    data["limits"] = limits
    if offers_twenty and draw(st.booleans()):
        # The floor of 13:69F-2.24(h): low enough that two queen-of-hearts pairs share it.
        minimum = int(limits["twenty_point_bonus"]["min"].replace(".", ""))
        data["queen_of_hearts_aggregate_limit"] = format_amount(max(2_500_000, 1000 * minimum))
    return TableConfig.from_mapping(data)


def random_plan(config: TableConfig, rng: random.Random) -> dict[int, dict[WagerKind, int]]:
    """Random wagers within the limits (and the rules between wagers) on random seats."""
    main = config.rules.main_wager
    plan: dict[int, dict[WagerKind, int]] = {}
    for seat in range(1, config.seats + 1):
        if rng.random() < 0.35 and (plan or seat < config.seats):
            continue
        low, high = config.limits[main].minimum, config.limits[main].maximum
        stake = rng.randint(low, high) if rng.random() < 0.5 else rng.choice([low, high])
        wagers = {main: stake}
        for kind in EXTRAS[config.game]:
            limits = config.limits.get(kind)
            if limits is None or rng.random() < 0.3:
                continue
            rule = config.rules.wager_rule(kind)
            assert rule is not None
            if rule.equal_to_requirement:
                if limits.minimum <= stake <= limits.maximum:
                    wagers[kind] = stake
            elif rule.at_most_requirement:
                if limits.minimum <= stake:
                    wagers[kind] = rng.randint(limits.minimum, min(stake, limits.maximum))
            else:
                wagers[kind] = rng.randint(limits.minimum, limits.maximum)
        plan[seat] = wagers
    return plan


def deal_positions(config: TableConfig, seats_in: int) -> dict[str, list[int]]:
    """Where each initial card of a round sits in the shoe after the burns, by deal order."""
    positions: dict[str, list[int]] = {}
    index = 0
    for step in config.rules.deal_order:
        count = 1 if step in (Step.DEALER_UPCARD, Step.DEALER_HOLE_CARD) else seats_in
        positions[step.value] = list(range(index, index + count))
        index += count
    return positions


def stack(cards: list[Card], start: int, wanted: dict[int, Any]) -> None:
    """Swap cards so that position `start + p` holds a card matching `wanted[p]`, if any do.

    The shoe stays a permutation of a full shoe, so the engine's count of the shoe holds.
    """
    fixed: set[int] = set()
    for offset, matches in sorted(wanted.items()):
        target = start + offset
        for index in range(target, len(cards)):
            if index not in fixed and matches(cards[index]):
                cards[target], cards[index] = cards[index], cards[target]
                fixed.add(target)
                break


def stacked_round(
    config: TableConfig, cards: list[Card], seats_in: int, rng: random.Random
) -> None:
    """Arrange the next round's cards for the rare settlements random shoes hardly reach."""
    where = deal_positions(config, seats_in)
    up, hole = where["dealer_upcard"][0], where["dealer_hole_card"][0]
    wanted: dict[int, Any] = {}
    if config.game is Game.BLACKJACK:
        # 2.24(e): queen-of-hearts pairs against a ten or ace upcard, dealer blackjack or not.
        queens = rng.sample(range(seats_in), k=rng.randint(1, seats_in))
        for seat in queens:
            wanted[where["players_first_card"][seat]] = QUEEN_OF_HEARTS.__eq__
            wanted[where["players_second_card"][seat]] = QUEEN_OF_HEARTS.__eq__
        upcard_ace = rng.random() < 0.5
        wanted[up] = (lambda c: c.points == 1) if upcard_ace else (lambda c: c.points == 10)
        blackjack = rng.random() < 0.6
        if blackjack:
            wanted[hole] = (lambda c: c.points == 10) if upcard_ace else (lambda c: c.points == 1)
    elif config.game is Game.DOUBLE_ATTACK:
        # 26.6(d)3: three eights for the dealer (16, then a third card that busts it).
        third = hole + 1 + rng.randint(0, 3)  # players may draw first
        for position in (up, hole, third):
            wanted[position] = lambda c: c.rank is Rank.EIGHT
    else:
        # 36.5(d): a dealer 22 (two tens, then a two) against standing hands.
        wanted[up] = lambda c: c.points == 10
        wanted[hole] = lambda c: c.points == 10
    stack(cards, 0, wanted)


# ---------------------------------------------------------------------------- a recorded run
@dataclass
class Record:
    event: TableEvent
    outputs: list[Output]
    view: dict[str, Any]


@dataclass
class RoundLog:
    """What the harness knows about one round from the events it fed."""

    records: list[Record] = field(default_factory=list)
    visible: list[Card] = field(default_factory=list)  # cards fed face up (hole once shown)
    hole: Card | None = None
    revealed: bool = False
    voided_on_purpose: bool = False
    round_id: int | None = None


@dataclass
class Run:
    config: TableConfig
    engine: TableEngine
    rng: random.Random
    policy: Policy
    records: list[Record] = field(default_factory=list)
    rounds: list[RoundLog] = field(default_factory=list)
    burned: dict[int, Card] = field(default_factory=dict)  # id -> card object
    shoe: Shoe | None = None
    rejected: int = 0

    # -- feeding the engine ------------------------------------------------------------
    def apply(self, event: TableEvent, log: RoundLog | None) -> list[Output]:
        outputs = self.engine.apply(event)
        view = self.engine.public_view()
        record = Record(event, outputs, view)
        self.records.append(record)
        if isinstance(event, DealCard) and event.burned:
            self.burned[id(event.card)] = event.card
        if log is not None:
            log.records.append(record)
        for out in outputs:
            if log is not None:
                self._track(event, out, log)
            self._check_output(event, out, log)
        self._check_view(view, log)
        return outputs

    def _track(self, event: TableEvent, out: Output, log: RoundLog) -> None:
        if isinstance(out, RoundOpened):
            log.round_id = out.round_id
        elif isinstance(out, CardDealt) and isinstance(event, DealCard):
            if out.card is None:
                log.hole = event.card
            else:
                log.visible.append(event.card)
        elif isinstance(out, HoleCardRevealed):
            assert log.hole is not None
            assert out.card is log.hole
            log.visible.append(log.hole)
            log.revealed = True

    def reject(self, event: TableEvent, expected: type[EventError]) -> None:
        """(vi) an illegal event raises and changes nothing, not even out of view."""
        engine = self.engine
        view = engine.public_view()
        state = (
            copy.deepcopy(engine.round),
            copy.copy(engine.remaining),
            engine.burns_due,
            engine.shoe,
            engine.next_round_id,
        )
        with pytest.raises(expected):
            engine.apply(event)
        assert engine.public_view() == view
        after = (
            engine.round,
            engine.remaining,
            engine.burns_due,
            engine.shoe,
            engine.next_round_id,
        )
        assert after == state
        self.rejected += 1

    # -- illegal events --------------------------------------------------------------
    def inject_illegal(self) -> None:
        engine, config, rng = self.engine, self.config, self.rng
        round_view = engine.public_view()["round"]
        stage = "over" if round_view is None else round_view["stage"]
        main = config.rules.main_wager
        minimum = config.limits[main].minimum
        choices: list[tuple[TableEvent, type[EventError]]] = []
        if config.deck_kind is DeckKind.SPANISH:
            choices.append((DealCard(Card(Rank.TEN, rng.choice(list(Suit)))), CardRejected))
        if stage == "over":
            if engine.burns_due == 0 and self.shoe is not None:
                card = self.shoe.peek()
                if card is not None:
                    choices.append((DealCard(card), CardRejected))  # a card with no round
            choices.append((VoidRound("nothing to void"), RoundStateError))
            choices.append((PlayerAction(Action.STAND, 1), ActionRejected))
        if stage in ("dealing", "playing", "dealer"):
            seat = rng.randint(1, config.seats)
            choices.append((PlaceWager(seat, main, minimum), WagerRejected))  # window closed
            choices.append((WithdrawWager(seat, main), WagerRejected))
            choices.append((Shuffle(), RoundStateError))
        if stage in ("dealing", "dealer"):
            choices.append((PlayerAction(Action.HIT, 1), ActionRejected))
        if stage == "playing":
            turn = round_view["turn"]
            other = rng.choice([s for s in range(1, config.seats + 2) if s != turn["seat"]])
            choices.append((PlayerAction(Action.STAND, other), ActionRejected))  # out of turn
            choices.append(
                (PlayerAction(Action.STAND, turn["seat"], turn["hand"] + 1), ActionRejected)
            )
        if choices:
            self.reject(*rng.choice(choices))

    # -- rounds ---------------------------------------------------------------------
    def shuffle_if_needed(self) -> None:
        size = self.config.decks * self.config.deck_kind.size
        if self.shoe is not None and self.shoe.remaining > size // 2 and self.rng.random() < 0.5:
            return
        self.shoe = Shoe(seeded_shoe(self.config.decks, self.config.deck_kind, self.rng))
        self.apply(Shuffle(), None)
        for _ in range(self.config.burn_cards):
            self.apply(DealCard(next(self.shoe), burned=True), None)

    def play_round(self, *, void_rate: float, illegal_rate: float) -> None:
        rng, config = self.rng, self.config
        plan = random_plan(config, rng)
        self.shuffle_if_needed()
        shoe = self.shoe
        assert shoe is not None
        if shoe.position == config.burn_cards and rng.random() < 0.5:
            seats_in = sum(1 for wagers in plan.values() if config.rules.main_wager in wagers)
            tail = shoe.cards[shoe.position :]
            stacked_round(config, tail, seats_in, rng)
            shoe.cards[shoe.position :] = tail
        log = RoundLog()
        self.rounds.append(log)
        simulated = SimulatedRound(config, shoe, plan, rng, self.policy)
        void_at = rng.randrange(60) if rng.random() < void_rate else None
        step = 0
        while True:
            if rng.random() < illegal_rate:
                self.inject_illegal()
            if step == void_at and self.engine.round_open:
                log.voided_on_purpose = True
                self.apply(VoidRound("misdeal"), log)
            event = simulated.next_event(self.engine.public_view())
            if event is None:
                break
            self.apply(event, log)
            if rng.random() < 0.2:
                self.change_bonus_wager(log)
            step += 1
        if rng.random() < illegal_rate:
            self.inject_illegal()

    def change_bonus_wager(self, log: RoundLog) -> None:
        """A legal change of mind before "No more bets": a bonus wager raised, cut or taken back."""
        round_view = self.engine.public_view()["round"]
        if round_view is None or round_view["stage"] != "betting" or not round_view["betting_open"]:
            return
        bonus = (WagerKind.TWENTY_POINT_BONUS, WagerKind.OPTIONAL_BONUS)
        held = [
            (seat["seat"], kind)
            for seat in round_view["seats"]
            for kind in bonus
            if kind.value in seat["wagers"]
        ]
        if not held:
            return
        seat, kind = self.rng.choice(held)
        if self.rng.random() < 0.4:
            self.apply(WithdrawWager(seat, kind), log)
            return
        limits = self.config.limits[kind]
        round_ = self.engine.round
        assert round_ is not None
        main = round_.seats[seat].wagers[self.config.rules.main_wager]
        high = min(limits.maximum, main) if kind is WagerKind.OPTIONAL_BONUS else limits.maximum
        self.apply(PlaceWager(seat, kind, self.rng.randint(limits.minimum, high)), log)

    # -- (iv) nothing hidden is shown --------------------------------------------------
    def _check_output(self, event: TableEvent, out: Output, log: RoundLog | None) -> None:
        """An output, checked once the outputs before it in its batch are taken into account."""
        hidden = None if log is None or log.revealed else log.hole
        names = (
            out._fields
            if isinstance(out, Settlement)
            else [f.name for f in dataclasses.fields(out)]
        )
        for name in names:
            value = getattr(out, name)
            if isinstance(value, Card):
                assert hidden is None or value is not hidden, out
                assert self.burned.get(id(value)) is not value, out
        shown = _card_texts(out.to_mapping())
        if isinstance(out, CardDealt):
            assert isinstance(event, DealCard)
            face_up = event.card is not hidden
            assert shown == ([str(event.card)] if face_up else []), out
            assert (out.card is None) == (not face_up), out
        elif isinstance(out, HoleCardRevealed):
            assert shown == [str(out.card)]
        else:
            assert shown == [], out

    def _check_view(self, view: dict[str, Any], log: RoundLog | None) -> None:
        view_round = view["round"]
        if log is None or log.round_id is None or view_round is None:
            return
        assert view_round["id"] == log.round_id
        # The view shows exactly the round's face-up cards, so no copy of the hole or a
        # burned card can hide among them.
        assert Counter(_card_texts(view_round)) == Counter(str(c) for c in log.visible)
        dealer = view_round["dealer"]
        assert dealer["hole_revealed"] == log.revealed
        if not log.revealed:
            assert dealer["cards"][1:2] in ([], [None])
            up = [Card.parse(text) for text in dealer["cards"][:1]]
            assert dealer["total"] == (hand_value(up).total if up else None)


def _card_texts(data: Any) -> list[str]:
    """Every string in a JSON-like value that is a card's text."""
    found: list[str] = []
    if isinstance(data, dict):
        for value in data.values():
            found.extend(_card_texts(value))
    elif isinstance(data, list):
        for value in data:
            found.extend(_card_texts(value))
    elif isinstance(data, str) and _is_card(data):
        found.append(data)
    return found


def _is_card(text: str) -> bool:
    rank, suit = text[:-1], text[-1:]
    return suit in "SHDC" and suit != "" and rank in {r.value for r in Rank}


def simulate(
    config: TableConfig,
    seed: int,
    policy: Policy,
    *,
    rounds: int,
    void_rate: float,
    illegal_rate: float,
) -> Run:
    rng = random.Random(seed)  # noqa: S311 - a seeded simulation, not a secret
    run = Run(config, TableEngine(config), rng, policy)
    for _ in range(rounds):
        run.play_round(void_rate=void_rate, illegal_rate=illegal_rate)
    return run


# ---------------------------------------------------------------------------- the checks
def check_run(run: Run) -> None:
    for log in run.rounds:
        check_round_ended(log)
        settlements = [o for r in log.records for o in r.outputs if isinstance(o, Settlement)]
        check_settled_once(run.config, log, settlements)
        check_payouts(run.config, log, settlements)
        check_order(run.config, log, settlements)
    check_replay(run)


def check_round_ended(log: RoundLog) -> None:
    """(vi) every round reaches its end, voided only when a void was injected or due."""
    ended = [o for r in log.records for o in r.outputs if isinstance(o, RoundEnded)]
    assert len(ended) == 1
    assert log.records[-1].outputs[-1] == ended[0]
    if ended[0].voided and not log.voided_on_purpose:
        assert ended[0].reason == "the shoe ran out of cards"


def final_wagers(log: RoundLog) -> dict[int, dict[WagerKind, int]]:
    wagers: dict[int, dict[WagerKind, int]] = {}
    for record in log.records:
        for out in record.outputs:
            if isinstance(out, WagerAccepted):
                wagers.setdefault(out.seat, {})[out.wager] = out.amount
            elif isinstance(out, WagerWithdrawn):
                del wagers[out.seat][out.wager]
    return wagers


def check_settled_once(config: TableConfig, log: RoundLog, settlements: list[Settlement]) -> None:
    """(i) each settled wager exactly once, at its stake; nothing else settled."""
    wagers = final_wagers(log)
    expected: dict[tuple[int, int | None, WagerKind], int] = {}
    seats_view = {s["seat"]: s for s in log.records[-1].view["round"]["seats"]}
    for seat, placed in wagers.items():
        if config.game is Game.TRIPLE_ATTACK:
            hands = seats_view[seat]["hands"] or [{"hand": 1, "doubled": False}]
            for hand in hands:
                for kind in ATTACK_WAGERS:
                    if kind in placed:
                        expected[seat, hand["hand"], kind] = placed[kind] * (
                            2 if hand["doubled"] else 1
                        )
        else:
            for kind in config.rules.settled_kinds:
                if kind in placed and (
                    kind is not WagerKind.TWENTY_POINT_BONUS or config.offers_twenty_point_bonus
                ):
                    expected[seat, None, kind] = placed[kind]
    got = Counter((s.seat, s.hand, s.wager) for s in settlements)
    assert all(count == 1 for count in got.values()), got
    assert set(got) == set(expected), (got, expected)
    for s in settlements:
        assert s.stake == expected[s.seat, s.hand, s.wager], s
        assert s.round_id == log.round_id


def check_payouts(config: TableConfig, log: RoundLog, settlements: list[Settlement]) -> None:
    """(ii) won <= stake x odds of the paytable line; result, odds and winnings agree."""
    limited_total = 0
    for s in settlements:
        if s.result is Result.WIN:
            assert s.odds is not None
            assert s.odds == paytable_line(config, s), s
            assert 0 <= s.won <= s.odds.winnings(s.stake), s
            if s.limited:
                limited_total += s.won
            else:
                assert s.won == s.odds.winnings(s.stake), s
        else:
            assert s.odds is None, s
            assert s.won == 0, s
            assert not s.limited, s
        assert (s.result is Result.VOID) == (s.phase is Phase.VOID), s
    limit = config.queen_of_hearts_aggregate_limit
    if limited_total:
        assert limit is not None
        assert limited_total <= limit
    check_outcomes(log, settlements)


def paytable_line(config: TableConfig, s: Settlement) -> Odds:
    if s.wager is WagerKind.TWENTY_POINT_BONUS:
        return config.paytable[TwentyPointOutcome(s.outcome)]
    if s.wager is WagerKind.OPTIONAL_BONUS:
        return config.paytable[BonusOutcome(s.outcome)]
    return Odds(1)  # 13:69F-36.5(g)


def initial_cards(log: RoundLog) -> tuple[dict[int, list[Card]], list[Card]]:
    """Each seat's first two cards, and every card the dealer drew (hole included)."""
    first_two: dict[int, list[Card]] = {}
    dealer: list[Card] = []
    for record in log.records:
        event = record.event
        for out in record.outputs:
            if not isinstance(out, CardDealt) or not isinstance(event, DealCard):
                continue
            if out.seat is None:
                dealer.append(event.card)
            elif out.hand == 1 and len(dealer) < 2 and len(first_two.get(out.seat, [])) < 2:
                first_two.setdefault(out.seat, []).append(event.card)
    return first_two, dealer


def check_outcomes(log: RoundLog, settlements: list[Settlement]) -> None:
    """An independent look at who won, from the cards the table saw."""
    first_two, dealer = initial_cards(log)
    for s in settlements:
        if s.result is Result.VOID:
            continue
        if s.wager is WagerKind.TWENTY_POINT_BONUS:
            twenty = hand_value(first_two[s.seat]).total == 20
            assert (s.result is Result.WIN) == twenty, (s, first_two[s.seat])
        elif s.wager is WagerKind.OPTIONAL_BONUS:
            busts = len(dealer) >= 3 and hand_value(dealer[:3]).total > 21
            assert (s.result is Result.WIN) == (busts and hand_value(dealer[:2]).total < 17)
        elif s.phase is Phase.PLAYER_BUST:
            assert s.outcome == "player_bust"
            assert s.result is Result.LOSE


def check_order(config: TableConfig, log: RoundLog, settlements: list[Settlement]) -> None:
    """(iii) order within phases, seat order, deferred pairs last, busts at once."""
    by_phase: dict[Phase, list[Settlement]] = {}
    for s in settlements:
        by_phase.setdefault(s.phase, []).append(s)
    for phase, group in by_phase.items():
        assert [s.order for s in group] == list(range(1, len(group) + 1)), phase
        if phase is Phase.VOID or config.game is Game.TRIPLE_ATTACK:
            kind_index = {kind: i for i, kind in enumerate(ATTACK_WAGERS)}
            keys = [(-s.seat, s.hand or 0, kind_index.get(s.wager, 0)) for s in group]
            if phase is not Phase.PLAYER_BUST:
                assert keys == sorted(keys), (phase, keys)
                assert len(set(keys)) == len(keys), (phase, keys)
            continue
        regular = [s.seat for s in group if not s.floorperson]
        deferred = [s.seat for s in group if s.floorperson]
        assert regular == sorted(regular, reverse=True), (phase, regular)
        assert deferred == sorted(deferred, reverse=True), (phase, deferred)
        assert [s.floorperson for s in group] == sorted(s.floorperson for s in group), phase
    hole_dealt = False
    for record in log.records:
        for index, out in enumerate(record.outputs):
            if isinstance(out, CardDealt) and out.seat is None and out.card is None:
                hole_dealt = True
            if isinstance(out, Settlement) and out.wager is WagerKind.TWENTY_POINT_BONUS:
                assert hole_dealt or out.phase is Phase.VOID, out
            if config.game is Game.TRIPLE_ATTACK:
                check_bust_collected_at_once(record, index, out)


def check_bust_collected_at_once(record: Record, index: int, out: Output) -> None:
    """36.5(g): the busting card, the hand's end, then its attack wagers, nothing between."""
    outputs = record.outputs
    if isinstance(out, HandCompleted) and out.seat is not None and out.reason == "bust":
        assert isinstance(record.event, DealCard)
        dealt = outputs[index - 1]
        assert isinstance(dealt, CardDealt)
        assert (dealt.seat, dealt.hand) == (out.seat, out.hand)
        collected = list(
            itertools.takewhile(
                lambda o: isinstance(o, Settlement) and o.phase is Phase.PLAYER_BUST,
                outputs[index + 1 :],
            )
        )
        assert collected, outputs
        assert all(
            isinstance(s, Settlement) and (s.seat, s.hand) == (out.seat, out.hand)
            for s in collected
        )
        kinds = [s.wager for s in collected if isinstance(s, Settlement)]
        assert kinds == [kind for kind in ATTACK_WAGERS if kind in kinds]
    if isinstance(out, Settlement) and out.phase is Phase.PLAYER_BUST:
        before = outputs[:index]
        ends = [o for o in before if isinstance(o, HandCompleted) and o.reason == "bust"]
        assert ends, outputs
        assert (ends[-1].seat, ends[-1].hand) == (out.seat, out.hand), outputs
        between = before[before.index(ends[-1]) + 1 :]
        assert all(isinstance(o, Settlement) and o.phase is Phase.PLAYER_BUST for o in between)


def check_replay(run: Run) -> None:
    """(v) the accepted events, replayed through a fresh engine, give the same outputs."""
    fresh = TableEngine(run.config)
    for record in run.records:
        again = fresh.apply(record.event)
        assert [o.to_mapping() for o in again] == [o.to_mapping() for o in record.outputs]
    assert fresh.public_view() == run.engine.public_view()


# ---------------------------------------------------------------------------- the tests
@SIMULATION
@given(config=table_configs(), seed=st.integers(0, 2**32 - 1))
def test_random_legal_play_keeps_every_property(config: TableConfig, seed: int) -> None:
    """Random legal decisions, illegal events interleaved, sometimes a void: (i)-(vi) hold."""
    run = simulate(config, seed, random_policy, rounds=5, void_rate=0.2, illegal_rate=0.08)
    check_run(run)


@SIMULATION
@given(config=table_configs(), seed=st.integers(0, 2**32 - 1))
def test_basic_strategy_play_keeps_every_property(config: TableConfig, seed: int) -> None:
    """Basic strategy, the way a table plays; no voids, a few illegal events."""
    run = simulate(config, seed, basic_strategy_policy, rounds=5, void_rate=0.0, illegal_rate=0.03)
    check_run(run)
    assert all(
        not o.voided or o.reason == "the shoe ran out of cards"
        for r in run.records
        for o in r.outputs
        if isinstance(o, RoundEnded)
    )


# ---------------------------------------------------------------------------- event records
cards = st.builds(Card, st.sampled_from(Rank), st.sampled_from(Suit))
table_events = st.one_of(
    st.just(Shuffle()),
    st.builds(PlaceWager, st.integers(1, 99), st.sampled_from(WagerKind), st.integers(1, 10**9)),
    st.builds(WithdrawWager, st.integers(1, 99), st.sampled_from(WagerKind)),
    st.builds(DealCard, cards, st.booleans()),
    st.builds(
        PlayerAction,
        st.sampled_from(Action),
        st.integers(1, 99),
        st.none() | st.integers(1, 9),
    ),
    st.builds(VoidRound, st.text()),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
field_names = st.sampled_from(
    ["type", "seat", "kind", "amount", "card", "burned", "action", "hand", "reason"]
)
near_events = st.dictionaries(
    field_names,
    json_values
    | st.sampled_from(["shuffle", "wager", "withdraw", "card", "action", "void"])
    | st.sampled_from(["QH", "10S", "TS", "1X", "25.00", "0", "stand", "blackjack"])
    | st.integers(-2, 3),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(event=table_events)
def test_event_records_round_trip(event: TableEvent) -> None:
    assert event_from_mapping(event_to_mapping(event)) == event


@settings(max_examples=600, deadline=None)
@given(data=json_values | near_events)
def test_any_json_record_parses_or_raises_malformed_event(data: Any) -> None:
    try:
        event = event_from_mapping(data)
    except MalformedEvent:
        return
    assert event_from_mapping(event_to_mapping(event)) == event
