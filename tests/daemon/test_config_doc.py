"""docs/configuration.md lists every setting the checker reads, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from daemon.config import known_settings
from rules.games import WagerKind
from rules.paytables import BonusOutcome, TwentyPointOutcome

REFERENCE = Path(__file__).parents[2] / "docs" / "configuration.md"
SETTING_ROW = re.compile(r"\| `(?P<name>[a-z_]+\.[a-z0-9_.<>]+)` \|")


def test_the_reference_lists_every_setting_the_checker_reads() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    listed = {match["name"] for match in SETTING_ROW.finditer(text)}
    known = set(known_settings())
    assert sorted(known - listed) == [], "settings the checker reads but the reference omits"
    assert sorted(listed - known) == [], "settings the reference lists but nothing reads"


def test_the_reference_names_every_wager_and_every_paytable_line() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for name in [*WagerKind, *TwentyPointOutcome, *BonusOutcome]:
        assert f"`{name.value}`" in text, name
