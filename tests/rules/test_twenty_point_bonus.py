"""The 20 point bonus wager, N.J.A.C. 13:69F-2.24, end to end through the round engine.

Every expected amount is the stake times the regulation's odds, worked out by hand in the
test (e.g. $7.35 at 19 to 1 is $139.65); none is copied from the engine's output.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from rules.errors import ActionRejected, WagerRejected
from rules.events import Shuffle
from rules.games import WagerKind
from rules.money import Odds
from rules.outputs import (
    CardBurned,
    CardDealt,
    HandCompleted,
    HoleCardRevealed,
    NoticeKind,
    Phase,
    Result,
    RoundEnded,
    Settlement,
    WagerAccepted,
)
from rules.paytables import TwentyPointOutcome, classify_twenty
from tests.rules.tables import (
    action,
    card,
    feed,
    initial_deal,
    make_engine,
    notices,
    of_type,
    play,
    settlements,
    wager,
    withdraw,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rules.engine import TableEngine
    from rules.outputs import Output

TPB = "twenty_point_bonus"
T = TwentyPointOutcome
WIN, LOSE = Result.WIN, Result.LOSE
INITIAL, BJ_WAGER = Phase.INITIAL_DEAL, Phase.BLACKJACK_WAGER

# A settlement's fields that matter: seat, outcome, result, odds, stake, won, phase, order,
# floorperson, limited.
Row = tuple[int, str, Result, Odds | None, int, int, Phase, int, bool, bool]


def row(s: Settlement) -> Row:
    assert s.wager.value == TPB
    assert s.hand is None
    assert "13:69F-2.24" in s.citation
    return (
        s.seat,
        s.outcome,
        s.result,
        s.odds,
        s.stake,
        s.won,
        s.phase,
        s.order,
        s.floorperson,
        s.limited,
    )


def top_line(seat: int, stake: int, won: int, order: int, *, limited: bool) -> Row:
    """A queen of hearts pair and dealer blackjack win, settled with the blackjack wager."""
    line = "queen_of_hearts_pair_dealer_blackjack"
    return (seat, line, WIN, Odds(1000), stake, won, BJ_WAGER, order, True, limited)


def rows(outputs: Iterable[Output]) -> list[Row]:
    return [row(s) for s in settlements(outputs, TPB)]


def bet(
    engine: TableEngine, twenty: Mapping[int, str], *, blackjack_only: Iterable[int] = ()
) -> list[Output]:
    """A $25 blackjack wager at every seat named, and the 20PB amounts of `twenty`."""
    events = []
    for seat in sorted(set(twenty) | set(blackjack_only)):
        events.append(wager(seat, "blackjack", "25"))
        if seat in twenty:
            events.append(wager(seat, TPB, twenty[seat]))
    return feed(engine, events)


def deal(engine: TableEngine, hands: Mapping[int, str], upcard: str, hole: str) -> list[Output]:
    return feed(engine, initial_deal("blackjack", hands, upcard=upcard, hole=hole))


def index_of(outputs: list[Output], wanted: object) -> int:
    return next(i for i, item in enumerate(outputs) if item == wanted)


# ============================================================================ 2.24(f), (g)
# $7.35 stake; upcard 7C (no blackjack possible: 2.24(e) does not apply).
STAKE = 735
PAYLINES = [
    # paytable, cards, outcome, odds, won (= 735 x odds, by hand)
    ("A", "QH QH", "queen_of_hearts_pair", 125, 91_875),
    ("B", "QH QH", "queen_of_hearts_pair", 200, 147_000),
    ("A", "KD KD", "matched_20", 19, 13_965),
    ("B", "KD KD", "matched_20", 25, 18_375),
    ("A", "10S 10S", "matched_20", 19, 13_965),
    ("A", "KD JD", "suited_20", 9, 6_615),
    ("B", "KD JD", "suited_20", 10, 7_350),
    ("A", "QH KH", "suited_20", 9, 6_615),
    ("A", "AC 9C", "suited_20", 9, 6_615),  # ace + nine is a point count of 20
    ("B", "9C AC", "suited_20", 10, 7_350),
    ("A", "KD KH", "any_20", 4, 2_940),
    ("B", "KD JH", "any_20", 4, 2_940),
    ("A", "QH QD", "any_20", 4, 2_940),  # same colour, different suits: any 20
    ("A", "AS 9H", "any_20", 4, 2_940),
    ("B", "9H AS", "any_20", 4, 2_940),
]


@pytest.mark.parametrize(("paytable", "hand", "outcome", "odds", "won"), PAYLINES)
def test_2_24_f_g_paytable_lines_paid_to_the_cent(
    paytable: str, hand: str, outcome: str, odds: int, won: int
) -> None:
    engine = make_engine("blackjack", paytable=paytable)
    bet(engine, {3: "7.35"})
    out = deal(engine, {3: hand}, upcard="7C", hole="9D")
    assert rows(out) == [(3, outcome, WIN, Odds(odds), STAKE, won, INITIAL, 1, False, False)]
    assert notices(out) == []


@pytest.mark.parametrize(
    "hand",
    ["KD 9D", "AS KS", "KS AS", "AS AD", "5H 5H", "QH 9H", "2C 3C", "10S 9S", "QH 8H"],
)
@pytest.mark.parametrize("upcard", ["7C", "KC"])
def test_2_24_f_hands_without_a_point_count_of_20_lose(hand: str, upcard: str) -> None:
    engine = make_engine("blackjack", hole_card_reader=False)
    bet(engine, {2: "5"})
    out = deal(engine, {2: hand}, upcard=upcard, hole="9D")
    assert notices(out) == []
    assert rows(out) == [(2, "no_20", LOSE, None, 500, 0, INITIAL, 1, False, False)]


@pytest.mark.parametrize("paytable", ["A", "B"])
def test_2_24_f_queen_of_hearts_pair_and_dealer_blackjack_pays_1000_to_1(paytable: str) -> None:
    """$7.35 x 1,000 = $7,350.00, on either paytable (2.24(e)1.i: reader, dealer blackjack)."""
    engine = make_engine("blackjack", paytable=paytable)
    bet(engine, {4: "7.35"})
    out = deal(engine, {4: "QH QH"}, upcard="AS", hole="KS")
    assert rows(out) == [
        top_line(4, 735, 735_000, 1, limited=False),
    ]


def test_2_24_f_a_posted_paytable_paying_more_is_what_is_paid() -> None:
    """Posted: matched 20 at 30 to 1, any 20 at 9 to 2; the rest as paytable A.

    $7.35 x 30 = $220.50; $7.35 x 9/2 = $33.075, paid $33.07 (never a fraction of a cent);
    $7.35 x 9 = $66.15 for the suited 20 at A's odds.
    """
    posted = {
        "queen_of_hearts_pair_dealer_blackjack": "1000 to 1",
        "queen_of_hearts_pair": "125 to 1",
        "matched_20": "30 to 1",
        "suited_20": "9 to 1",
        "any_20": "9 to 2",
    }
    engine = make_engine("blackjack", paytable=posted)
    bet(engine, {1: "7.35", 2: "7.35", 3: "7.35"})
    out = deal(engine, {1: "KD KD", 2: "KD JH", 3: "JS QS"}, upcard="5C", hole="9D")
    assert rows(out) == [
        (3, "suited_20", WIN, Odds(9), 735, 6_615, INITIAL, 1, False, False),
        (2, "any_20", WIN, Odds(9, 2), 735, 3_307, INITIAL, 2, False, False),
        (1, "matched_20", WIN, Odds(30), 735, 22_050, INITIAL, 3, False, False),
    ]


@pytest.mark.parametrize(
    ("hand", "outcome"),
    [
        # QH QH is also two identical cards, two suited cards: the pair line only.
        ("QH QH", T.QUEEN_OF_HEARTS_PAIR),
        # KD KD is also a suited 20: the matched line only.
        ("KD KD", T.MATCHED_20),
        ("QD QD", T.MATCHED_20),
        ("KD QD", T.SUITED_20),
        ("QH KS", T.ANY_20),
        ("KS 8S", None),
    ],
)
def test_2_24_f_g_highest_qualifying_hand_only(hand: str, outcome: TwentyPointOutcome) -> None:
    assert classify_twenty([card(t) for t in hand.split()]) is outcome


def test_2_24_f_paid_once_for_the_highest_qualifying_hand() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "5", 2: "5"})
    out = deal(engine, {1: "QH QH", 2: "KD KD"}, upcard="6C", hole="9D")
    out += feed(engine, [action("stand", 1), action("stand", 2)])
    out += play(engine, "5S")  # dealer 6 + 9 + 5 = 20
    assert rows(out) == [
        (2, "matched_20", WIN, Odds(19), 500, 9_500, INITIAL, 1, False, False),
        (1, "queen_of_hearts_pair", WIN, Odds(125), 500, 62_500, INITIAL, 2, False, False),
    ]
    assert of_type(out, RoundEnded) == [RoundEnded(1)]


# ============================================================================ 2.24(d)
def test_2_24_d_settled_after_the_hole_card_before_any_further_card_highest_seat_first() -> None:
    engine = make_engine("blackjack")
    setup = feed(engine, [Shuffle()]) + play(engine, "2D")  # the burn card
    assert of_type(setup, CardBurned) == [CardBurned(1)]
    bet(engine, {1: "10", 4: "20", 7: "30"}, blackjack_only=[5])
    deal_events = initial_deal(
        "blackjack", {1: "KS QS", 4: "9C 9D", 5: "KH QD", 7: "AH 9D"}, upcard="6S", hole="10C"
    )
    before_last = feed(engine, deal_events[:-1])
    assert settlements(before_last) == []  # nothing before the last initial card
    at_hole = feed(engine, deal_events[-1:])
    assert at_hole[0] == CardDealt(1, None, None, None)  # the hole card, face down
    assert rows(at_hole) == [
        (7, "any_20", WIN, Odds(4), 3_000, 12_000, INITIAL, 1, False, False),
        (4, "no_20", LOSE, None, 2_000, 0, INITIAL, 2, False, False),
        (1, "suited_20", WIN, Odds(9), 1_000, 9_000, INITIAL, 3, False, False),
    ]
    first_settlement = next(i for i, o in enumerate(at_hole) if isinstance(o, Settlement))
    assert all(not isinstance(o, CardDealt) for o in at_hole[first_settlement:])
    # Play on: no further 20 point bonus settlement, whatever happens.
    rest = feed(engine, [action("stand", 1), action("hit", 4)])
    rest += play(engine, "5H")  # seat 4: 9 + 9 + 5 = 23, bust
    rest += feed(engine, [action("stand", 5), action("stand", 7)])
    rest += play(engine, "KD")  # dealer 6 + 10 + 10 = 26
    assert settlements(rest, TPB) == []
    assert of_type(rest, RoundEnded) == [RoundEnded(1)]


def test_2_24_d_a_seat_without_the_20_point_bonus_has_no_settlement() -> None:
    engine = make_engine("blackjack")
    bet(engine, {6: "5"}, blackjack_only=[2, 7])
    out = deal(engine, {2: "KS QS", 6: "4C 5C", 7: "QH QH"}, upcard="8S", hole="10C")
    assert rows(out) == [(6, "no_20", LOSE, None, 500, 0, INITIAL, 1, False, False)]


# ============================================================================ 2.24(e)
E_HANDS = {7: "QH QH", 5: "KD JD", 2: "9S 7C"}
E_OTHERS = [
    (5, "suited_20", WIN, Odds(9), 500, 4_500, INITIAL, 1, False, False),
    (2, "no_20", LOSE, None, 500, 0, INITIAL, 2, False, False),
]


def _e_round(*, reader: bool, upcard: str, hole: str) -> tuple[TableEngine, list[Output]]:
    engine = make_engine("blackjack", hole_card_reader=reader)
    bet(engine, {7: "10", 5: "5", 2: "5"})
    deal_events = initial_deal("blackjack", E_HANDS, upcard=upcard, hole=hole)
    assert settlements(feed(engine, deal_events[:-1])) == []
    return engine, feed(engine, deal_events[-1:])


def _floorperson_notice(outputs: list[Output], seat: int) -> None:
    [notice] = notices(outputs)
    assert (notice.kind, notice.seat, notice.citation) == (
        NoticeKind.FLOORPERSON_REQUIRED,
        seat,
        "13:69F-2.24(e)",
    )


@pytest.mark.parametrize("upcard", ["AS", "AH", "10S", "JC", "QD", "KS"])
def test_2_24_e_1_i_reader_and_dealer_blackjack_pays_1000_to_1_after_all_others(
    upcard: str,
) -> None:
    hole = "KC" if upcard.startswith("A") else "AC"
    _, out = _e_round(reader=True, upcard=upcard, hole=hole)
    _floorperson_notice(out, 7)
    assert rows(out) == [
        *E_OTHERS,
        # $10 x 1,000 = $10,000.00, when the blackjack wagers are settled at the reveal.
        top_line(7, 1_000, 1_000_000, 1, limited=False),
    ]
    reveal = index_of(out, HoleCardRevealed(1, card(hole), 21))
    paid_7 = out.index(settlements(out)[-1])
    assert reveal < paid_7
    assert all(out.index(s) < reveal for s in settlements(out)[:-1])
    assert out[-1] == RoundEnded(1)


@pytest.mark.parametrize("upcard", ["AS", "10S", "JC", "QD", "KS"])
def test_2_24_e_1_ii_reader_no_blackjack_pays_pair_odds_after_others_before_any_card(
    upcard: str,
) -> None:
    engine, out = _e_round(reader=True, upcard=upcard, hole="6C")
    _floorperson_notice(out, 7)
    # $10 x 125 = $1,250.00, last of the initial-deal settlements, a floorperson attending.
    assert rows(out) == [
        *E_OTHERS,
        (7, "queen_of_hearts_pair", WIN, Odds(125), 1_000, 125_000, INITIAL, 3, True, False),
    ]
    assert of_type(out, HoleCardRevealed) == []  # the hole card stays down
    notice_at = out.index(notices(out)[0])
    assert all(notice_at < out.index(s) for s in settlements(out))
    # Play goes on; nothing more for the 20 point bonus.
    rest = feed(engine, [action("stand", 2), action("stand", 5), action("stand", 7)])
    assert settlements(rest, TPB) == []
    dealer_total = 17 if upcard == "AS" else 16
    assert of_type(rest, HoleCardRevealed) == [HoleCardRevealed(1, card("6C"), dealer_total)]


@pytest.mark.parametrize(
    ("upcard", "hole", "outcome", "odds", "won", "dealer_total"),
    [
        # 2.24(e)2, no reader: at the reveal; dealer blackjack: $10 x 1,000.
        ("KS", "AC", "queen_of_hearts_pair_dealer_blackjack", 1000, 1_000_000, 21),
        ("AS", "QS", "queen_of_hearts_pair_dealer_blackjack", 1000, 1_000_000, 21),
        # No dealer blackjack: $10 x 125.
        ("KS", "8C", "queen_of_hearts_pair", 125, 125_000, 18),
        ("AS", "7C", "queen_of_hearts_pair", 125, 125_000, 18),
    ],
)
def test_2_24_e_2_no_reader_settles_the_pair_at_the_hole_card_reveal(
    upcard: str, hole: str, outcome: str, odds: int, won: int, dealer_total: int
) -> None:
    engine, out = _e_round(reader=False, upcard=upcard, hole=hole)
    _floorperson_notice(out, 7)
    assert rows(out) == E_OTHERS  # seat 7 waits
    played = feed(engine, [action("stand", 2), action("stand", 5)])
    assert settlements(played) == []
    at_reveal = feed(engine, [action("stand", 7)])
    reveal = index_of(at_reveal, HoleCardRevealed(1, card(hole), dealer_total))
    assert rows(at_reveal) == [(7, outcome, WIN, Odds(odds), 1_000, won, BJ_WAGER, 1, True, False)]
    assert reveal < at_reveal.index(settlements(at_reveal)[0])
    assert at_reveal[-1] == RoundEnded(1)


def test_2_24_e_2_no_reader_pair_is_paid_even_if_the_player_hits_and_busts() -> None:
    """2.24(b): the pair's bonus stands whatever the player does with the hand."""
    engine, _ = _e_round(reader=False, upcard="KS", hole="AC")
    out = feed(engine, [action("stand", 2), action("stand", 5), action("hit", 7)])
    assert settlements(out) == []
    out = play(engine, "2D")  # QH QH 2D = 22
    assert HandCompleted(1, 7, 1, 22, "bust") in out
    assert rows(out) == [top_line(7, 1_000, 1_000_000, 1, limited=False)]


