"""Fixtures of the driver tests."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
import structlog
from structlog.testing import capture_logs

if TYPE_CHECKING:
    from collections.abc import Iterator, MutableMapping


@pytest.fixture
def driver_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """Every structlog line at every level, with its logger's name (`logger`), whatever an
    earlier test configured; nothing reaches the standard library meanwhile.

    The drivers' standard-library loggers go to DEBUG too: a codec asks them before it
    builds a DEBUG line, since that is where its lines end up outside a test.
    """
    saved = structlog.get_config()
    drivers = logging.getLogger("drivers")
    level = drivers.level
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(0))
    drivers.setLevel(logging.DEBUG)
    try:
        with capture_logs(processors=[structlog.stdlib.add_logger_name]) as captured:
            yield captured
    finally:
        drivers.setLevel(level)
        structlog.configure(**saved)
