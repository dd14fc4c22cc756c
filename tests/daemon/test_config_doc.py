"""docs/configuration.md lists every setting the checker reads, and nothing else."""

from __future__ import annotations

from daemon.configuration.service_config import known_settings
from rules.games import WagerKind
from rules.paytables import BonusOutcome, TwentyPointOutcome
from tests.daemon.config_documents import REFERENCE, documented_settings


def test_the_reference_lists_every_setting_the_checker_reads() -> None:
    listed = documented_settings()
    known = set(known_settings())
    assert sorted(known - listed) == [], "settings the checker reads but the reference omits"
    assert sorted(listed - known) == [], "settings the reference lists but nothing reads"


def test_the_reference_names_every_wager_and_every_paytable_line() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for name in [*WagerKind, *TwentyPointOutcome, *BonusOutcome]:
        assert f"`{name.value}`" in text, name
