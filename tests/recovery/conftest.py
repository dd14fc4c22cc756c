"""The recovery tests use the daemon tests' brokers: a real mosquitto on a free port."""

from tests.daemon.conftest import mosquitto, persistent_mosquitto

__all__ = ["mosquitto", "persistent_mosquitto"]
