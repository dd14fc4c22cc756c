"""daemon.testing, the harness tests and benchmarks share, stands on its own."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from daemon.configuration.service_config import load_config
from daemon.numbers.settings import NumbersConfig
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing import Mosquitto, write_service_config
from daemon.testing.broker import restartable_port
from drivers.transports import SerialSettings


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
        numbers=NumbersConfig(shifts=("05:00", "13:00", "21:00"), timezone="Europe/Malta"),
    )  # fmt: skip
    config = load_config(path, environ={})
    assert (config.mqtt.host, config.mqtt.port, config.mqtt.node) == (broker.host, broker.port, "c")
    assert config.state_directory == tmp_path / "state"
    assert config.numbers == NumbersConfig(("05:00", "13:00", "21:00"), "Europe/Malta")
    assert [t.table.table_id for t in config.tables] == [m["id"] for m in DEMO_TABLES.values()]
    assert [t.shoe.transport for t in config.tables] == [
        SerialSettings(f"/dev/ttyUSB{n}", baudrate=115200) for n in range(len(tables))
    ]


def test_a_brokers_port_is_above_the_ports_the_kernel_gives_outgoing_connections() -> None:
    """A broker stopped and started again on its port must find it free: an outgoing
    connection's local port, which the kernel takes from its ephemeral range, never is it."""
    high = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[1])
    ports = {restartable_port() for _ in range(20)}
    assert min(ports) > high
    assert len(ports) > 1  # not one port every worker would race for
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", port))  # nothing listens on it
