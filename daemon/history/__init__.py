"""The journal read back through the table (daemon.table.runner): what `shoe2mqtt journal`
reads (`audit`: rounds live and archived, show, export, verify) and the archive's writing
(`archiver`, the process that writes the round logs; `archiving`, the daemon's side of it).
The journal itself (daemon/journal/) is storage only."""
