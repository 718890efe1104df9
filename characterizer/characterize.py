"""Events in, workload profile out (issue 4; Tang thesis 4.2 and table 5.3, plus Darshan,
Ellard and Mattson).  Everything is vectorized over numpy arrays of the event table; the
statistics are gathered as a mergeable Partial (partial.py), so one trace, several traces
merged, and a Dask run over partitions all go through the same code."""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from pathlib import Path

import pyarrow as pa

from fsbm.characterizer.arrays import EventArrays, to_arrays
from fsbm.characterizer.open_levels import WHOLE, OpenLevels
from fsbm.characterizer.partial import (Partial, core_of, finalize, is_nfs, recording_totals, trace_clock,
                                        trace_origin, whole_trace)
from fsbm.characterizer.profile import Profile
from fsbm.host import memory_available_bytes

# What profiling a table whole holds at its peak, per event: the events' arrays, with the
# reference log and the open-file changes beside them (bench/characterize.py: 1.45 times the
# table's Arrow size at 10 M events: 127 bytes an event, the interpreter's 113 MiB included).
WHOLE_BYTES_PER_EVENT = 128


def fits_in_memory(events: int) -> bool:
    """Whether a table of `events` events is profiled whole, its arrays in memory: where that
    takes at most half the memory available now.  A larger one is profiled a bucket of actors
    at a time (scale.partial_in_buckets), in memory bounded by a bucket, in about twice the
    time.  Both give the same profile."""
    return events * WHOLE_BYTES_PER_EVENT <= memory_available_bytes() // 2


def how_profiled(name: str, events: int, whole: bool) -> str:
    """One line saying which way the table of trace `name` (`events` events) is profiled, and
    why: the user sees why a large table takes twice as long."""
    size = events * WHOLE_BYTES_PER_EVENT
    needs = f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{max(size / 2**20, 0.1):.1f} MiB"
    half = f"half of the {memory_available_bytes() / 2**30:.1f} GiB available"
    if whole:
        return f"{name}: {events:,} events, profiled whole in memory (about {needs}, within {half})"
    return (f"{name}: {events:,} events, profiled a bucket of processes at a time (whole, it would take "
            f"about {needs}, beyond {half})")


def characterize(events: pa.Table | EventArrays, *, every: int | None = None, source: str | None = None,
                 scope: str | None = None) -> Profile:
    """The workload profile of an event table; checkpoints every `every` events (Tang: 100,000);
    with a `scope`, of the events on files beneath that directory."""
    ev = events if isinstance(events, EventArrays) else to_arrays(events)
    return Profile(finalize(whole_trace(ev, every=every, source=source, scope=scope)))


def core_statistics(ev: EventArrays) -> dict[str, object]:
    """Tang's table, sequentiality and open files alone: the statistics the speed target is for."""
    clock = trace_clock(ev, trace_origin(ev))
    nfs = is_nfs(ev)
    core, _, levels = core_of(ev, clock, nfs)
    opened = OpenLevels.of(levels, {WHOLE: (core.clock_min, core.clock_max)}, {WHOLE: core.open_changes})
    return core.finalize(nfs, ev.has_time, opened.stats[WHOLE])


def characterize_file(path: Path, *, every: int | None = None, scope: str | None = None) -> Profile:
    return characterize_files([path], every=every, scope=scope)


def characterize_files(paths: list[Path], *, every: int | None = None, client: object | None = None,
                       scope: str | None = None, progress: Callable[[str], None] | None = None,
                       names: list[str] | None = None) -> Profile:
    """One profile of one or more event tables; several are taken as run together, each from
    its own start, their actors kept apart, files of the same name taken as the same file.
    With a Dask client, each table is summarized on the cluster (scale.py).

    The workload is the events beneath `scope`; by default the scope `fsbm trace record` was
    given, when every table was recorded with the same one, else everything ("/").

    Where two traces' clocks tie (traces without timestamps count calls, so every step ties),
    the one whose path sorts first goes first: the order the tables are given in changes
    nothing, even where the traces share files and so share the page cache.  `progress`, if
    given, is told which way each table is profiled (how_profiled), each named as in `names`
    (the traces the user gave, where the tables were parsed from them), else by its file."""
    from fsbm.characterizer.scale import of_table_file, partial_dask, partial_in_buckets, pieces, read_arrays
    from fsbm.traces.ingest import recordings_of

    recordings = [recordings_of(path) if Path(path).is_file() else [] for path in paths]
    if scope is None:
        scope = recorded_directory([r for found in recordings for r in found])
    rank = {name: i for i, name in enumerate(sorted({str(p) for p in paths}))}
    parts = []
    for i, path in enumerate(paths):
        recording = recording_totals(recordings[i])
        if client is not None:
            part = partial_dask(path, client, every=every, trace=rank[str(path)], scope=scope)  # its timeline too
            part.recording = recording
        else:
            work = pieces(path)  # the footers, read once
            events = sum(piece.rows for piece in work)
            whole = fits_in_memory(events)
            if progress is not None:
                progress(how_profiled(names[i] if names else Path(path).name, events, whole))
            if whole:
                part = of_table_file(whole_trace(read_arrays(work), every=every, trace=rank[str(path)], scope=scope,
                                                 recording=recording), path)
            else:
                part = partial_in_buckets(path, every=every, trace=rank[str(path)], scope=scope)
                part.recording = recording
        parts.append(part)
    return Profile(finalize(reduce(Partial.merge, parts)))


def recorded_directory(recordings: list[dict]) -> str | None:
    """The one scope every recording was given, or None."""
    directories = {r.get("scope") for r in recordings}
    if len(directories) == 1 and None not in directories:
        return directories.pop()
    return None
