"""One table's surveillance: the census of its shoe and the advantage play seen in its wagers.

The table service (daemon.table) calls it at three points, each a marked hook there:

- `judge` for every card from the shoe, before anything places or holds it: a card the shoe
  cannot hold (rules.census) is never placed; the table holds the round for a supervisor
  (`foreign_card`, docs/rules.md decision 17) and this module names the card on the
  surveillance topic, and on the pit's notice only if its place is face up;
- `applied` after every event the engine took: the census counts the card, the watch
  (rules.advantage) the outputs, and at a shuffle one message goes to the surveillance topic:
  the shoe's census, the counts at each of its rounds' start and every seat's evidence,
  with the seats past the thresholds named in `flagged`;
- `state` / `restore` with the table's checkpoint.

Its messages are on `<base>/<table>/surveillance/<kind>` (daemon.wire.topics), which only the
surveillance user may read (docs/mosquitto/acl): never the table's topics, the dealer's
console or the pit display. One message per shuffle whatever the thresholds, so a replay
numbers every message as the live table did even when `[surveillance]` changed meanwhile
(only its `flagged` may differ).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daemon.wire.surveillance import FOREIGN_CARD, SHOE_ENDED
from rules.advantage import AdvantageWatch, Thresholds
from rules.census import ShoeCensus
from rules.counting import COUNT_SYSTEMS, DEFAULT_SYSTEM
from rules.events import DealCard, Shuffle
from rules.games import Step
from rules.outputs import CardBurned, ShoeShuffled
from rules.table import RoundStage

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.table.custody import Custody
    from daemon.wire.envelope import Envelopes, Outbound
    from daemon.wire.topics import Topics
    from rules.advantage import Evidence
    from rules.census import ForeignReason
    from rules.config import TableConfig
    from rules.engine import TableEngine
    from rules.events import TableEvent
    from rules.outputs import Output

_WHY = {
    "not_in_deck_kind": "a {kind} deck has no card of that rank",
    "over_the_shoe": "the {decks}-deck shoe gave every one of that card since its shuffle",
}


@dataclass(frozen=True, slots=True)
class SurveillanceConfig:
    """`[surveillance]` (daemon.configuration): the count system and when a seat is flagged."""

    count_system: str = DEFAULT_SYSTEM
    thresholds: Thresholds = field(default_factory=Thresholds)


class TableSurveillance:
    def __init__(self, config: TableConfig, topics: Topics, envelopes: Envelopes) -> None:
        self.table_id = config.table_id
        self.config = config
        self.topics = topics
        self.envelopes = envelopes
        self.settings = SurveillanceConfig()
        self.census = ShoeCensus(config.decks, config.deck_kind)
        self.watch = AdvantageWatch(config)

    def configure(self, settings: SurveillanceConfig) -> None:
        """The daemon's `[surveillance]`: thresholds at once; another count system starts
        the table's sessions again (their counts were another system's)."""
        if settings.count_system != self.watch.system:
            self.watch = AdvantageWatch(self.config, settings.count_system, settings.thresholds)
        self.watch.thresholds = settings.thresholds
        self.settings = settings

    def reconfigure(self, config: TableConfig) -> None:
        """The table's settings changed between rounds: a new shoe (decks, kind) starts an
        incomplete census; another game or shoe starts the sessions again."""
        old, self.config = self.config, config
        self.census = self.census.reshaped(config.decks, config.deck_kind)
        same = (old.game, old.decks, old.deck_kind) == (config.game, config.decks, config.deck_kind)
        if not same:
            watch = AdvantageWatch(config, self.settings.count_system, self.settings.thresholds)
            watch.shoe = self.watch.shoe
            self.watch = watch

    # ---------------------------------------------------------------- foreign cards
    def judge(self, card: DealCard, engine: TableEngine, custody: Custody) -> ForeignReason | None:
        """Why the shoe cannot have given `card`, or None: against what the census counted
        and the cards held before it (those after a held new shoe are the new shoe's)."""
        pending: list[DealCard] = []
        fresh = False
        for item in custody.held:
            if isinstance(item, Shuffle):
                pending, fresh = [], True
            elif isinstance(item, DealCard):
                pending.append(item)
        round_ = engine.round
        live = round_ is not None and round_.stage in _LIVE
        if card.burned and not engine.burns_due and not live and not fresh:
            # A burn with none due: the next shoe's, come before its shuffle was announced
            # (the engine keeps it for that shoe). Only its rank can be judged.
            fresh, pending = True, []
        return self.census.judge(card.card, [each.card for each in pending], fresh=fresh)

    def foreign_card(
        self, card: DealCard, reason: ForeignReason, engine: TableEngine, custody: Custody
    ) -> tuple[str, list[Outbound]]:
        """The pit's words for a foreign card, and the surveillance message naming it. The
        pit's notice names it only where it would be face up: else it may be the hole card
        (or a burn, which nobody sees)."""
        self.census.foreign_card(card.card)
        config = self.config
        why = _WHY[reason].format(kind=config.deck_kind.value, decks=config.decks)
        shown = _face_up(card, engine, custody)
        named = f" ({card.card})" if shown else ""
        message = (
            f"a card this shoe cannot hold came out of it{named}: {why}; it is given to no "
            "seat: a supervisor takes it off the table for surveillance"
            + ("" if shown else " (it is named to surveillance only)")
        )
        body = {
            "type": FOREIGN_CARD,
            "round": engine.round_id if engine.round_open else None,
            "shoe": self.census.shoe,
            "card": str(card.card),
            "burned": card.burned,
            "reason": reason,
            "holds": self.census.holds(card.card),
            "named_to_pit": shown,
        }
        return message, [self._seal(FOREIGN_CARD, body)]

    # ---------------------------------------------------------------- every event
    def applied(
        self, event: TableEvent, outputs: list[Output], engine: TableEngine
    ) -> list[Outbound]:
        """What the engine took: counted, watched, and at a shuffle the shoe's message."""
        if isinstance(event, DealCard):
            early = any(isinstance(o, CardBurned) for o in outputs) and bool(
                engine.burned_unannounced and engine.burned_unannounced[-1] is event.card
            )
            self.census.seen_card(event.card, early_burn=early)
        shuffled = any(isinstance(o, ShoeShuffled) for o in outputs)
        rounds = self.watch.shoe_rounds() if shuffled else []
        evidence = self.watch.observe(outputs)
        if not shuffled:
            return []
        census = self.census.shuffled(engine.shoe)
        if census.shoe == 0 and not census.cards_seen and not census.foreign:
            return []  # the table's first shuffle: no shoe before it was seen
        body = {
            "type": SHOE_ENDED,
            "shoe": census.shoe,
            "census": census.to_mapping(),
            "count_system": self.watch.system,
            "rounds": [r.to_mapping() for r in rounds],
            "evidence": [e.to_mapping() for e in evidence],
            "flagged": [_flag(e) for e in evidence if e.flagged],
            "thresholds": _thresholds(self.watch.thresholds),
        }
        return [self._seal(SHOE_ENDED, body)]

    def _seal(self, kind: str, body: dict[str, Any]) -> Outbound:
        return self.envelopes.seal(self.topics.surveillance(self.table_id, kind), body)

    # ---------------------------------------------------------------- views and state
    def summary(self) -> dict[str, Any]:
        """The shoe in play and each seat's session as they stand: for the pit's report."""
        return {
            "table": self.table_id,
            "count_system": self.watch.system,
            "shoe": self.census.summary().to_mapping(),
            "seats": {str(seat): view for seat, view in self.watch.seats().items()},
            "thresholds": _thresholds(self.watch.thresholds),
        }

    def state(self) -> dict[str, Any]:
        return {"census": self.census.state(), "watch": self.watch.state()}

    def restore(self, config: TableConfig, state: Mapping[str, Any] | None) -> None:
        """From `state()`; a checkpoint written before the surveillance has none: the census
        is then incomplete until the next shuffle. Raises KeyError, TypeError, ValueError or
        a RulesError when malformed."""
        self.config, self.table_id = config, config.table_id
        if state is None:
            self.census = ShoeCensus(config.decks, config.deck_kind)
            self.watch = AdvantageWatch(
                config, self.settings.count_system, self.settings.thresholds
            )
            return
        census = ShoeCensus.from_state(config.decks, config.deck_kind, state["census"])
        watch = AdvantageWatch.from_state(config, state["watch"], self.settings.thresholds)
        if watch.system not in COUNT_SYSTEMS:
            raise ValueError(f"unknown count system {watch.system!r}")
        self.census, self.watch = census, watch


_LIVE = (RoundStage.DEALING, RoundStage.PLAYING, RoundStage.DEALER)


def _face_up(card: DealCard, engine: TableEngine, custody: Custody) -> bool:
    """Whether the card's place, had it been the shoe's, is face up: no burn, nothing held
    before it, a round being dealt (or betting closed for its first card), and not the
    dealer's hole card (no deal order starts with it)."""
    round_ = engine.round
    if card.burned or custody.held or round_ is None or round_.stage is RoundStage.OVER:
        return False
    if round_.stage is RoundStage.BETTING:  # the deal's first card, once betting closed
        return not round_.betting_open
    if round_.stage is RoundStage.DEALING:
        return engine.rules.deal_order[round_.step] is not Step.DEALER_HOLE_CARD
    return True


def _flag(evidence: Evidence) -> dict[str, Any]:
    return {
        "seat": evidence.seat,
        "test": evidence.test,
        "scope": evidence.scope,
        "z": round(evidence.z, 3),
    }


def _thresholds(limits: Thresholds) -> dict[str, Any]:
    return {
        "evidence_z": limits.evidence_z,
        "min_rounds": limits.min_rounds,
        "min_spread": limits.min_spread,
        "min_moves": limits.min_moves,
    }


def render_summary(summary: Mapping[str, Any]) -> list[str]:
    """`summary()` as lines of text: a section for the pit's report."""
    shoe = summary["shoe"]
    lines = [
        f"table {summary['table']}: shoe {shoe['shoe']}, {shoe['cards_seen']} cards seen, "
        f"{shoe['cards_left']} left"
        + ("" if shoe["complete"] else " (the census did not see this shoe's shuffle)")
        + (f"; foreign cards: {', '.join(shoe['foreign'])}" if shoe["foreign"] else "")
    ]
    for seat, view in summary["seats"].items():
        tests = "; ".join(
            f"{e['test']} z {e['z']:+.2f} (p {e['p']:.2g})"
            + (f", spread {e['spread']:.1f}" if "spread" in e else "")
            for e in view["evidence"]
        )
        lines.append(f"  seat {seat}: {view['rounds']} rounds over {view['shoes']} shoes: {tests}")
    return lines
