"""The demo's tables: one of each game, with the limits and the shoe the demo deals them from.

The demo plays them; the tests and the benchmarks take them as a table of each game that the
console simulator plays within its limits.
"""

from __future__ import annotations

from typing import Any

from drivers.emulator import EmulatorSettings
from rules.games import GAMES, Game

DEMO_TABLES: dict[Game, dict[str, Any]] = {
    Game.BLACKJACK: {
        "id": "bj-1",
        "game": "blackjack",
        "decks": 6,
        "paytable": "B",
        "queen_of_hearts_aggregate_limit": "25000",
        "limits": {
            "blackjack": {"min": "10", "max": "500"},
            "twenty_point_bonus": {"min": "5", "max": "100"},
        },
    },
    Game.DOUBLE_ATTACK: {
        "id": "da-1",
        "game": "double_attack",
        "limits": {
            "initial": {"min": "10", "max": "500"},
            "optional_bonus": {"min": "1", "max": "100"},
            "double_attack": {"min": "10", "max": "500"},
        },
    },
    Game.TRIPLE_ATTACK: {
        "id": "ta-1",
        "game": "triple_attack",
        "limits": {
            "first_attack": {"min": "10", "max": "500"},
            "second_attack": {"min": "10", "max": "500"},
            "third_attack": {"min": "10", "max": "500"},
        },
    },
}


def demo_shoe(game: Game, seed: int) -> EmulatorSettings:
    """The emulated shoe of the demo's table of `game`: its decks, shuffled by `seed`."""
    return EmulatorSettings(
        protocol="reference",
        decks=DEMO_TABLES[game].get("decks", GAMES[game].default_decks),
        spanish=GAMES[game].default_deck_kind == "spanish",
        seed=seed,
        cards_after_cut=60,  # room to finish the round; the simulator reshuffles after it
    )
