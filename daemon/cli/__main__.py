"""`python -m daemon.cli COMMAND ...`: the `shoe2mqtt` command without its installed script."""

import sys

from daemon.cli import main

sys.exit(main())