@pytest.mark.parametrize("reader", [True, False])
@pytest.mark.parametrize("upcard", ["2C", "5H", "9D"])
def test_2_24_e_pair_against_a_two_to_nine_upcard_is_settled_in_normal_order(
    reader: bool,  # noqa: FBT001 - parametrized
    upcard: str,
) -> None:
    engine = make_engine("blackjack", hole_card_reader=reader)
    bet(engine, {7: "10", 5: "5", 2: "5"})
    out = deal(engine, E_HANDS, upcard=upcard, hole="KC")
    assert notices(out) == []
    assert rows(out) == [
        (7, "queen_of_hearts_pair", WIN, Odds(125), 1_000, 125_000, INITIAL, 1, False, False),
        (5, "suited_20", WIN, Odds(9), 500, 4_500, INITIAL, 2, False, False),
        (2, "no_20", LOSE, None, 500, 0, INITIAL, 3, False, False),
    ]


def test_2_24_e_other_20s_against_a_ten_upcard_are_not_deferred() -> None:
    engine = make_engine("blackjack", hole_card_reader=False)
    bet(engine, {3: "5", 1: "5"})
    out = deal(engine, {3: "QH QD", 1: "KD KD"}, upcard="KS", hole="AC")
    assert notices(out) == []
    assert rows(out) == [
        (3, "any_20", WIN, Odds(4), 500, 2_000, INITIAL, 1, False, False),
        (1, "matched_20", WIN, Odds(19), 500, 9_500, INITIAL, 2, False, False),
    ]


