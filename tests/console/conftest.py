"""The console's tests: the module's one browser, one mosquitto for the module, and the
example broker of docs/mosquitto (TLS, users, ACL) where the broker's rights are the point."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from daemon.testing import Mosquitto
from tests.display.browser import browser  # noqa: F401 - a fixture
from tests.security.conftest import secure_broker  # noqa: F401 - a fixture

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def shared_mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """One broker for the module: each test runs a table (and a daemon) of its own on it."""
    with Mosquitto(tmp_path_factory.mktemp("console-broker")) as broker:
        yield broker
