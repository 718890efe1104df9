"""Where parallel work runs: a pool of local threads, a local Dask cluster, or a running one.

The characterizer's buckets and the strace -ff parse's process groups both go to "workers":
a concurrent.futures executor or a dask.distributed Client, which share `submit`.  A running
cluster's workers need fsbm installed and the traces and tables at the same paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from fsbm.errors import UsageError


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None,
                memory_limit: str | None = None) -> Iterator[Any]:
    """A distributed client: a local cluster of `workers` processes (each with at most
    `memory_limit`, such as "2GiB", beyond which Dask spills to disk; else a share of this
    machine's), or the scheduler given."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40, memory_limit=memory_limit or "auto") as cluster, Client(cluster) as client:
        yield client


@contextmanager
def cluster_apart(directory: Path, workers: int = 2, memory_limit: str | None = None) -> Iterator[tuple[str, int]]:
    """A `dask scheduler` and a `dask worker --nworkers N` started as processes of their own,
    as on a cluster, working in `directory` (which holds the scheduler file): the scheduler's
    address and process id, once every worker has joined.  Both are stopped on the way out."""
    from dask.distributed import Client

    dask = Path(sys.executable).with_name("dask")
    scheduler_file = directory / "scheduler.json"
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "stdin": subprocess.DEVNULL,
                             "cwd": directory}
    limit = ["--memory-limit", memory_limit] if memory_limit else []
    started = [subprocess.Popen([str(dask), "scheduler", "--scheduler-file", str(scheduler_file), "--port", "0",
                                 "--no-dashboard"], **quiet)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        started.append(subprocess.Popen([str(dask), "worker", "--scheduler-file", str(scheduler_file), "--nworkers",
                                         str(workers), "--nthreads", "1", *limit, "--no-dashboard",
                                         "--local-directory", str(directory)], **quiet))
        with Client(scheduler_file=str(scheduler_file), timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield json.loads(scheduler_file.read_text())["address"], started[0].pid
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=30)


@contextmanager
def workers_of(jobs: int | None = None, dask_workers: int | None = None,
               scheduler: str | None = None) -> Iterator[Any]:
    """The workers the command line asked for (--jobs, --dask-workers or --dask), or None
    for work in this process."""
    if sum(given is not None for given in (jobs, dask_workers, scheduler)) > 1:
        raise UsageError("give one of --jobs (threads here), --dask-workers (a local Dask cluster) "
                         "and --dask (a running one)")
    if jobs is not None:
        with ThreadPoolExecutor(jobs) as pool:
            yield pool
    elif dask_workers is not None or scheduler is not None:
        with dask_client(dask_workers, scheduler) as client:
            yield client
    else:
        yield None


def worker_count(workers: Any) -> int:
    """How many tasks `workers` run at once: a pool's size, or a Dask cluster's threads."""
    if isinstance(workers, Executor):
        return int(getattr(workers, "_max_workers", None) or os.cpu_count() or 1)
    return max(1, sum(workers.nthreads().values()))
