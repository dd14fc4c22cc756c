"""`shoe2mqtt report --archive DIR...`: a floor's numbers, read and counted with DuckDB
(daemon/numbers/floor.py, floor_sql.py); `--export parquet --output DIR` writes them as
Parquet."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from daemon.cli.command import failure
from daemon.cli.exit_codes import ExitCode
from daemon.numbers import floor, floor_sql

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

    from daemon.numbers.periods import Shifts
    from daemon.numbers.tally import Numbers


def floor_report(
    args: argparse.Namespace,
    shifts: Shifts,
    posted: dict[str, str],
    confidence: float,
    out: TextIO,
    err: TextIO,
    write_report: Callable[[list[Numbers], argparse.Namespace, float, TextIO, TextIO], ExitCode],
) -> ExitCode:
    """`write_report`: the report command's own output (text, CSV, JSON, the chart)."""
    began = time.monotonic()
    try:
        con = floor.connect(list(args.archive))
    except floor.FloorError as exc:
        return failure(err, "report", exc)
    try:
        if args.export is not None:
            written = floor.export(con, args.output, args.first_day, args.last_day)
            counts = ", ".join(f"{n:,} {name}" for name, n in written.items())
            out.write(f"exported {counts} to {args.output} in {time.monotonic() - began:.1f} s\n")
            return ExitCode.OK
        # Counted inside DuckDB: Python gets each group's sums (floor_sql.py).
        groups = floor_sql.floor_numbers(
            con, args.by, shifts, posted, args.table, (args.first_day, args.last_day)
        )
    except floor.DuckError as exc:
        return failure(err, "report", exc)
    finally:
        con.close()
    return write_report(groups, args, confidence, out, err)
