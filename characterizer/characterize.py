"""Events in, workload profile out (issue 4; Tang thesis 4.2 and table 5.3, plus Darshan,
Ellard and Mattson).  Everything is vectorized over numpy arrays of the event table."""

from __future__ import annotations

import posixpath
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, present, to_arrays
from fsbm.characterizer.histograms import darshan_histogram, distribution, log2_histogram
from fsbm.characterizer.profile import SCHEMA_VERSION, Profile
from fsbm.characterizer.reuse import reuse_curve
from fsbm.characterizer.sequentiality import Access, classify, file_sizes, percentages, runs
from fsbm.characterizer.timing import concurrency, gaps, inside_outside, open_files
from fsbm.traces.vocabulary import OPERATIONS

# Tang's table 5.3 rows: the percentage of calls that are each of these.
TANG_ROWS = ("read", "write", "create", "delete", "mkdir", "rmdir", "readdir", "getattr", "lookup")


def _is_nfs(ev: EventArrays) -> bool:
    return any(o.startswith("NFS") for o in ev.origs)


def _tang(ev: EventArrays, seq: dict[str, dict[str, float]], opened: dict[str, object]) -> dict[str, object]:
    calls = ~ev.plumbing
    n = int(calls.sum())
    lookup_origs = np.array([o.endswith(".LOOKUP") or o.endswith(".LOOKUPP") for o in ev.origs] or [False])
    is_lookup = lookup_origs[ev.orig] & calls
    op = ev.op
    counts = {
        "read": (op == OP_INDEX["read"]), "write": (op == OP_INDEX["write"]), "create": (op == OP_INDEX["create"]),
        "delete": (op == OP_INDEX["unlink"]), "mkdir": (op == OP_INDEX["mkdir"]), "rmdir": (op == OP_INDEX["rmdir"]),
        "readdir": (op == OP_INDEX["readdir"]), "getattr": (op == OP_INDEX["stat"]) & ~is_lookup, "lookup": is_lookup,
    }
    table = {f"{name}_pct": 100.0 * int((mask & calls).sum()) / n if n else 0.0 for name, mask in counts.items()}
    table.update({
        "calls": n,
        "reads_sequential_pct": seq["read"]["consecutive_pct"], "reads_random_pct": 100.0 - seq["read"]["consecutive_pct"]
        if seq["read"]["count"] else 0.0,
        "writes_sequential_pct": seq["write"]["consecutive_pct"],
        "writes_random_pct": 100.0 - seq["write"]["consecutive_pct"] if seq["write"]["count"] else 0.0,
        "open_files_mean": opened["mean"], "open_files_std": opened["std"],
        "sequential_definition": "consecutive: offset equals the end of the previous read (or write) by the "
                                 "same actor on the same file; a new open starts at 0",
    })
    return table


def _per_op(ev: EventArrays) -> dict[str, dict[str, object]]:
    length = np.where(ev.ret > 0, ev.ret, 0)
    out = {}
    for i, name in enumerate(OPERATIONS):
        mask = ev.op == i
        n = int(mask.sum())
        if not n:
            continue
        entry: dict[str, object] = {"count": n, "failed": int((mask & ev.failed).sum())}
        if name in ("read", "write"):
            sizes = ev.size[mask]
            sizes = sizes[sizes != MISSING]
            entry["bytes"] = int(length[mask].sum())
            entry["request_sizes"] = darshan_histogram(sizes)
            entry["request_size_log2"] = log2_histogram(sizes)
        durations = ev.dur[mask]
        durations = durations[durations != MISSING]
        if len(durations):
            entry["latency_ns"] = distribution(durations.astype(np.float64))
        out[name] = entry
    return out


def _per_orig(ev: EventArrays) -> dict[str, dict[str, int]]:
    counts = np.bincount(ev.orig, minlength=len(ev.origs))
    length = np.where(ev.ret > 0, ev.ret, 0)
    data = (ev.op == OP_INDEX["read"]) | (ev.op == OP_INDEX["write"])
    nbytes = np.bincount(ev.orig, weights=np.where(data, length, 0), minlength=len(ev.origs))
    return {name: {"count": int(c), "bytes": int(b)} for name, c, b in zip(ev.origs, counts, nbytes) if c}


