"""Scratch filesystems that outlive a command, with their cost tables: what `fsbm validate`
and `fsbm demo` stand on.  A second run finds both and measures nothing again, but for a
table older than its caller accepts.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from rich.console import Console
from rich.markup import escape

from fsbm.errors import FsbmError
from fsbm.microbench import scratch
from fsbm.microbench.age import AgingOptions, run_aging
from fsbm.microbench.fsbench import TableEffort
from fsbm.predictor.cost_table import CostTable

# The aged state fsbm's calibrations are measured on ("xfs aged" means this).
AGING = AgingOptions(rounds=8, fill_pct=50.0, seed=7)


def provision(settings: Any, name: str, fstype: str, size: int, aging: Optional[AgingOptions], console: Console,
              fresh: bool = False) -> scratch.ScratchFs:
    """The scratch filesystem `name`, made (and aged with `aging`) if it is not there; an
    interrupted aging is redone from scratch, one of another size than `size` is made again
    at this one (it is another candidate: on btrfs, how much of the device is left unallocated
    decides whether syncs commit), and `fresh` remakes it regardless."""
    existing = {fs.name: fs for fs in scratch.list_all(settings.scratch_root)}
    unfinished = name in existing and aging is not None and not existing[name].aging_state.startswith("aged")
    resized = name in existing and existing[name].size_bytes != size
    if resized:
        console.print(f"[bold]{escape(name)}[/]: made again at {size >> 20} MiB (it was "
                      f"{existing[name].size_bytes >> 20} MiB)")
    if name in existing and (fresh or unfinished or resized):
        scratch.destroy(name, settings.scratch_root)
    elif name in existing:
        return scratch.mount(name, settings.scratch_root)
    console.print(f"[bold]{escape(name)}[/]: creating a {size >> 20} MiB {fstype} scratch filesystem")
    fs = scratch.create(fstype, size, name=name, root=settings.scratch_root)
    if aging is not None:
        console.print(f"[bold]{escape(name)}[/]: {escape(aging.describe())}")
        directory = fs.mount_point / "fsbm-aging"
        directory.mkdir()
        run_aging(directory, aging)
        scratch.set_aging_state(name, aging.describe(), settings.scratch_root)
        fs = scratch.get(name, settings.scratch_root)
    return fs


def measured_elsewhere(tables: list[CostTable], mount: Path) -> str | None:
    """Whether any of `tables` was measured on a filesystem of another size than the one
    mounted at `mount` (more than a tenth apart, as statfs tells both), in words: "a 1946 MiB
    filesystem"; None where all were measured on one of its size (or did not say)."""
    here = os.statvfs(mount)
    size = here.f_blocks * here.f_frsize
    for table in tables:
        then = table.environment.get("fs_size_bytes")
        if then and abs(then - size) > 0.1 * size:
            return f"a {int(then) >> 20} MiB filesystem"
    return None


