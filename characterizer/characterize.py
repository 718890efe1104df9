"""Events in, workload profile out (issue 4; Tang thesis 4.2 and table 5.3, plus Darshan,
Ellard and Mattson).  Everything is vectorized over numpy arrays of the event table; the
statistics are gathered as a mergeable Partial (partial.py), so one trace, several traces
merged, and a Dask run over partitions all go through the same code."""

from __future__ import annotations

from functools import reduce
from pathlib import Path

import pyarrow as pa

from fsbm.characterizer.arrays import EventArrays, to_arrays
from fsbm.characterizer.partial import Partial, core_of, finalize, is_nfs, whole_trace
from fsbm.characterizer.profile import Profile


def characterize(events: pa.Table | EventArrays, *, every: int | None = None, source: str | None = None) -> Profile:
    """The workload profile of an event table; checkpoints every `every` events (Tang: 100,000)."""
    ev = events if isinstance(events, EventArrays) else to_arrays(events)
    return Profile(finalize(whole_trace(ev, every=every, source=source)))


def core_statistics(ev: EventArrays) -> dict[str, object]:
    """Tang's table, sequentiality and open files alone: the statistics the speed target is for."""
    clock = ev.ts - int(ev.ts.min()) if ev.has_time else ev.seq
    nfs = is_nfs(ev)
    return core_of(ev, clock, nfs)[0].finalize(nfs, ev.has_time)


def characterize_file(path: Path, *, every: int | None = None) -> Profile:
    from fsbm.traces.ingest import read_events

    return characterize(read_events(path), every=every, source=str(path))


def characterize_files(paths: list[Path], *, every: int | None = None, client: object | None = None) -> Profile:
    """One profile of one or more event tables; several are taken as run together, each from
    its own start, their actors kept apart, files of the same name taken as the same file.
    With a Dask client, each table is summarized on the cluster (scale.py)."""
    from fsbm.traces.ingest import read_events

    parts = []
    for i, path in enumerate(paths):
        if client is not None:
            from fsbm.characterizer.scale import partial_dask

            parts.append(partial_dask(path, client, every=every, trace=i))
        else:
            parts.append(whole_trace(to_arrays(read_events(path)), every=every, trace=i, source=str(path)))
    return Profile(finalize(reduce(Partial.merge, parts)))
