"""Trace files in, one Parquet event table out: format detection and the Parquet writer.

Streams: each parser yields record batches, written as they come, so a trace larger
than memory parses in constant memory.  The output is written beside its final name and
renamed at the end, so a failed parse never leaves a half-written table, and an existing
file is replaced only when the caller says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fsbm.counts import added_stats
from fsbm.errors import UsageError
from fsbm.traces.errors import TraceParseError
from fsbm.traces.files import DAMAGED_INPUT, open_decompressed
from fsbm.traces.schema import EVENT_SCHEMA, metadata
from fsbm.traces.ellard import EllardReader
from fsbm.traces.nfs import CaptureOptions, NfsReader, NfsStats
from fsbm.traces.nfs_parts import CUTS
from fsbm.traces.record import read_recording
from fsbm.traces.strace import ParseStats, StraceReader, per_pid_suffix
from fsbm.written import written_whole

Format = Literal["strace", "pcap", "ellard"]
_PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d", b"\x0a\x0d\x0d\x0a")


@dataclass
class IngestResult:
    output: Path
    format: str
    events: int
    stats: ParseStats | NfsStats


def _head(path: Path, n: int = 4096) -> bytes:
    """The first bytes of a file, decompressed if it is gzip or bzip2."""
    try:
        with open_decompressed(path) as f:
            return f.read(n)
    except DAMAGED_INPUT as exc:
        raise TraceParseError(path, None, f"cannot be decompressed: the compressed data is damaged within its "
                                          f"first {n} bytes ({exc})") from exc


def detect_format(path: Path) -> Format:
    """pcap/pcapng by magic number, Ellard's nfsdump text by its fields, else strace text."""
    path = Path(path)
    if not path.is_file():
        raise TraceParseError(path, None, "no such file" if not path.exists() else "not a regular file")
    head = _head(path)
    if head[:4] in _PCAP_MAGICS:
        return "pcap"
    first = head.split(b"\n", 1)[0].split()
    # Ellard: "<time> <src> <dst> <U|T> <C3|R3|C2|R2> <xid> <proc-num> <proc-name> ..."
    if len(first) > 6 and first[3] in (b"U", b"T") and first[4][:1] in (b"C", b"R"):
        return "ellard"
    return "strace"


def ingest(inputs: list[Path], output: Path, *, keep_going: bool = False, force: bool = False,
           fmt: Format | None = None, capture: CaptureOptions = CaptureOptions(), workers: Any = None,
           capture_cut: str = "time") -> IngestResult:
    """Parse every input (one format) into one Parquet event table at `output`; `capture`
    says what tshark needs to know beyond its defaults (NFS captures only).  With `workers`
    (fsbm.cluster), an strace -ff run's logs are parsed a process group at a time on them
    (traces/per_process.py), and a capture is dissected in parts cut as `capture_cut` says, by
    time or by connection (traces/nfs_parts.py): the same table either way.  Their files go to
    a scratch directory beside `output`, which a cluster's workers see where they see the
    output."""
    if not inputs:
        raise UsageError("give at least one trace file")
    if capture_cut not in CUTS:
        raise UsageError(f"a capture is cut by {' or '.join(CUTS)}, not {capture_cut!r}")
    output = Path(output)
    if output.exists() and not force:
        raise UsageError(f"{output} exists; choose another name or pass --force")
    formats = {fmt or detect_format(p) for p in inputs}
    if len(formats) > 1:
        raise UsageError(f"the inputs mix formats ({', '.join(sorted(formats))}); parse them separately")
    kind = formats.pop()
    if capture != CaptureOptions() and kind != "pcap":
        raise UsageError(f"--nfs-port and --filter are for NFS captures; {inputs[0]} is {kind}")
    reader_type = {"strace": StraceReader, "pcap": NfsReader, "ellard": EllardReader}[kind]
    if kind == "strace" and len(inputs) > 1 and all(per_pid_suffix(p) is not None for p in inputs):
        # strace -ff: one log per process.  Read as one stream in time order, so clones relate
        # them; or a process group at a time, on workers or where the logs have no times to
        # order them by (then only the fork tree orders them).
        if workers is not None or not has_timestamps(inputs[0]):
            from fsbm.traces.per_process import ProcessGroupsReader

            readers = [ProcessGroupsReader(list(inputs), workers, keep_going=keep_going,
                                           scratch=output.parent if workers is not None else None)]
        else:
            readers = [StraceReader(list(inputs), keep_going=keep_going)]
    elif kind == "pcap":
        readers = [NfsReader(p, keep_going=keep_going, capture=capture, workers=workers, scratch=output.parent,
                             cut=capture_cut) for p in inputs]
    else:
        readers = [reader_type(p, keep_going=keep_going) for p in inputs]
    recordings = _recordings(inputs) if kind == "strace" else []
    # fsbm trace record's helper (fsrusage) is in the log; its calls are not the workload's.
    helpers = pa.array(sorted({str(r["helper_pid"]) for r in recordings if r.get("helper_pid")}), pa.string())
    events, seq_base = 0, 0
    with written_whole(output) as partial:
        with pq.ParquetWriter(partial, EVENT_SCHEMA, compression="zstd") as writer:
            for reader in readers:
                last_seq = -1
                for batch in reader.batches():
                    if len(helpers):
                        batch = batch.filter(pc.invert(pc.is_in(batch.column("actor"), value_set=helpers)))
                    if seq_base:
                        seq = pc.add(batch.column("seq"), seq_base)
                        batch = pa.RecordBatch.from_arrays([seq, *batch.columns[1:]], schema=EVENT_SCHEMA)
                    writer.write_batch(batch)
                    events += batch.num_rows
                    if batch.num_rows:
                        last_seq = batch.column("seq")[-1].as_py()
                seq_base = last_seq + 1 if last_seq >= 0 else seq_base
            stats = added_stats(ParseStats() if kind == "strace" else NfsStats(),
                                [r.stats for r in readers if r.stats is not None])
            # Written into the footer at close: where the events came from and what was skipped.
            extra = {}
            if recordings:
                extra["recordings"] = json.dumps(recordings)
            if getattr(stats, "timeline", None):
                extra["timeline"] = json.dumps(stats.timeline)
            writer.add_key_value_metadata(metadata(
                format=kind, sources=",".join(str(p) for p in inputs), ts_origin=stats.ts_origin,
                skipped_records=stats.bad_lines, **extra))
    return IngestResult(output, kind, events, stats)