def test_2_24_e_several_pairs_are_each_deferred_and_settled_highest_seat_first() -> None:
    engine = make_engine("blackjack")
    bet(engine, {6: "5", 4: "5", 2: "20"})
    out = deal(engine, {6: "QH QH", 4: "KD 4D", 2: "QH QH"}, upcard="KS", hole="5C")
    assert [n.seat for n in notices(out)] == [6, 2]
    assert rows(out) == [
        (4, "no_20", LOSE, None, 500, 0, INITIAL, 1, False, False),
        (6, "queen_of_hearts_pair", WIN, Odds(125), 500, 62_500, INITIAL, 2, True, False),
        (2, "queen_of_hearts_pair", WIN, Odds(125), 2_000, 250_000, INITIAL, 3, True, False),
    ]


# ============================================================================ 2.24(h)
def _top_line_round(
    stakes: Mapping[int, str], *, limit: str | None, reader: bool = True
) -> list[Output]:
    engine = make_engine(
        "blackjack", queen_of_hearts_aggregate_limit=limit, hole_card_reader=reader
    )
    bet(engine, stakes)
    out = deal(engine, dict.fromkeys(stakes, "QH QH"), upcard="AD", hole="KC")
    if not reader:
        out += feed(engine, [action("stand", seat) for seat in sorted(stakes)])
    return out


