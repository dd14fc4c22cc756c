"""The display's tests use the daemon tests' real mosquitto and the module's one browser."""

from tests.daemon.conftest import (  # noqa: F401 - imported to be used as fixtures here
    certificates,
    mosquitto,
    persistent_mosquitto,
)
from tests.display.browser import browser  # noqa: F401 - a fixture
