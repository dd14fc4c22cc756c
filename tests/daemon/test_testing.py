"""daemon.testing, the harness tests and benchmarks share, stands on its own."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from daemon.configuration.service_config import load_config
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing import Mosquitto, write_service_config
from drivers.transports import SerialSettings

if TYPE_CHECKING:
    from pathlib import Path


def test_it_imports_without_pytest() -> None:
    """A benchmark runs it as a plain script, and an installed wheel has no pytest."""
    check = "import sys, daemon.testing; sys.exit('pytest' in sys.modules)"
    subprocess.run([sys.executable, "-c", check], check=True, timeout=30)  # noqa: S603 - ours


def test_the_service_config_it_writes_is_one_the_daemon_loads(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mosquitto")  # not started: only its address is written
    tables = [(mapping, f"/dev/ttyUSB{n}") for n, mapping in enumerate(DEMO_TABLES.values())]
    path = write_service_config(
        tmp_path / "shoe2mqtt.toml", broker, node="c", state_directory=tmp_path / "state",
        tables=tables, reconnect=(0.05, 0.5), baudrate=115200,
    )  # fmt: skip
    config = load_config(path, environ={})
    assert (config.mqtt.host, config.mqtt.port, config.mqtt.node) == (broker.host, broker.port, "c")
    assert config.state_directory == tmp_path / "state"
    assert [t.table.table_id for t in config.tables] == [m["id"] for m in DEMO_TABLES.values()]
    assert [t.shoe.transport for t in config.tables] == [
        SerialSettings(f"/dev/ttyUSB{n}", baudrate=115200) for n in range(len(tables))
    ]
