"""strace logs -> the event table, through the native strace2events parser.

The parse itself (fd tables, offsets, fork and dup, unfinished/resumed pairing) runs in
C (``traces/native``) because it is a sequential state machine over millions of lines;
this module streams its TSV output through pyarrow in blocks into Parquet, so memory
stays flat however long the log.
"""

from __future__ import annotations

import heapq
import json
import threading
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.csv as pacsv

from fsbm.locations import native_binary
from fsbm.traces.errors import TraceParseError
from fsbm.traces.files import open_decompressed
from fsbm.traces.schema import EVENT_SCHEMA
from fsbm.traces.vocabulary import PSEUDO_FILES

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
    # Every call of the job, file or not, and how long its processes lived and waited for
    # one another (native/timeline.h): what the untraced runtime is taken from.
    timeline: dict[str, int] = field(default_factory=dict)


def parser_binary() -> Path:
    """strace2events: $FSBM_STRACE2EVENTS, the package's bin/, or PATH."""
    return native_binary("strace2events", Path(__file__).parent)


def per_pid_suffix(path: Path) -> int | None:
    """strace -ff -o LOG writes LOG.<pid>: that pid is the actor of every line in it."""
    match = _PER_PID_SUFFIX.search(Path(path).name)
    return int(match.group(1)) if match else None


def _merged_per_pid(paths: list[Path], sink: IO[bytes]) -> None:
    """Write the per-pid logs as one -f style stream ("PID line"), in timestamp order.

    Each log is already in time order, so a k-way merge on the leading timestamp keeps
    the global order; a line without one stays behind the line before it.
    """
    def keyed(path: Path) -> Iterator[tuple[float, int, bytes]]:
        pid = str(per_pid_suffix(path)).encode()
        last = 0.0
        with open_decompressed(path) as f:
            for number, line in enumerate(f):
                stamp = line.split(b" ", 1)[0]
                try:
                    last = _seconds(stamp)
                except ValueError:
                    pass
                yield last, number, pid + b" " + line if line.endswith(b"\n") else pid + b" " + line + b"\n"

    try:
        for _, _, line in heapq.merge(*(keyed(p) for p in paths)):
            sink.write(line)
    except BrokenPipeError:
        pass  # the parser stopped early (bad input); it reports why
    finally:
        try:
            sink.close()
        except BrokenPipeError:
            pass


def _seconds(stamp: bytes) -> float:
    """A -ttt (epoch) or -t/-tt (time of day) stamp as seconds."""
    if b":" in stamp:
        h, m, s = stamp.split(b":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    return float(stamp)


class StraceReader:
    """Event batches of one strace log.  ``stats`` is set once ``batches()`` is exhausted."""

    def __init__(self, path: Path | list[Path], *, keep_going: bool = False, block_size: int = 1 << 22) -> None:
        # One log, or the per-pid logs of one strace -ff run (merged into one stream).
        self.paths = [Path(p) for p in path] if isinstance(path, list) else [Path(path)]
        self.path = self.paths[0]
        self.keep_going = keep_going
        self.block_size = block_size
        self.stats: ParseStats | None = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Raises TraceParseError on bad input (unless keep_going)."""
        path = self.path
        for p in self.paths:
            if not p.is_file():
                raise TraceParseError(p, None, "no such file" if not p.exists() else "not a regular file")
        merged = len(self.paths) > 1
        name = f"{path.parent / path.stem}.* (merged)" if merged else str(path)
        with tempfile.TemporaryDirectory(prefix="fsbm-strace-") as tmp:
            stats_path = Path(tmp) / "stats.json"
            pseudo = [arg for _, prefixes in PSEUDO_FILES for prefix in prefixes for arg in ("--pseudo", prefix)]
            command = [str(parser_binary()), "--name", name, "--stats", str(stats_path),
                       "--pid", str(per_pid_suffix(path) or 0), *pseudo, "-" if merged else str(path)]
            if self.keep_going:
                command.insert(1, "--keep-going")
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.PIPE if merged else subprocess.DEVNULL)
            assert proc.stdout is not None and proc.stderr is not None
            if merged:
                assert proc.stdin is not None
                feeder = threading.Thread(target=_merged_per_pid, args=(self.paths, proc.stdin), daemon=True)
                feeder.start()
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
                    # The parser may be blocked writing rows no one reads: closing them lets it end.
                    proc.stdout.close()
                    _raise_failure(proc, Path(name), proc.stderr.read().decode(errors="replace") or str(exc))
            finally:
                proc.stdout.close()
                stderr = proc.stderr.read().decode(errors="replace")
                proc.stderr.close()
                proc.wait()
            if proc.returncode != 0:
                _raise_failure(proc, Path(name), stderr)
            self.stats = ParseStats(**json.loads(stats_path.read_text()))


def _raise_failure(proc: subprocess.Popen, path: Path, stderr: str) -> None:
    proc.wait()
    lines = [line for line in stderr.strip().splitlines() if line]
    message = lines[-1] if lines else f"strace2events exited {proc.returncode}"
    match = re.match(re.escape(str(path)) + r":(\d+): (.*)$", message)
    if match:
        raise TraceParseError(path, int(match.group(1)), match.group(2))
    raise TraceParseError(path, None, message.removeprefix(f"{path}: "))
