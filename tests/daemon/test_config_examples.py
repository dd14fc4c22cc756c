"""Every example configuration passes `shoe2mqtt check-config`, run as a person runs it on a
table PC that holds the files the example names. Together the examples show each shoe
protocol, each transport (a capture played as a shoe among them), each game, and a PC
serving several tables."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.configuration.service_config import load_config

if TYPE_CHECKING:
    from daemon.testing import Certificates

REPO = Path(__file__).parents[2]
EXAMPLES = [
    REPO / "examples" / "shoe2mqtt.toml",
    *sorted((REPO / "examples/config").glob("*.toml")),
]
SHOE2MQTT = Path(sys.executable).parent / "shoe2mqtt"


def test_every_example_configuration_checks(tmp_path: Path, certificates: Certificates) -> None:
    # The examples name a table PC's files under /etc/shoe2mqtt/; this "PC" has them here.
    etc = tmp_path / "etc"
    etc.mkdir()
    shutil.copy(certificates.ca, etc / "ca.crt")
    (etc / "mqtt-password").write_text("s3cret\n", encoding="utf-8")
    (etc / "display-password").write_text("display-s3cret\n", encoding="utf-8")
    (etc / "captures").mkdir()
    shutil.copy(REPO / "examples/captures/enq/two-cards-one-seq.jsonl", etc / "captures")
    copies = []
    for example in EXAMPLES:
        copy = tmp_path / example.name
        copy.write_text(example.read_text(encoding="utf-8").replace("/etc/shoe2mqtt/", f"{etc}/"))
        copies.append(copy)

    result = subprocess.run(  # noqa: S603 - our own command, as the examples say to run it
        [SHOE2MQTT, "check-config", *map(str, copies)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert [line.partition(": OK: ")[0] for line in result.stdout.splitlines()] == [
        str(copy) for copy in copies
    ]

    configs = [load_config(copy, environ={}) for copy in copies]
    assert "s3cret" not in repr(configs)
    shoes = [(t.shoe, t.table.game.value) for config in configs for t in config.tables]
    assert {shoe.protocol for shoe, _ in shoes} == {"reference", "enq"}
    assert {type(shoe.transport).__name__ for shoe, _ in shoes} == {
        "SerialSettings",
        "TcpSettings",
        "UsbSettings",
        "CaptureSettings",
    }
    assert {game for _, game in shoes} == {"blackjack", "double_attack", "triple_attack"}
    assert max(len(config.tables) for config in configs) >= 4  # a PC serving several tables