def _namespace(ev: EventArrays, sizes: np.ndarray) -> dict[str, object]:
    real = ~np.array([f.startswith("?") for f in ev.files] or [False])
    files_touched = int((real & present(ev.file, len(ev.files))).sum()) if ev.n else 0
    paths = pc.unique(ev.paths.drop_null()).to_pylist()
    directories = {posixpath.dirname(p) for p in paths if p}
    dir_ops = np.isin(ev.op, [OP_INDEX["readdir"], OP_INDEX["mkdir"], OP_INDEX["rmdir"]])
    directories |= {ev.files[f] for f in np.flatnonzero(present(ev.file[dir_ops], len(ev.files)))}
    return {"files_touched": files_touched, "directories_touched": len(directories),
            "file_size_bytes": distribution(sizes.astype(np.float64)),
            "file_bytes_total": int(sizes.sum())}


def _fsync(ev: EventArrays, inside: dict[str, object]) -> dict[str, object]:
    fsyncs = int((ev.op == OP_INDEX["fsync"]).sum())
    written = int(np.where((ev.op == OP_INDEX["write"]) & (ev.ret > 0), ev.ret, 0).sum())
    span_s = inside.get("trace_span_ns", 0) / 1e9 if inside.get("known") else 0
    return {"count": fsyncs, "per_second": fsyncs / span_s if span_s else None,
            "bytes_written_per_fsync": written / fsyncs if fsyncs else None}


def _window(ev: EventArrays, start: int, stop: int) -> EventArrays:
    """The events with positions [start, stop), sharing the dictionaries."""
    cut = slice(start, stop)
    return EventArrays(stop - start, ev.seq[cut], ev.ts[cut], ev.dur[cut], ev.actor[cut], ev.file[cut], ev.op[cut],
                       ev.orig[cut], ev.offset[cut], ev.size[cut], ev.ret[cut], ev.failed[cut], ev.plumbing[cut],
                       ev.actors, ev.files, ev.origs, ev.paths.slice(start, stop - start))


def _core(ev: EventArrays, nfs: bool) -> tuple[Access, dict[str, object]]:
    """Tang's statistics for a stretch of events (the whole trace, or one checkpoint), and the
    classified accesses the rest of the profile is built on."""
    acc = classify(ev, nfs)
    seq = percentages(ev, acc)
    opened = open_files(ev, nfs)
    return acc, {"tang": _tang(ev, seq, opened), "sequentiality": seq, "open_files": opened}


def _checkpoint(ev: EventArrays, start: int, every: int, nfs: bool) -> dict[str, object]:
    """Tang's statistics for events [start, start + every), so phases of a trace show."""
    _, core = _core(_window(ev, start, start + every), nfs)
    return {"first_event": start, "events": min(every, ev.n - start), "tang": core["tang"],
            "sequentiality": core["sequentiality"]}


def characterize(events: pa.Table | EventArrays, *, every: int | None = None, source: str | None = None) -> Profile:
    """The workload profile of an event table; checkpoints every `every` events (Tang: 100,000)."""
    ev = events if isinstance(events, EventArrays) else to_arrays(events)
    nfs = _is_nfs(ev)
    acc, core = _core(ev, nfs)
    sizes_by_file, sizes = file_sizes(ev, acc)
    inside = inside_outside(ev)
    body: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "kind": "profile",
        "source": source,
        "events": ev.n,
        "protocol": "nfs" if nfs else "syscalls",
        "has_timestamps": ev.has_time,
        "tang": core["tang"],
        "sequentiality": core["sequentiality"],
        "runs": runs(ev, acc, sizes_by_file),
        "operations": _per_op(ev),
        "original_calls": _per_orig(ev),
        "namespace": _namespace(ev, sizes),
        "open_files": core["open_files"],
        "timing": {**gaps(ev), "inside_outside": inside, "concurrency": concurrency(ev)},
        "fsync": _fsync(ev, inside),
        "reuse": reuse_curve(ev),
    }
    body["working_set_bytes"] = body["reuse"]["distinct_blocks"] * body["reuse"]["block_size"]
    if every:
        body["checkpoints"] = [_checkpoint(ev, start, every, nfs) for start in range(0, ev.n, every)]
    return Profile(body)


def characterize_file(path: Path, *, every: int | None = None) -> Profile:
    from fsbm.traces.ingest import read_events

    return characterize(read_events(path), every=every, source=str(path))
