"""Shared by the deployment tests: an install into a throwaway root."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.built_once import built_once
from tests.deploy.layout import run_script

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real install (a venv with shoe2mqtt and its locked dependencies), shared read-only
    by every worker of the session."""
    return built_once(tmp_path_factory, "installed", lambda root: run_script("install", root))
