"""rich's console for the commands that draw with it (demo, watch), imported only by them:
rich is not loaded for the commands that never draw."""

from __future__ import annotations

from rich.console import Console

from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import drop_standard_output


class PipedConsole(Console):
    """Ends the command as `main` does when the reader of standard output goes away
    (`| head`): quietly, with status 0 (rich's own default is 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        drop_standard_output()
        raise SystemExit(ExitCode.OK)
