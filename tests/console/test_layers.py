"""The dealer console is a client of the daemon like the pit display: it may use the wire
contract, the broker client, the configuration file's reader, the web server's parts the two
share (daemon/web/), and of the display its model and its words; never the display's server
or process, nor the table, the journal or the service."""

from __future__ import annotations

from tests.test_import_cycles import DISPLAY_MAY_IMPORT, project_graph

CONSOLE_MAY_IMPORT = (
    *(allowed for allowed in DISPLAY_MAY_IMPORT if allowed != "daemon.display"),
    "daemon.display.model",
    "daemon.display.wording",
    "daemon.dealer_console",
)


def test_the_console_uses_only_the_wire_contract_the_broker_and_the_displays_model() -> None:
    reaching = sorted(
        f"{name} imports {other}"
        for name, imported in project_graph().items()
        if name.startswith("daemon.dealer_console")
        for other in imported
        if other.startswith("daemon.") and not other.startswith(CONSOLE_MAY_IMPORT)
    )
    assert reaching == []
