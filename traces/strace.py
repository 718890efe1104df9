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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from fsbm.locations import native_binary
from fsbm.traces.errors import TraceParseError
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
    timeline: dict[str, Any] = field(default_factory=dict)


# The key of a timeline's second reading of the same calls, their durations left out
# (timeline.h): what a log with -T tells read as if it had none (predictor/tracing.py).
UNTIMED_READING = "untimed"


def with_span(timeline: dict[str, Any], span_ns: int) -> None:
    """Set the span of a timeline the parses of several process groups added up: the run's,
    in both of its readings."""
    for reading in (timeline, timeline.get(UNTIMED_READING)):
        if reading:
            reading["span_ns"] = span_ns


# strace -T's call duration at the end of a line.
CALL_DURATION = re.compile(rb" <\d+\.\d+>$", re.MULTILINE)


def without_call_durations(log: bytes) -> bytes:
    """A strace log with every call's duration taken out: the log strace without -T writes
    of the same run (how the untimed form is judged against the timed one)."""
    return CALL_DURATION.sub(b"", log)


def parser_binary() -> Path:
    """strace2events: $FSBM_STRACE2EVENTS, the package's bin/, or PATH."""
    return native_binary("strace2events", Path(__file__).parent)


def per_pid_suffix(path: Path) -> int | None:
    """strace -ff -o LOG writes LOG.<pid>: that pid is the actor of every line in it."""
    match = _PER_PID_SUFFIX.search(Path(path).name)
    return int(match.group(1)) if match else None


def run_name(paths: Path | Sequence[Path]) -> str:
    """How a trace of one file, or of the per-pid logs of one strace -ff run, is named."""
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if len(paths) == 1:
        return str(paths[0])
    return f"{paths[0].with_suffix('')}.* ({len(paths)} per-process logs)"


def write_log_list(logs: list[Path], path: Path) -> Path:
    """The list strace2events --logs reads: one "PID<TAB>PATH" a line."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        for log in logs:
            f.write(f"{per_pid_suffix(log)}\t{Path(log).resolve()}\n")
    return path


def pseudo_arguments() -> list[str]:
    """--pseudo PREFIX for every kind of file that is not filesystem work."""
    return [arg for _, prefixes in PSEUDO_FILES for prefix in prefixes for arg in ("--pseudo", prefix)]


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
        with tempfile.TemporaryDirectory(prefix="fsbm-strace-") as tmp:
            if len(self.paths) > 1:  # strace -ff: strace2events merges the logs in time order
                source = ["--logs", str(write_log_list(self.paths, Path(tmp) / "logs"))]
            else:
                source = ["--pid", str(per_pid_suffix(path) or 0), str(path)]
            parse = ParserRun(source, run_name(self.paths), EVENT_SCHEMA, Path(tmp) / "stats.json", keep_going=self.keep_going,
                              block_size=self.block_size, logs=self.paths if len(self.paths) > 1 else ())
            yield from parse
            self.stats = parse.stats


class ParserRun:
    """One run of strace2events: its rows as record batches of `schema`, then its counts.

    `arguments` say what to read (a log, or --logs and the options of a process group's
    parse); the rows stream through pyarrow's CSV reader in blocks, so memory stays flat."""

    def __init__(self, arguments: Sequence[str], name: str, schema: pa.Schema, stats_path: Path, *,
                 keep_going: bool = False, block_size: int = 1 << 22, logs: Sequence[Path] = ()) -> None:
        self.command = [str(parser_binary()), "--name", name, "--stats", str(stats_path), *pseudo_arguments(),
                        *(["--keep-going"] if keep_going else []), *arguments]
        self.name, self.schema, self.stats_path, self.block_size = name, schema, stats_path, block_size
        self.logs = [Path(log).resolve() for log in logs]  # per-process logs, as the parser names them
        self.stats: ParseStats | None = None
        self.first_ns = self.last_ns = 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        types = {**_TSV_TYPES, **{f.name: f.type for f in self.schema if f.name not in _TSV_TYPES}}
        proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None and proc.stderr is not None
        try:
            reader = pacsv.open_csv(
                proc.stdout,
                read_options=pacsv.ReadOptions(column_names=self.schema.names, block_size=self.block_size),
                parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False),
                convert_options=pacsv.ConvertOptions(column_types=types, null_values=[""], strings_can_be_null=True),
            )
            for batch in reader:
                yield pa.RecordBatch.from_arrays(batch.columns, schema=self.schema)
        except pa.ArrowInvalid as exc:
            if "Empty CSV file" not in str(exc):
                # The parser may be blocked writing rows no one reads: closing them lets it end.
                proc.stdout.close()
                _raise_failure(proc, Path(self.name), proc.stderr.read().decode(errors="replace") or str(exc),
                               self.logs)
        finally:
            proc.stdout.close()
            stderr = proc.stderr.read().decode(errors="replace")
            proc.stderr.close()
            proc.wait()
        if proc.returncode != 0:
            _raise_failure(proc, Path(self.name), stderr, self.logs)
        counts = json.loads(self.stats_path.read_text())
        # When the timeline began and ended, apart: what joins the timelines of process groups.
        # Its reading without durations holds the same calls, so the same ends.
        timeline = counts.get("timeline", {})
        self.first_ns, self.last_ns = timeline.pop("first_ns", 0), timeline.pop("last_ns", 0)
        for key in ("first_ns", "last_ns"):
            timeline.get(UNTIMED_READING, {}).pop(key, None)
        self.stats = ParseStats(**counts)


def _raise_failure(proc: subprocess.Popen, path: Path, stderr: str, logs: Sequence[Path] = ()) -> None:
    """The parser's last complaint as a TraceParseError naming the file it was about: the run
    (`path`), or one of the per-process `logs` it read."""
    proc.wait()
    lines = [line for line in stderr.strip().splitlines() if line]
    message = lines[-1] if lines else f"strace2events exited {proc.returncode}"
    for name in [*(str(log) for log in logs), str(path)]:
        if message.startswith(f"{name}:"):
            match = re.match(r"(\d+): (.*)$", message[len(name) + 1:])
            if match:
                raise TraceParseError(name, int(match.group(1)), match.group(2))
            raise TraceParseError(name, None, message[len(name) + 1:].strip())
    raise TraceParseError(path, None, message)