def test_2_24_h_one_winner_under_the_limit_is_paid_in_full() -> None:
    out = _top_line_round({3: "20"}, limit="25000")
    assert rows(out) == [top_line(3, 2_000, 2_000_000, 1, limited=False)]


def test_2_24_h_winners_exactly_at_the_limit_are_paid_in_full() -> None:
    """$20 and $5 at 1,000 to 1: $20,000 + $5,000 = $25,000, not above the limit."""
    out = _top_line_round({5: "20", 1: "5"}, limit="25000")
    assert rows(out) == [
        top_line(5, 2_000, 2_000_000, 1, limited=False),
        top_line(1, 500, 500_000, 2, limited=False),
    ]


def test_2_24_h_one_winner_over_the_limit_gets_the_limit() -> None:
    """$100 x 1,000 = $100,000 exceeds the $25,000 aggregate payable: paid $25,000."""
    out = _top_line_round({2: "100"}, limit="25000")
    assert rows(out) == [top_line(2, 10_000, 2_500_000, 1, limited=True)]


@pytest.mark.parametrize("reader", [True, False])
def test_2_24_h_winners_over_the_limit_share_it_in_proportion_to_the_cent(
    reader: bool,  # noqa: FBT001 - parametrized
) -> None:
    """$7, $11, $13 would win $31,000; they share $25,000 in proportion 7:11:13.

    2,500,000 x 7/31 = 564,516.13, x 11/31 = 887,096.77, x 13/31 = 1,048,387.10 cents; the
    floors leave one cent, which goes to the largest remainder (seat 3's .77).
    """
    out = _top_line_round({6: "7", 3: "11", 2: "13"}, limit="25000", reader=reader)
    assert rows(out) == [
        top_line(6, 700, 564_516, 1, limited=True),
        top_line(3, 1_100, 887_097, 2, limited=True),
        top_line(2, 1_300, 1_048_387, 3, limited=True),
    ]
    assert sum(s.won for s in settlements(out)) == 2_500_000
    assert all("13:69F-2.24(f), (h)" in s.citation for s in settlements(out))


