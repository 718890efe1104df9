"""strace logs -> the event table, through the native strace2events parser.

The parse itself (fd tables, offsets, fork and dup, unfinished/resumed pairing) runs in
C (``traces/native``) because it is a sequential state machine over millions of lines;
this module streams its TSV output through pyarrow in blocks into Parquet, so memory
stays flat however long the log.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from fsbm.locations import native_binary
from fsbm.traces.errors import TraceParseError
from fsbm.traces.schema import EVENT_SCHEMA

_TSV_TYPES = {name: EVENT_SCHEMA.field(name).type for name in EVENT_SCHEMA.names}
_TSV_TYPES["actor"] = pa.string()
_PER_PID_SUFFIX = re.compile(r"\.(\d+)$")


@dataclass
class ParseStats:
    """What a parse saw, beyond the events: counts of everything skipped and why."""

    lines: int = 0
    events: int = 0
    bad_lines: int = 0
    ignored_calls: int = 0
    signals: int = 0
    exits: int = 0
    restarted: int = 0
    resumed_without_start: int = 0
    lost_unfinished: int = 0
    unfinished_at_end: int = 0
    ts_origin: str = "none"
    first_errors: list[str] = field(default_factory=list)


def parser_binary() -> Path:
    """strace2events: $FSBM_STRACE2EVENTS, the package's bin/, or PATH."""
    return native_binary("strace2events", Path(__file__).parent)


def _default_pid(path: Path) -> int:
    """strace -ff -o LOG writes LOG.<pid>: that pid is the actor of every line."""
    match = _PER_PID_SUFFIX.search(path.name)
    return int(match.group(1)) if match else 0


class StraceReader:
    """Event batches of one strace log.  ``stats`` is set once ``batches()`` is exhausted."""

    def __init__(self, path: Path, *, keep_going: bool = False, block_size: int = 1 << 22) -> None:
        self.path = Path(path)
        self.keep_going = keep_going
        self.block_size = block_size
        self.stats: ParseStats | None = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Raises TraceParseError on bad input (unless keep_going)."""
        path = self.path
        if not path.is_file():
            raise TraceParseError(path, None, "no such file" if not path.exists() else "not a regular file")
        with tempfile.TemporaryDirectory(prefix="fsbm-strace-") as tmp:
            stats_path = Path(tmp) / "stats.json"
            command = [str(parser_binary()), "--name", str(path), "--stats", str(stats_path),
                       "--pid", str(_default_pid(path)), str(path)]
            if self.keep_going:
                command.insert(1, "--keep-going")
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL)
            assert proc.stdout is not None and proc.stderr is not None
            try:
                reader = pacsv.open_csv(
                    proc.stdout,
                    read_options=pacsv.ReadOptions(column_names=EVENT_SCHEMA.names, block_size=self.block_size),
                    parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False),
                    convert_options=pacsv.ConvertOptions(column_types=_TSV_TYPES, null_values=[""],
                                                         strings_can_be_null=True),
                )
                for batch in reader:
                    yield pa.RecordBatch.from_arrays(batch.columns, schema=EVENT_SCHEMA)
            except pa.ArrowInvalid as exc:
                if "Empty CSV file" not in str(exc):
                    _raise_failure(proc, path, proc.stderr.read().decode(errors="replace") or str(exc))
            finally:
                proc.stdout.close()
                stderr = proc.stderr.read().decode(errors="replace")
                proc.wait()
            if proc.returncode != 0:
                _raise_failure(proc, path, stderr)
            self.stats = ParseStats(**json.loads(stats_path.read_text()))


def _raise_failure(proc: subprocess.Popen, path: Path, stderr: str) -> None:
    proc.wait()
    lines = [line for line in stderr.strip().splitlines() if line]
    message = lines[-1] if lines else f"strace2events exited {proc.returncode}"
    match = re.match(re.escape(str(path)) + r":(\d+): (.*)$", message)
    if match:
        raise TraceParseError(path, int(match.group(1)), match.group(2))
    raise TraceParseError(path, None, message.removeprefix(f"{path}: "))