def hours_since(measured_at: str | None, now: datetime) -> float | None:
    """How many hours before `now` a cost table measured at `measured_at` (ISO 8601, as
    tables record it) was measured; None where no time is recorded."""
    try:
        measured = datetime.fromisoformat((measured_at or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    if measured.tzinfo is None:
        measured = measured.replace(tzinfo=timezone.utc)
    return (now - measured).total_seconds() / 3600


def stale_table_notes(candidates: list[tuple[str, str | None]], now: datetime, max_age_hours: float) -> list[str]:
    """A line for each (candidate, measured_at) whose cost table is more than `max_age_hours`
    old: the device under a table drifts and changes, so the reader should know the costs'
    age and how to measure them again."""
    notes = []
    for name, measured_at in candidates:
        age = hours_since(measured_at, now)
        if age is not None and age > max_age_hours:
            when = f"{age / 24:.0f} days" if age >= 48 else f"{age:.0f} hours"
            notes.append(f"cost table '{name}' was measured {when} ago ({measured_at}): its device's speed may have "
                         f"moved since (`fsbm bench` measures a new one)")
    return notes


def stored_or_measured_cost_table(settings: Any, fs: scratch.ScratchFs, store: Any, console: Console,
                                  fresh: bool = False, max_age_hours: float | None = None,
                                  effort: TableEffort = TableEffort()) -> CostTable:
    """The newest complete cost table of this filesystem in the store, or a quick fsbench
    run's (an interrupted run's table, which older fsbm stored, is measured again).  A stored
    table more than `max_age_hours` old, or of no recorded time, is measured again too: the
    host's disk drifts over hours, and a prediction judged against runs made now should be
    priced by costs measured near them.  So is one measured at less than `effort` (fewer
    repetitions, or shorter cases): a quick test's table never stands in for a full one."""
    kept = [k for k in store.documents("cost_table", name=fs.name)
            if store.run_status(k[2].get("fsbench_run_id")) != "interrupted"]
    if kept and not fresh:
        table = CostTable.from_json(kept[0][2], f"cost table {kept[0][0]}")
        age = hours_since(table.measured_at, datetime.now(timezone.utc))
        short = effort.shortfall(store.run_config(kept[0][2].get("fsbench_run_id")))
        if short is not None:
            console.print(f"{escape(fs.name)}: cost table {kept[0][0]} in the store is not reused: "
                          f"{escape(short)}; measuring it again")
        elif max_age_hours is None or (age is not None and age <= max_age_hours):
            console.print(f"[dim]{escape(fs.name)}: cost table {kept[0][0]} from the store (measured "
                          f"{table.measured_at})[/]")
            return table
        else:
            when = f"{age:.0f} h ago" if age is not None else "at no recorded time"
            console.print(f"{escape(fs.name)}: cost table {kept[0][0]} in the store was measured {when}, more "
                          f"than {max_age_hours:g} h: measuring it again")
    return measure_cost_table(settings, fs, store, effort=effort)


def measure_cost_table(settings: Any, fs: scratch.ScratchFs, store: Any, seed: int | None = None,
                       effort: TableEffort = TableEffort()) -> CostTable:
    """A quick fsbench run's cost table of the scratch filesystem at `effort`, stored under its
    name (`seed`: fsbench's, for its random orders and forward streams; its default if None)."""
    from fsbm.pipeline import measure_costs  # one measuring path for bench, demo and validate

    doc, table = measure_costs(fs.mount_point, effort.quick(aging_state=fs.aging_state, seed=seed),
                               fs.name, store, show=True)
    if doc.get("interrupted"):
        raise FsbmError(f"fsbench on {fs.name} was interrupted; its partial results are run {doc['run_id']}")
    if doc.get("errors"):
        first = doc["errors"][0]
        raise FsbmError(f"fsbench on {fs.name}: {len(doc['errors'])} cases failed (first: {first['case']}: "
                        f"{first['reason']}); its results are run {doc['run_id']}, not a cost table")
    return table


def add_programs_cases(settings: Any, filesystems: dict[str, Any], tables: dict[str, list[CostTable]],
                       profiles: list[dict[str, Any]], console: Console,
                       effort: TableEffort = TableEffort()) -> dict[str, list[str]]:
    """Grow every table by the cases the traced programs' `profiles` are priced from beyond
    it, measured on its filesystem with its seed (pipeline.add_workload_cases, as `fsbm bench
    --for` does, held to the tables' `effort`), so several tables of a target stay
    independent measurements of the same cases.  Per target, the cases measured."""
    from fsbm.host import memory_available_bytes
    from fsbm.microbench.fsbench import completed
    from fsbm.pipeline import add_workload_cases

    console.print("[bold]the programs' own cases[/] (as `fsbm bench --for` measures them)")
    added: dict[str, list[str]] = {}
    cache_bytes = memory_available_bytes()
    with settings.store() as store:
        for name, fs in filesystems.items():
            for i, table in enumerate(tables[name]):
                runs, tables[name][i] = add_workload_cases(fs.mount_point, table, profiles, store,
                                                           cache_bytes=cache_bytes, show=True, effort=effort)
                for doc in runs:
                    if not completed(doc):
                        raise FsbmError(f"fsbench on {fs.name} did not measure the programs' own cases; its results "
                                        f"are run {doc['run_id']}")
                added[name] = sorted({*added.get(name, ()), *(f"{r['bench']} {r['order']} {r['cache']} {r['size']} B"
                                                               for doc in runs for r in doc.get("results", []))})
    return added
