"""`fsbm demo`: the main job end to end on embedded defaults.

What exists today: record a real program (unpack a generated source tree, grep it,
delete it) with strace, turn the log into events and a workload profile; provision each
candidate filesystem as a scratch loop image, run the quick fsbench suite on each, store
the results and cost tables, and compare the candidates on the operations a workload
spends its time in.  Prediction, replay and the report join this flow as they land.
"""

from __future__ import annotations

import random
import shutil
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fsbm.api.render import format_ns
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import FsbenchOptions
from fsbm.predictor.cost_table import CostTable

# (label, benchmark, size or None for metadata, order, cache): what the comparison shows.
HEADLINE: tuple[tuple[str, str, Any, str, str], ...] = (
    ("create (warm)", "create", None, "creation", "warm"),
    ("unlink (warm)", "unlink", None, "creation", "warm"),
    ("stat, random order (cold)", "stat_file", None, "random", "cold"),
    ("readdir of 100 (cold)", "readdir", None, "random", "cold"),
    ("mkdir (warm)", "mkdir", None, "creation", "warm"),
    ("read 4K random (cold)", "read", 4096, "random", "cold"),
    ("read 1M sequential (cold)", "read", 1048576, "sequential", "cold"),
    ("overwrite 4095 B random (cold, RMW)", "overwrite", 4095, "random", "cold"),
    ("write 64K sequential", "write", 65536, "sequential", "warm"),
    ("fsync after 4K write", "fsync", 4096, "sequential", "warm"),
)


def _comparison(tables: dict[str, CostTable]) -> Table:
    memory_only = [name for name, t in tables.items() if t.memory_only]
    caption = f"{', '.join(memory_only)}: lives in memory, so its cold costs are its warm costs" if memory_only else None
    out = Table(title="per-operation cost, p50 (lower is better)", caption=escape(caption) if caption else None)
    out.add_column("operation")
    for name in tables:
        out.add_column(escape(name), justify="right")
    for label, bench, size, order, cache in HEADLINE:
        cells = []
        values = {name: t.entry(bench, order, cache, size) for name, t in tables.items()}
        present = [e["latency_ns"]["p50"] for e in values.values() if e]
        best = min(present) if present else None
        for entry in values.values():
            if entry is None:
                cells.append("-")
                continue
            p50 = entry["latency_ns"]["p50"]
            cells.append(f"[bold green]{format_ns(p50)}[/]" if p50 == best else format_ns(p50))
        out.add_row(label, *cells)
    return out


def _source_tree(root: Path, files: int = 400) -> Path:
    """A deterministic little source tree, tarred: the demo's embedded workload."""
    rng = random.Random(1995)
    tree = root / "src"
    for i in range(files):
        directory = tree / f"module{i % 17}" / f"part{i % 5}"
        directory.mkdir(parents=True, exist_ok=True)
        body = "".join(f"int f{i}_{j}(int x) {{ return x * {rng.randrange(1000)}; }}\n"
                       for j in range(rng.randrange(5, 120)))
        (directory / f"file{i}.c").write_text(body + ("/* needle */\n" if i % 7 == 0 else ""))
    archive = root / "src.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(tree, arcname="src")
    shutil.rmtree(tree)
    return archive


def _workload(settings: Any, console: Console) -> None:
    """Record, parse and characterize the embedded workload; print its profile."""
    from fsbm.api.render import profile_table
    from fsbm.characterizer import characterize_file
    from fsbm.traces.ingest import ingest
    from fsbm.traces.record import record

    with tempfile.TemporaryDirectory(prefix="fsbm-demo-") as tmp:
        root = Path(tmp)
        archive = _source_tree(root)
        script = f"tar -xf {archive} -C {root} && grep -rl needle {root}/src > /dev/null && rm -rf {root}/src"
        console.print("[bold]workload[/]: untar a 400-file source tree, grep it, delete it (traced with strace)")
        recording = record(["sh", "-c", script], root / "workload.strace")
        result = ingest([recording.log], root / "events.parquet")
        profile = characterize_file(root / "events.parquet")
        profile.body["source"] = "demo: untar + grep + rm of a 400-file tree"
        with settings.store() as store:
            store.save_document("profile", profile.to_json(), name="demo workload")
        console.print(f"{result.events:,} events from {result.stats.lines:,} strace lines "
                      f"(traced run took {recording.wall_seconds:.2f} s)")
        console.print(profile_table(profile.to_json()))


def run_demo(settings: Any, console: Console, filesystems: tuple[str, ...], size: int, keep: bool) -> None:
    from fsbm.api.cli import measure  # one measuring path for `bench` and `demo`

    started = time.monotonic()
    _workload(settings, console)
    tables: dict[str, CostTable] = {}
    made: list[str] = []
    with settings.store() as store:
        try:
            for fstype in filesystems:
                name = f"demo-{fstype}"
                try:
                    scratch.destroy(name, settings.scratch_root)  # a leftover from an interrupted demo
                except Exception:
                    pass
                console.print(f"[bold]{fstype}[/]: creating a {size >> 20} MiB scratch filesystem")
                fs = scratch.create(fstype, size, name=name, root=settings.scratch_root)
                made.append(name)
                _, table = measure(settings, fs.mount_point, FsbenchOptions(quick=True, aging_state=fs.aging_state),
                                   fs.candidate, store)
                tables[fs.candidate] = table
        finally:
            if not keep:
                for name in made:
                    scratch.destroy(name, settings.scratch_root)
    console.print(_comparison(tables))
    console.print(f"results and cost tables stored in {store.path}; demo took {time.monotonic() - started:.0f} s")
