"""What a reload (SIGHUP, `systemctl reload`) changes in a running daemon, setting by setting.

`plan_reload(running, fresh)` compares the settings the daemon runs with those of the file
just read and says, for every difference, what becomes of it (docs/deploy.md, "Reload"):

- **at once**: `[logging]`; `[requests]` (each table's rate, burst and queue, from the next
  request on); `[timing]` (for the waits that begin from now on: one already running keeps
  the deadline it began with);
- **at the end of the round in progress**: a table's game settings (journaled and applied
  in the table's own order, at once between rounds);
- **at the next restart**: `[mqtt]` (the broker connection and the names the tables are
  announced under), `[metrics]` (a listening socket), `[journal]` (where and how every
  event is kept: never changed under a running table), a table's shoe (its reader is open),
  and a table added or removed (a table is recovered from the journal, subscribed to and
  announced as the daemon starts; one removed mid-round would strand its round);
- **not the daemon's**: `[display]`, which `shoe2mqtt display` reads at its own start.

The plan's `running` is what the daemon runs once the plan is applied: the fresh file's
settings where they apply now (or at the round's end), the old ones where they wait.
`restart_needed` names what waits, for the log, `systemctl status` and the bridge info.
Sans-I/O: the daemon applies the plan (daemon.service) and `log_plan` says each part.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from daemon.configuration.service_config import TableSetup

if TYPE_CHECKING:
    from collections.abc import Iterator

    from daemon.configuration.service_config import ServiceConfig

log = structlog.get_logger("daemon")

# `[journal]` as the file spells it, by the ServiceConfig field that holds it.
_JOURNAL_SETTINGS = {
    "state_directory": "state_directory",
    "outbox_limit": "outbox_limit",
    "journal_sync": "sync",
    "keep_days": "keep_days",
    "archive_directory": "archive_directory",
}


@dataclass(frozen=True, slots=True)
class Waiting:
    """A change that waits for a restart: a section, or a table's shoe, added or removed."""

    section: str  # mqtt, metrics, surveillance, journal, shoe, table
    settings: tuple[str, ...] = ()  # which settings of the section differ
    table: str | None = None
    change: str = "changed"  # a table: added or removed

    def describe(self) -> str:
        if self.table is None:
            return self.section
        if self.section == "shoe":
            return f"table {self.table} shoe"
        return f"table {self.table} {self.change}"


@dataclass(frozen=True, slots=True)
class ReloadPlan:
    running: ServiceConfig  # what runs once the plan is applied
    logging: bool  # [logging] changed: running.logging is the new one
    requests: bool
    timing: bool
    games: tuple[TableSetup, ...]  # tables whose game settings change at the end of the round
    waiting: tuple[Waiting, ...]
    display: bool  # [display] changed: the display's to read, not the daemon's

    @property
    def restart_needed(self) -> tuple[str, ...]:
        return tuple(w.describe() for w in self.waiting)


def plan_reload(running: ServiceConfig, fresh: ServiceConfig) -> ReloadPlan:
    """What becomes of each difference between the settings that run and those of `fresh`."""
    waiting = [*_waiting_sections(running, fresh), *_waiting_tables(running, fresh)]
    games: list[TableSetup] = []
    tables: list[TableSetup] = []
    fresh_tables = {setup.table.table_id: setup for setup in fresh.tables}
    for setup in running.tables:
        new = fresh_tables.get(setup.table.table_id)
        if new is not None and new.table != setup.table:
            setup = TableSetup(new.table, setup.shoe)  # noqa: PLW2901 - the one that runs
            games.append(setup)
        tables.append(setup)
    kept = dataclasses.replace(
        running,
        logging=fresh.logging,
        requests=fresh.requests,
        timing=fresh.timing,
        tables=tuple(tables),
        sha256=fresh.sha256,
        display_section=fresh.display_section,
        deprecations=fresh.deprecations,
    )
    return ReloadPlan(
        kept,
        logging=fresh.logging != running.logging,
        requests=fresh.requests != running.requests,
        timing=fresh.timing != running.timing,
        games=tuple(games),
        waiting=tuple(waiting),
        display=fresh.display_section != running.display_section,
    )


def _waiting_sections(running: ServiceConfig, fresh: ServiceConfig) -> Iterator[Waiting]:
    mqtt = _differing(running.mqtt, fresh.mqtt)
    if mqtt:
        yield Waiting("mqtt", mqtt)
    metrics = _differing(running.metrics, fresh.metrics)
    if metrics:
        yield Waiting("metrics", metrics)
    # The tables' surveillance takes its settings as the journal is replayed, so that a
    # replay weighs the seats as the live table did since the start (daemon.table.surveillance).
    surveillance = _differing(running.surveillance, fresh.surveillance)
    if surveillance:
        yield Waiting("surveillance", surveillance)
    journal = tuple(
        name
        for field_name, name in _JOURNAL_SETTINGS.items()
        if getattr(running, field_name) != getattr(fresh, field_name)
    )
    if journal:
        yield Waiting("journal", journal)


def _waiting_tables(running: ServiceConfig, fresh: ServiceConfig) -> Iterator[Waiting]:
    serving = {setup.table.table_id: setup for setup in running.tables}
    configured = {setup.table.table_id: setup for setup in fresh.tables}
    for table_id, setup in serving.items():
        new = configured.get(table_id)
        if new is None:
            yield Waiting("table", table=table_id, change="removed")
        elif new.shoe != setup.shoe:
            yield Waiting("shoe", _differing(setup.shoe, new.shoe), table=table_id)
    for table_id in configured:
        if table_id not in serving:
            yield Waiting("table", table=table_id, change="added")


def _differing(old: Any, new: Any) -> tuple[str, ...]:  # noqa: ANN401 - any settings dataclass
    """The fields of two settings of one dataclass that differ (`transport`: its kind too)."""
    if type(old) is not type(new):
        return ("transport",)
    return tuple(
        f.name for f in dataclasses.fields(old) if getattr(old, f.name) != getattr(new, f.name)
    )


def log_plan(plan: ReloadPlan) -> None:
    """One line for each part of the plan, then one for the whole: what runs, what waits."""
    running = plan.running
    if plan.logging:
        log.info("config.reload_applied", section="logging", **_mapping(running.logging))
    if plan.requests:
        log.info("config.reload_applied", section="requests", **_mapping(running.requests))
    if plan.timing:
        log.info("config.reload_applied", section="timing", **_mapping(running.timing))
    for setup in plan.games:
        log.info("config.reload_queued", section="table", table=setup.table.table_id)
    for waiting in plan.waiting:
        log.warning(
            "config.reload_needs_restart",
            section=waiting.section,
            **({"table": waiting.table, "change": waiting.change} if waiting.table else {}),
            **({"settings": list(waiting.settings)} if waiting.settings else {}),
        )
    for note in running.deprecations:
        log.warning("config.deprecated", where=f"{note.path}:{note.line}", field=note.field,
                    message=note.message)  # fmt: skip
    if plan.display:
        log.info("config.reload_not_daemons", section="display", restart="shoe2mqtt-display")
    log.info(
        "config.reloaded",
        config_sha256=running.sha256,
        tables=[setup.table.table_id for setup in running.tables],
        restart_needed=list(plan.restart_needed),
    )


def _mapping(settings: Any) -> dict[str, Any]:  # noqa: ANN401 - any settings dataclass
    return dataclasses.asdict(settings)
