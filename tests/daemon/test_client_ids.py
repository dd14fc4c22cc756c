"""One client id per daemon, and what happens when two daemons are given the same one
(issue 14, decision D1): two `shoe2mqtt@` instances on one PC get their own ids by default;
two daemons forced onto one id say why they keep losing the broker and back off instead of
throwing each other off hundreds of times."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.reasoncodes import ReasonCode

from daemon.mqtt.settings import INSTANCE_VARIABLE, default_node
from daemon.mqtt.takeover import REPLACED_IN_A_ROW, Connections
from daemon.testing import DaemonProcess, MessageLog

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from daemon.testing import Mosquitto

SECONDS: Final = 5.0  # about as long as the issue watched two instances flap (97 each in 6 s)
QUIET_SECONDS: Final = 2.5  # two instances with their own ids: long enough to see no takeover


def _lost(reason: str) -> aiomqtt.MqttError:
    error = aiomqtt.MqttError("Disconnected during message iteration")
    error.__cause__ = aiomqtt.MqttCodeError(ReasonCode(PacketTypes.DISCONNECT, reason))
    return error


CLOSED = _lost("Unspecified error")  # how paho reports a connection the broker closed


def test_connections_replaced_in_a_row_are_reported_then_again_as_the_count_doubles() -> None:
    connections = Connections("shoe2mqtt-pc", proven_after=60)
    reports = []
    now = 0.0
    for _ in range(24):
        connections.connected(now)
        now += 1.5
        loss = connections.ended(now, CLOSED)
        assert not loss.proven
        if loss.in_use is not None:
            reports.append(loss.in_use)
    assert [r.replaced for r in reports] == [REPLACED_IN_A_ROW, 6, 12, 24]
    assert reports[0].seconds == pytest.approx(3 * 1.5)
    assert "another client is using client id 'shoe2mqtt-pc'" in reports[0].message()
    assert not reports[0].certain


def test_a_broker_that_says_session_taken_over_is_believed_at_once() -> None:
    connections = Connections("c", proven_after=60)
    connections.connected(0)
    loss = connections.ended(1, _lost("Session taken over"))
    assert loss.in_use is not None
    assert loss.in_use.certain


@pytest.mark.parametrize(
    "interruption",
    ["a proven connection", "a refused attempt", "our own timeout"],
)
def test_anything_but_a_quick_broker_close_breaks_the_streak(interruption: str) -> None:
    connections = Connections("c", proven_after=60)
    now = 0.0

    def replaced() -> bool:
        nonlocal now
        connections.connected(now)
        now += 1
        return connections.ended(now, CLOSED).in_use is not None

    assert [replaced() for _ in range(REPLACED_IN_A_ROW - 1)] == [False, False]
    if interruption == "a proven connection":
        connections.connected(now)
        now += 60
        assert connections.ended(now, CLOSED).proven
    elif interruption == "a refused attempt":
        assert not connections.ended(now, aiomqtt.MqttError("refused")).proven
    else:
        connections.connected(now)
        assert connections.ended(now + 1, aiomqtt.MqttError("Operation timed out")).in_use is None
    assert [replaced() for _ in range(REPLACED_IN_A_ROW)] == [False, False, True]


# ---------------------------------------------------------------- two daemons, one broker
def _config(tmp_path: Path, broker: Mosquitto, name: str, mqtt: dict[str, Any]) -> Path:
    lines = [
        "[mqtt]", f'host = "{broker.host}"', f"port = {broker.port}",
        *(f"{key} = {json.dumps(value)}" for key, value in mqtt.items()),
        "reconnect = { initial = 0.1, maximum = 1.0 }",
        "[logging]", 'format = "json"', 'level = "info"',
        "[journal]", f'state_directory = "{tmp_path / name}"',
        "[[table]]", f'id = "bj-{name}"', 'game = "blackjack"',
        'limits.blackjack = { min = "10", max = "500" }',
        'limits.twenty_point_bonus = { min = "5", max = "100" }',
        f'shoe = {{ protocol = "reference", transport = "serial", port = "/dev/null-{name}" }}',
    ]  # fmt: skip
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _log_lines(daemon: DaemonProcess) -> list[dict[str, Any]]:
    lines = daemon.log.read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


async def _run_two(
    tmp_path: Path,
    broker: Mosquitto,
    mqtt: dict[str, dict[str, Any]],
    env: dict[str, str],
    seconds: float = SECONDS,
    until: Callable[[dict[str, list[dict[str, Any]]], MessageLog], bool] | None = None,
) -> tuple[dict[str, list[dict[str, Any]]], MessageLog]:
    """Both daemons for `seconds`, or until `until` holds of their logs and the notices (at
    most three times `seconds`: a loaded machine starts them slowly); their log lines, and
    what a display heard of notices."""
    daemons = {
        name: DaemonProcess(_config(tmp_path, broker, name, settings), tmp_path / f"{name}.log")
        for name, settings in mqtt.items()
    }
    notices = MessageLog()
    async with aiomqtt.Client(broker.host, broker.port, identifier="display") as display:
        await display.subscribe("shoe2mqtt/+/notice/#", qos=1)
        recording = asyncio.create_task(notices.record(display), name="display")
        try:
            for name, daemon in daemons.items():
                await daemon.start({**os.environ, INSTANCE_VARIABLE: env.get(name, "")})
            if until is None:
                await asyncio.sleep(seconds)
            else:
                async with asyncio.timeout(3 * seconds):
                    while not until({n: _log_lines(d) for n, d in daemons.items()}, notices):  # noqa: ASYNC110 - two processes' log files: nothing to wait on but a poll
                        await asyncio.sleep(0.25)
            for daemon in daemons.values():
                daemon.check()
        finally:
            for daemon in daemons.values():
                await daemon.stop()
            recording.cancel()
            await asyncio.gather(recording, return_exceptions=True)
    return {name: _log_lines(d) for name, d in daemons.items()}, notices


async def test_two_instances_on_one_pc_have_their_own_client_ids_by_default(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Neither sets node nor client_id: the template unit's instance names them apart."""
    logs, notices = await _run_two(
        tmp_path, mosquitto, {"a": {}, "b": {}}, env={"a": "a", "b": "b"}, seconds=QUIET_SECONDS
    )
    host = default_node({})
    for name, lines in logs.items():
        connects = [line for line in lines if line["event"] == "mqtt.connecting"]
        assert [line["client_id"] for line in connects] == [f"shoe2mqtt-{host}-{name}"]
        assert [line["event"] for line in lines].count("mqtt.connected") == 1
    assert not [m for m in notices.messages if m.topic.endswith("/client_id_in_use")]
    assert "already connected" not in mosquitto.log()
    assert socket.gethostname()  # the default is the host's name, made a topic segment


