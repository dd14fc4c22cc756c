"""What the pit display and the dealer console share as web servers: the login guard, the
security headers, the pages' files and shared look, the live stream of Server-Sent Events,
and the process that serves them beside the broker until it is stopped.

It imports nothing of either of them, nor of the service (tests/test_import_cycles.py)."""

from daemon.web.files import add_files
from daemon.web.headers import security_headers
from daemon.web.login_guard import LoginGuard, Wait
from daemon.web.site import serving, until_stopped, url_of
from daemon.web.stream import Changes, EventStream

__all__ = [
    "Changes",
    "EventStream",
    "LoginGuard",
    "Wait",
    "add_files",
    "security_headers",
    "serving",
    "until_stopped",
    "url_of",
]
