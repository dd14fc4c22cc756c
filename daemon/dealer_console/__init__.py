"""The dealer console: a touch page at one table that sends the dealer's requests
(docs/console.md).

Offers its configuration (`[console]` of the TOML file); the process itself is
`daemon.dealer_console.service`, imported on its own so that loading a configuration does not
load the web server.
"""

from daemon.dealer_console.config import ConsoleConfig, ConsoleSettings, load_console_config

__all__ = ["ConsoleConfig", "ConsoleSettings", "load_console_config"]
