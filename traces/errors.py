"""Errors a trace parser raises: which file, which line or packet, what was expected."""

from __future__ import annotations

from pathlib import Path

from fsbm.errors import UsageError


class TraceParseError(UsageError):
    """Bad trace input (exit code 2).  ``position`` is a line or packet number, or None: then
    the fault is the file's as a whole (missing, not a trace, damaged), which skipping records
    cannot mend, so no --keep-going hint is given."""

    def __init__(self, path: Path | str, position: int | None, reason: str, *, unit: str = "line") -> None:
        where = f"{path}:{position}" if position is not None else str(path)
        hint = "pass --keep-going to skip bad records and keep the rest" if position is not None else None
        super().__init__(f"{where}: {reason}", hint=hint)
        self.path = Path(path)
        self.position = position
        self.reason = reason
        self.unit = unit