def test_2_24_h_equal_shares_give_the_spare_cent_to_the_first_settled_seat() -> None:
    """Three $10 winners ($30,000) share $25,000: $8,333.33⅓ each; seat 7 is settled first."""
    out = _top_line_round({1: "10", 4: "10", 7: "10"}, limit="25000")
    assert rows(out) == [
        top_line(7, 1_000, 833_334, 1, limited=True),
        top_line(4, 1_000, 833_333, 2, limited=True),
        top_line(1, 1_000, 833_333, 3, limited=True),
    ]


def test_2_24_h_without_a_limit_every_winner_is_paid_in_full() -> None:
    out = _top_line_round({1: "100", 4: "100", 7: "100"}, limit=None)
    assert rows(out) == [
        top_line(7, 10_000, 10_000_000, 1, limited=False),
        top_line(4, 10_000, 10_000_000, 2, limited=False),
        top_line(1, 10_000, 10_000_000, 3, limited=False),
    ]


def test_2_24_h_the_limit_applies_to_the_top_line_only() -> None:
    """Pairs without dealer blackjack: $100 x 125 each, $37,500 in all, not limited."""
    engine = make_engine("blackjack", queen_of_hearts_aggregate_limit="25000")
    bet(engine, {1: "100", 4: "100", 7: "100"})
    out = deal(engine, dict.fromkeys((1, 4, 7), "QH QH"), upcard="9D", hole="KC")
    assert [r[5] for r in rows(out)] == [1_250_000] * 3
    assert not any(r[9] for r in rows(out))


