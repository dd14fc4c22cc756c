"""What this repository's tests and benchmarks share: development-only, never in the wheel.

pyproject.toml leaves this package out of the wheel (it spawns openssl, mosquitto and socat
and carries a fixed passphrase; nobody downstream tests against this application), and no
module the wheel ships imports it (tests/deploy/test_wheel.py). The checkout's editable
install has it, so the suite and bench/ import it as `daemon.testing`.

Everything here runs real parts on this machine: Debian's mosquitto on a free loopback port
(`Mosquitto`, with a throwaway CA for TLS from `make_certificates`), the daemon as a child
process started from a TOML file (`DaemonProcess`, `write_service_config`), a serial cable
that can be pulled out (`SocatPair`), shoes behind TCP ports as serial device servers serve
them (`DeviceServers`), a console gone wrong that floods a request topic (`Flood`), a link
that drops every connection after a while (`CuttingProxy`), and MQTT
clients that record what reaches them (`MessageLog`, `Collector`: one `Received` per message). A
recovery run (`recovery_run`) adds a dealer (`daemon.simulator.ConsoleSimulator`, the one the
demo plays with, seeing the broker through the `Collector`) that plays a table through kills,
broker restarts and unplugs, and a verdict (`verify`) that holds what was delivered against
a replay of the journal. `daemon.testing.interleaving` is the ground-truth harness
(docs/testing.md): the real table service fed a table's two streams in every order their
delays allow, with faults, and held to what physically happened. Nothing here imports
pytest: a benchmark runs it as a script.
"""

from daemon.cli.loopback import free_port
from daemon.simulator import BURN, SHUFFLE, ConsoleSimulator, Disturbance, wager_plan
from daemon.testing.broker import (
    MOSQUITTO,
    BrokerDidNotStart,
    Mosquitto,
    Subscribe,
    Subscriber,
    subscriber,
)
from daemon.testing.device_servers import DeviceServers
from daemon.testing.flood import Flood, FloodResult
from daemon.testing.pki import Certificates, make_certificates
from daemon.testing.process import DaemonCrashed, DaemonProcess, Endpoint, write_service_config
from daemon.testing.proxy import CuttingProxy
from daemon.testing.recorder import (
    STEP_TIMEOUT,
    Collector,
    MessageLog,
    Received,
    Stalled,
    response_to,
    until,
)
from daemon.testing.recovery import (
    TABLE_ID,
    TABLE_SETTINGS,
    RecoveryRun,
    random_moment,
    recovery_run,
    table_config,
)
from daemon.testing.socat import SOCAT, SocatPair
from daemon.testing.verdict import (
    Replay,
    Verdict,
    check_sequence,
    content,
    journal_events_done,
    journal_pending,
    replay_journal,
    settlement_key,
    verify,
)

__all__ = [
    "BURN",
    "MOSQUITTO",
    "SHUFFLE",
    "SOCAT",
    "STEP_TIMEOUT",
    "TABLE_ID",
    "TABLE_SETTINGS",
    "BrokerDidNotStart",
    "Certificates",
    "Collector",
    "ConsoleSimulator",
    "CuttingProxy",
    "DaemonCrashed",
    "DaemonProcess",
    "DeviceServers",
    "Disturbance",
    "Endpoint",
    "Flood",
    "FloodResult",
    "MessageLog",
    "Mosquitto",
    "Received",
    "RecoveryRun",
    "Replay",
    "SocatPair",
    "Stalled",
    "Subscribe",
    "Subscriber",
    "Verdict",
    "check_sequence",
    "content",
    "free_port",
    "journal_events_done",
    "journal_pending",
    "make_certificates",
    "random_moment",
    "recovery_run",
    "replay_journal",
    "response_to",
    "settlement_key",
    "subscriber",
    "table_config",
    "until",
    "verify",
    "wager_plan",
    "write_service_config",
]
