"""The display's tests use the suite's real mosquitto (tests/conftest.py) and the module's one
browser."""

from tests.display.browser import browser  # noqa: F401 - a fixture