_TIMESTAMP = re.compile(rb"(\d+:\d\d:\d\d(\.\d+)?|\d+\.\d+) ")


def has_timestamps(path: Path) -> bool:
    """Whether an strace log's first line starts with a time (-t, -tt or -ttt)."""
    first = _head(path, 512).split(b"\n", 1)[0]
    return bool(_TIMESTAMP.match(first))


def trace_runs(paths: list[Path]) -> list[list[Path]]:
    """The traces among `paths`, in the order given: the per-pid logs of one strace -ff run
    (LOG.<pid>, one LOG) are one trace, parsed together; any other file is a trace of its own."""
    runs: dict[Path, list[Path]] = {}
    for path in map(Path, paths):
        key = path.with_suffix("") if per_pid_suffix(path) is not None else path
        runs.setdefault(key, []).append(path)
    return list(runs.values())


def _recordings(inputs: list[Path]) -> list[dict]:
    """What `fsbm trace record` kept beside each log (CPU time and so on), once per recording:
    strace -ff's LOG.<pid> files share LOG's."""
    found: dict[Path, dict] = {}
    for path in inputs:
        log = Path(path)
        if per_pid_suffix(log) is not None:
            log = log.with_suffix("")
        facts = read_recording(log)
        if facts is not None:
            found[log] = facts
    return list(found.values())


def timeline_of(path: Path) -> dict[str, Any]:
    """The traced job's calls and process lifetimes an event table's footer carries (strace
    logs parsed since the parser counted them; empty otherwise): counts, and sums by cap."""
    raw = (check_event_table(path).metadata or {}).get(b"fsbm.timeline")
    return _counts(json.loads(raw)) if raw else {}


def _counts(value: Any) -> Any:
    """Timeline counts read back from JSON as integers: numbers, lists of them (sums by cap)
    and objects of them (counts by operation)."""
    if isinstance(value, dict):
        return {k: _counts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_counts(x) for x in value]
    return int(value)


def recordings_of(path: Path) -> list[dict]:
    """The recording facts an event table's footer carries (empty for traces not made by
    `fsbm trace record`)."""
    raw = (check_event_table(path).metadata or {}).get(b"fsbm.recordings")
    return json.loads(raw) if raw else []


DICTIONARY_COLUMNS = ["actor", "op", "orig", "file", "errno"]


def check_event_table(path: Path) -> pq.FileMetaData:
    """The footer of an fsbm event table of a schema version this fsbm reads; a clear error
    for anything else, before any data is read."""
    try:
        meta = pq.read_metadata(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise UsageError(f"{path} is not a Parquet event table ({exc})") from exc
    version = (meta.metadata or {}).get(b"fsbm.schema_version")
    if version is None or int(version) != 1 or meta.schema.to_arrow_schema().names != EVENT_SCHEMA.names:
        raise UsageError(f"{path} is not an fsbm event table (schema_version {version!r})")
    return meta


def read_events(path: Path) -> pa.Table:
    """Read an event table, checking it is one and of a schema version this fsbm reads."""
    check_event_table(path)
    try:
        # Low-cardinality columns come back dictionary-encoded, as Parquet stores them:
        # the characterizer uses the codes as ids without hashing every string again.
        return pq.read_table(path, read_dictionary=DICTIONARY_COLUMNS)
    except (OSError, pa.ArrowInvalid) as exc:
        raise UsageError(f"{path} is not a Parquet event table ({exc})") from exc