# ============================================================================ 2.24(c)
def _rejected(engine: TableEngine, event: Any) -> WagerRejected:
    before = json.dumps(engine.public_view(), sort_keys=True)
    with pytest.raises(WagerRejected) as caught:
        engine.apply(event)
    assert json.dumps(engine.public_view(), sort_keys=True) == before  # nothing changed
    return caught.value


def test_2_24_c_needs_a_blackjack_wager_first() -> None:
    engine = make_engine("blackjack")
    error = _rejected(engine, wager(3, TPB, "5"))
    assert (error.seat, error.kind, error.reason) == (3, TPB, "requires_wager")
    assert engine.round is None  # no round opened by a rejected wager
    bet(engine, {}, blackjack_only=[1])
    error = _rejected(engine, wager(3, TPB, "5"))
    assert (error.seat, error.reason) == (3, "requires_wager")
    feed(engine, [wager(3, "blackjack", "10"), wager(3, TPB, "5")])
    out = deal(engine, {1: "2C 3C", 3: "KS KH"}, upcard="8D", hole="8H")
    assert rows(out) == [(3, "any_20", WIN, Odds(4), 500, 2_000, INITIAL, 1, False, False)]


@pytest.mark.parametrize(
    ("amount", "reason"), [("100.01", "above_maximum"), ("4.99", "below_minimum")]
)
def test_2_24_c_posted_minimum_and_maximum(amount: str, reason: str) -> None:
    engine = make_engine("blackjack")
    bet(engine, {}, blackjack_only=[1])
    assert _rejected(engine, wager(1, TPB, amount)).reason == reason


