"""SIGHUP's work: the configuration file read again, what is safe applied now, the rest named
as waiting for a restart (daemon.configuration.reload plans it; this applies the plan to the running
parts: the log, the request gate, each table's inbox, timers and game settings, the bridge
info), and a note for the status line."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import structlog

from daemon.configuration.file import ConfigErrors
from daemon.configuration.reload import log_plan, plan_reload
from daemon.configuration.service_config import load_config
from daemon.system import logs
from daemon.table.records import ConfigRecord

if TYPE_CHECKING:
    from collections.abc import Mapping

    from daemon.configuration.service_config import ServiceConfig
    from daemon.parts.bridge_announcer import BridgeAnnouncer
    from daemon.parts.items import ServedTable
    from daemon.request_gate import RequestGate

log = structlog.get_logger("daemon")


class Reloading:
    """The configuration the daemon runs, and what its last reload left to say (`note`)."""

    def __init__(
        self,
        config: ServiceConfig,
        gate: RequestGate,
        tables: Mapping[str, ServedTable],
        bridge: BridgeAnnouncer,
    ) -> None:
        self.config = config
        self.gate = gate
        self.tables = tables
        self.bridge = bridge
        self.note: str | None = None  # for `systemctl status`: a refusal, a restart due

    def reload(self) -> None:
        """Read the file again and apply what may change now."""
        try:
            fresh = load_config(self.config.path)
        except ConfigErrors as exc:
            log.error(  # noqa: TRY400 - the mistakes are the message, not a traceback
                "config.reload_refused",
                errors=[str(e) for e in exc.errors],
                host_problems=[str(e) for e in exc.host_problems],
                running_sha256=self.bridge.info.config_sha256,
            )
            count = len(exc.errors) + len(exc.host_problems)
            self.note = (
                f"reload refused ({count} mistake{'s' if count != 1 else ''} in "
                f"{self.config.path}, the log names them); the earlier settings run"
            )
            return
        plan = plan_reload(self.config, fresh)
        running = plan.running
        if plan.logging:
            logging = running.logging
            logs.configure(fmt=logging.format, level=logging.level, raw_frames=logging.raw_frames)
        if plan.requests:
            self.gate.retune(running.requests)
        for table in self.tables.values():
            if plan.requests:
                table.queue.request_capacity = running.requests.queue
            if plan.timing:
                table.timers.retime(running.timing.seconds())
        for setup in plan.games:
            # Journaled and applied in the table's order: at once between rounds, else when
            # the round in progress ends.
            table = self.tables[setup.table.table_id]
            table.setup = setup
            table.queue.put_nowait(ConfigRecord(setup.table, self.config.mqtt.contract))
        self.config = running
        log_plan(plan)
        info = dataclasses.replace(
            self.bridge.info, config_sha256=running.sha256, restart_needed=plan.restart_needed
        )
        self.bridge.update(info)
        waiting = ", ".join(plan.restart_needed)
        self.note = f"restart needed for: {waiting}" if waiting else None