async def test_two_daemons_forced_onto_one_client_id_back_off_and_say_why(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    twin = {"client_id": "shoe2mqtt-twin"}

    def both_told(logs: dict[str, list[dict[str, Any]]], notices: MessageLog) -> bool:
        said = all(
            any(line["event"] == "mqtt.client_id_in_use" for line in lines)
            for lines in logs.values()
        )
        return said and {m.topic for m in notices.messages} >= {
            f"shoe2mqtt/bj-{name}/notice/client_id_in_use" for name in logs
        }

    began = time.monotonic()
    logs, notices = await _run_two(
        tmp_path, mosquitto, {"a": {**twin, "node": "pc-a"}, "b": {**twin, "node": "pc-b"}}, {},
        until=both_told,
    )  # fmt: skip
    seconds = time.monotonic() - began
    takeovers = mosquitto.log().count("Client shoe2mqtt-twin already connected")
    # The issue saw 97 takeovers each in 6 s; backing off to 1 s allows about one a second.
    assert takeovers <= 2 * (seconds + 2), mosquitto.log()
    for name, lines in logs.items():
        connected = [line["event"] for line in lines].count("mqtt.connected")
        assert connected <= seconds + 3
        said = [line for line in lines if line["event"] == "mqtt.client_id_in_use"]
        assert said, f"daemon {name} never said why it keeps losing the broker"
        assert said[0]["level"] == "error"
        assert "another client is using client id 'shoe2mqtt-twin'" in said[0]["message"]
        topic = f"shoe2mqtt/bj-{name}/notice/client_id_in_use"
        pit = [m for m in notices.messages if m.topic == topic]
        assert pit, f"the pit of table bj-{name} was not told"
        assert "another client is using client id" in pit[0].body["message"]