@pytest.mark.parametrize("amount", ["5", "100"])
def test_2_24_c_the_limits_themselves_are_accepted(amount: str) -> None:
    engine = make_engine("blackjack")
    stake = int(amount) * 100
    out = bet(engine, {1: amount})
    assert WagerAccepted(1, 1, WagerKind.TWENTY_POINT_BONUS, stake) in out
    dealt = deal(engine, {1: "KS QS"}, upcard="8D", hole="8H")
    assert rows(dealt) == [
        (1, "suited_20", WIN, Odds(9), stake, stake * 9, INITIAL, 1, False, False)
    ]


def test_2_24_c_after_the_first_card_no_wager_and_the_round_goes_on_unharmed() -> None:
    engine = make_engine("blackjack")
    bet(engine, {2: "5"}, blackjack_only=[1])
    deal_events = initial_deal("blackjack", {1: "KS QH", 2: "JD JD"}, upcard="7C", hole="KC")
    feed(engine, deal_events[:1])
    for event in (
        wager(1, TPB, "5"),  # a new 20PB
        wager(2, TPB, "10"),  # a changed 20PB
        withdraw(2, TPB),  # a withdrawn 20PB
        wager(3, "blackjack", "25"),
        wager(3, TPB, "5"),
    ):
        error = _rejected(engine, event)
        assert error.reason == "window_closed"
        assert "2.24(c)" in error.message or "2.3(a)" in error.message
    feed(engine, deal_events[1:3])
    assert _rejected(engine, wager(1, TPB, "5")).reason == "window_closed"
    out = feed(engine, deal_events[3:])
    assert rows(out) == [(2, "matched_20", WIN, Odds(19), 500, 9_500, INITIAL, 1, False, False)]
    out = feed(engine, [action("stand", 1), action("stand", 2)])
    assert of_type(out, RoundEnded) == [RoundEnded(1)]  # dealer 17 stands


def test_2_24_c_withdrawing_the_blackjack_wager_under_a_20_point_bonus_is_rejected() -> None:
    engine = make_engine("blackjack")
    bet(engine, {4: "5"})
    error = _rejected(engine, withdraw(4, "blackjack"))
    assert (error.seat, error.kind, error.reason) == (4, "blackjack", "dependent_wager")
    feed(engine, [withdraw(4, TPB), withdraw(4, "blackjack")])
    assert engine.round is not None
    assert engine.round.seats[4].wagers == {}


def test_2_24_c_a_20_point_bonus_changed_before_the_first_card_is_settled_at_its_new_amount() -> (
    None
):
    engine = make_engine("blackjack")
    bet(engine, {4: "5"})
    feed(engine, [wager(4, TPB, "12.50")])
    out = deal(engine, {4: "QC QC"}, upcard="3D", hole="KC")
    # $12.50 x 19 = $237.50
    assert rows(out) == [(4, "matched_20", WIN, Odds(19), 1_250, 23_750, INITIAL, 1, False, False)]


def test_2_24_c_a_withdrawn_20_point_bonus_is_not_settled() -> None:
    engine = make_engine("blackjack")
    bet(engine, {4: "5"})
    feed(engine, [withdraw(4, TPB)])
    assert settlements(deal(engine, {4: "QC QC"}, upcard="3D", hole="KC")) == []


def test_2_24_a_a_table_that_does_not_offer_it_rejects_it() -> None:
    engine = make_engine(
        "blackjack", twenty_point_bonus=False, limits={"blackjack": {"min": "10", "max": "1000"}}
    )
    bet(engine, {}, blackjack_only=[1])
    assert _rejected(engine, wager(1, TPB, "5")).reason == "not_offered"
    assert _rejected(engine, wager(8, "blackjack", "10")).reason == "no_such_seat"
    out = deal(engine, {1: "KS QS"}, upcard="3D", hole="KC")
    assert settlements(out) == []


# ============================================================================ 2.24(b)
def test_2_24_b_a_bust_after_a_20_point_bonus_win_changes_nothing() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "5"})
    out = deal(engine, {1: "KH QH"}, upcard="6C", hole="9D")
    out += feed(engine, [action("hit", 1)])
    out += play(engine, "5S")  # 25: bust
    assert HandCompleted(1, 1, 1, 25, "bust") in out
    assert rows(out) == [(1, "suited_20", WIN, Odds(9), 500, 4_500, INITIAL, 1, False, False)]
    assert out[-1] == RoundEnded(1)  # the dealer needs no card: nobody is left to play


