"""The promise, checked on what the table published and nothing else: it never pays the wrong
player without saying so.

- Every settlement the table published equals the truth's (the oracle's, for the round of the
  truth the daemon's round is) or carries `review: true`, and then its round had a notice of
  each reason it is reviewed for (in the round, or between it and the round before: a doubt
  raised between rounds flags the round it covers).
- No winner of the truth goes unpaid without such a flag: each truth settlement with result
  `win` was published, equal, or its round is flagged.
- No hole card appears in any message before its reveal: the dealer's second card is dealt
  face down, no snapshot (nor `status` answer) shows it, and where its face is no other card
  anyone saw, no message of the round names it.
- `seq` has no hole, and no `seq` was published twice with other content.

How the code got there (its custody, its doubts) is not looked at: only the messages.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from daemon.wire.envelope import Outbound
from daemon.wire.round_message import unbundled_outbound

if TYPE_CHECKING:
    from daemon.testing.interleaving.session import Outcome
    from daemon.testing.interleaving.truth import TruthRound

ENVELOPE: Final = ("schema", "id", "table", "seq", "ts")
# Not compared: whether the table reviews it (the invariant's own question), and its place
# among the round's settlements of its phase, which a wager the table missed (a lost request,
# refused or reported apart) moves without changing what anyone is paid.
_NOT_COMPARED: Final = frozenset({*ENVELOPE, "review", "order"})


@dataclass
class Verdict:
    """What the invariant found in one session's messages, and the session's figures."""

    rounds: int = 0
    settlements: int = 0  # published by the table
    truth_settlements: int = 0
    supervised: int = 0  # rounds in which the floorperson had to act
    voided: int = 0
    flagged: int = 0  # rounds the table flagged for review
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)  # why
    wrong_in_silence: list[str] = field(default_factory=list)
    unpaid_winners: list[str] = field(default_factory=list)
    unexplained_flags: list[str] = field(default_factory=list)
    hole_card_leaks: list[str] = field(default_factory=list)
    sequence: list[str] = field(default_factory=list)
    unfinished: bool = False

    @property
    def ok(self) -> bool:
        return not (
            self.wrong_in_silence
            or self.unpaid_winners
            or self.unexplained_flags
            or self.hole_card_leaks
            or self.sequence
            or self.unfinished
        )

    def explain(self) -> str:
        parts = [
            f"{name}: {problems[:3]}"
            for name, problems in (
                ("wrong in silence", self.wrong_in_silence),
                ("unpaid winners", self.unpaid_winners),
                ("flags without a notice", self.unexplained_flags),
                ("hole card", self.hole_card_leaks),
                ("sequence", self.sequence),
            )
            if problems
        ]
        if self.unfinished:
            parts.append("the session did not finish")
        return "; ".join(parts) or "ok"


@dataclass
class _Round:
    """What the table published of one of its rounds."""

    settlements: list[dict[str, Any]] = field(default_factory=list)
    notices: set[str] = field(default_factory=set)
    review: list[str] = field(default_factory=list)
    revealed: bool = False
    dealer_cards: int = 0


def check(outcome: Outcome) -> Verdict:
    verdict = Verdict(
        rounds=len(outcome.truth),
        truth_settlements=sum(len(r.settlements) for r in outcome.truth),
        supervised=len(outcome.supervised),
        voided=len(outcome.voided),
        unfinished=not outcome.finished,
    )
    messages = _unique(outcome, verdict)
    rounds = _rounds(messages, outcome, verdict)
    truth = {r.round_id: r for r in outcome.truth}
    flagged = {d for d, r in rounds.items() if _flagged(r)}
    verdict.flagged = len(flagged)
    verdict.reasons.update(reason for r in rounds.values() for reason in set(r.review))
    for number, round_ in rounds.items():
        verdict.settlements += len(round_.settlements)
        truth_round = truth.get(outcome.round_map.get(number, 0))
        voided = truth_round is not None and truth_round.round_id in outcome.voided
        _settlements(number, round_, truth_round, verdict, voided=voided)
        if any(s["review"] for s in round_.settlements) and number not in flagged:
            verdict.unexplained_flags.append(
                f"round {number}: review {round_.review}, notices {sorted(round_.notices)}"
            )
    daemon_round = {t: d for d, t in outcome.round_map.items()}
    for truth_round in outcome.truth:
        opened = daemon_round.get(truth_round.round_id)
        if truth_round.round_id in outcome.voided or (opened is not None and opened in flagged):
            continue  # the floorperson's void returned the wagers: that is what happened
        published = [] if opened is None else rounds.get(opened, _Round()).settlements
        contents = [_content(s, truth_round.round_id) for s in published]
        verdict.unpaid_winners += [
            f"truth round {truth_round.round_id}: {winner}"
            for winner in truth_round.winners
            if _content(winner, truth_round.round_id) not in contents
        ]
    return verdict


Message = tuple[str, bytes, dict[str, Any]]  # topic, payload, body


def _unique(outcome: Outcome, verdict: Verdict) -> list[Message]:
    """Each published `seq` once, in order: no hole, no second content; each round state
    (outside the numbering) after the numbered message it reflects (`as_of`), as it came."""
    by_seq: dict[int, tuple[str, bytes]] = {}
    states: dict[int, list[Message]] = {}
    for message in outcome.published:
        if message.seq == 0:  # the round state: the latest, not a numbered message
            body = json.loads(message.payload)
            states.setdefault(int(body["as_of"]), []).append((message.topic, message.payload, body))
            continue
        kept = by_seq.setdefault(message.seq, (message.topic, message.payload))
        if kept != (message.topic, message.payload):
            verdict.sequence.append(f"seq {message.seq} published with other content")
    numbers = sorted(by_seq)
    if numbers != list(range(1, len(numbers) + 1)):
        missing = sorted(set(range(1, (numbers or [0])[-1] + 1)) - set(numbers))
        verdict.sequence.append(f"seq has holes: {missing[:10]}")
    ordered = list(states.get(0, []))
    for n in numbers:
        # A contract 4 round message as what it carried, then its round as a state.
        parts = unbundled_outbound(Outbound(*by_seq[n], 1, False, "", n))
        ordered += [(part.topic, part.payload, json.loads(part.payload)) for part in parts]
        ordered += states.get(n, [])
    return ordered


def _rounds(messages: list[Message], outcome: Outcome, verdict: Verdict) -> dict[int, _Round]:
    """The table's rounds from its messages, the hole card watched on the way."""
    rounds: dict[int, _Round] = {}
    truth = {r.round_id: r for r in outcome.truth}
    current: int | None = None
    between: set[str] = set()  # notices told while no round was open: they tell the next one
    for topic, payload, body in messages:
        kind = topic.split("/", 2)[2]
        current, between = _opening(kind, body, rounds, current, between)
        # A snapshot's and a `status` answer's "round" is the round itself, not its number.
        number = None if kind == "round" or kind.startswith("response/") else body.get("round")
        round_ = rounds.get(number) if isinstance(number, int) else None
        if round_ is not None:
            _round_message(kind, body, round_, verdict)
        snapshot = body if kind == "round" else body.get("data", {}).get("round")
        if isinstance(snapshot, dict):
            _snapshot(snapshot, rounds, verdict)
        if current is not None and not rounds[current].revealed:
            _named(topic, payload, truth.get(outcome.round_map.get(current, 0)), current, verdict)
    return rounds


