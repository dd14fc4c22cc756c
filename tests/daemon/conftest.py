"""Fixtures of the daemon's tests: a real journal, made once for the tests that read it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.daemon.journals import RealJournal, real_journal

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def made_journal(tmp_path_factory: pytest.TempPathFactory) -> RealJournal:
    """Three rounds played at a real pit, the first two archived (tests/daemon/journals.py).
    Read only: a test that edits it works on a copy (`journal_copy`)."""
    return real_journal(tmp_path_factory.mktemp("real-journal"))


@pytest.fixture
def journal_copy(made_journal: RealJournal, tmp_path: Path) -> RealJournal:
    """A copy of the real journal that a test may change."""
    import dataclasses
    import shutil

    state = tmp_path / "state"
    shutil.copytree(made_journal.state, state)
    return dataclasses.replace(made_journal, state=state, archive=state / "archive")