def test_2_24_b_dealer_blackjack_does_not_change_an_ordinary_20() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "5", 2: "5"})
    out = deal(engine, {1: "AH KH", 2: "KH QH"}, upcard="AC", hole="KC")
    assert rows(out) == [
        (2, "suited_20", WIN, Odds(9), 500, 4_500, INITIAL, 1, False, False),
        (1, "no_20", LOSE, None, 500, 0, INITIAL, 2, False, False),
    ]
    assert out[-1] == RoundEnded(1)


def test_2_24_b_splitting_a_20_does_not_settle_the_bonus_again() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "5"})
    out = deal(engine, {1: "KD KD"}, upcard="6C", hole="9D")
    out += feed(engine, [action("split", 1)])
    out += play(engine, "3S")
    out += feed(engine, [action("stand", 1, 1)])
    out += play(engine, "4S")
    out += feed(engine, [action("stand", 1, 2)])
    out += play(engine, "KS")
    assert rows(out) == [(1, "matched_20", WIN, Odds(19), 500, 9_500, INITIAL, 1, False, False)]
    assert out[-1] == RoundEnded(1)
    with pytest.raises(ActionRejected):
        engine.apply(action("stand", 1))


# ============================================================================ hole card
def test_the_hole_card_is_dealt_face_down_and_never_shown_before_the_reveal() -> None:
    engine = make_engine("blackjack", hole_card_reader=False)
    bet(engine, {1: "5"})
    out = deal(engine, {1: "KH 7H"}, upcard="9C", hole="8D")
    dealer_cards = [o for o in out if isinstance(o, CardDealt) and o.seat is None]
    assert dealer_cards == [CardDealt(1, None, None, card("9C")), CardDealt(1, None, None, None)]
    assert dealer_cards[1].to_mapping()["face_up"] is False
    view = engine.public_view()
    assert view["round"]["dealer"] == {"cards": ["9C", None], "total": 9, "hole_revealed": False}
    assert "8D" not in json.dumps(view)
    assert all("8D" not in json.dumps(o.to_mapping()) for o in out)
    out = feed(engine, [action("stand", 1)])
    assert out[1:3] == [HandCompleted(1, 1, 1, 17, "stand"), HoleCardRevealed(1, card("8D"), 17)]
    view = engine.public_view()
    assert view["round"]["dealer"] == {"cards": ["9C", "8D"], "total": 17, "hole_revealed": True}


def test_the_hole_card_stays_hidden_when_the_reader_finds_no_blackjack() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "5"})
    out = deal(engine, {1: "QH QH"}, upcard="AC", hole="8D")
    assert of_type(out, HoleCardRevealed) == []
    assert all("8D" not in json.dumps(o.to_mapping()) for o in out)
    assert engine.public_view()["round"]["dealer"]["cards"] == ["AC", None]
    assert rows(out) == [
        (1, "queen_of_hearts_pair", WIN, Odds(125), 500, 62_500, INITIAL, 1, True, False)
    ]


def test_a_burned_card_is_never_shown() -> None:
    engine = make_engine("blackjack")
    out = feed(engine, [Shuffle()]) + play(engine, "QH")
    assert out[1] == CardBurned(1)
    assert "QH" not in json.dumps([o.to_mapping() for o in out])
    assert engine.public_view()["round"] is None


def test_outputs_serialise_settlement_fields_as_text() -> None:
    engine = make_engine("blackjack")
    bet(engine, {1: "7.35"})
    [paid] = settlements(deal(engine, {1: "QH KH"}, upcard="6C", hole="9D"))
    assert paid.to_mapping() == {
        "type": "settlement",
        "round": 1,
        "seat": 1,
        "hand": None,
        "wager": TPB,
        "outcome": "suited_20",
        "result": "win",
        "odds": "9 to 1",
        "stake": "7.35",
        "won": "66.15",
        "phase": "initial_deal",
        "order": 1,
        "floorperson": False,
        "limited": False,
        "citation": paid.citation,
    }