def _opening(
    kind: str, body: dict[str, Any], rounds: dict[int, _Round], current: int | None,
    between: set[str],
) -> tuple[int | None, set[str]]:  # fmt: skip
    """The round open after this message, and the notices told since the last one ended."""
    if kind == "event/round_opened":
        rounds[body["round"]] = _Round(notices=between)
        return body["round"], set()
    if kind == "event/round_ended":
        return None, between
    if kind.startswith("notice/") and current is None:
        between.add(body["kind"])
    return current, between


def _round_message(kind: str, body: dict[str, Any], round_: _Round, verdict: Verdict) -> None:
    if kind == "settlement":
        round_.settlements.append(body)
    elif kind.startswith("notice/"):
        round_.notices.add(body["kind"])
    elif kind == "event/hole_card_revealed":
        round_.revealed = True
    elif kind == "event/card_dealt" and body["to"] == "dealer":
        round_.dealer_cards += 1
        if round_.dealer_cards == 2 and body["card"] is not None:
            verdict.hole_card_leaks.append(f"round {body['round']}: dealt face up: {body}")


def _snapshot(view: dict[str, Any], rounds: dict[int, _Round], verdict: Verdict) -> None:
    round_view = view.get("round")
    if not isinstance(round_view, dict):
        return
    round_ = rounds.get(round_view["id"])
    if round_ is not None:
        round_.review = list(view["review"])
    dealer = round_view["dealer"]
    if not dealer["hole_revealed"] and len(dealer["cards"]) > 1 and dealer["cards"][1] is not None:
        verdict.hole_card_leaks.append(f"round {round_view['id']}: a snapshot shows the hole card")


def _named(
    topic: str, payload: bytes, truth: TruthRound | None, number: int, verdict: Verdict
) -> None:
    """Where the hole card's face is no other card anyone saw, no message names it."""
    if truth is None or truth.hole is None or truth.hole in truth.visible:
        return
    if f'"{truth.hole}"'.encode() in payload:
        verdict.hole_card_leaks.append(f"round {number}: {topic} names the hole card")


def _flagged(round_: _Round) -> bool:
    """Reviewed, and each reason told in a notice of the round."""
    return bool(round_.review) and all(reason in round_.notices for reason in round_.review)


def _content(settlement: dict[str, Any], truth_round: int) -> dict[str, Any]:
    body = {k: v for k, v in settlement.items() if k not in _NOT_COMPARED}
    body["round"] = truth_round
    return body


def _settlements(
    number: int, round_: _Round, truth: TruthRound | None, verdict: Verdict, *, voided: bool
) -> None:
    """Each of the round's settlements: the truth's, or flagged with a reason told. Where
    the floorperson voided the round, its wagers returned are what happened."""
    expected = [] if truth is None else [_content(s, truth.round_id) for s in truth.settlements]
    flagged = _flagged(round_)
    for settlement in round_.settlements:
        if voided and settlement["result"] == "void":
            continue
        content = _content(settlement, 0 if truth is None else truth.round_id)
        if content in expected:
            expected.remove(content)
            continue
        if not (settlement["review"] and flagged):
            wager = (content["seat"], content["wager"])
            instead = [s for s in expected if (s["seat"], s["wager"]) == wager]
            verdict.wrong_in_silence.append(
                f"round {number} (truth {None if truth is None else truth.round_id}): "
                f"published {content}; the truth settles {instead}"
            )
