"""What capturing an NFS job's traffic costs the job on this machine.

Where the clients, the server and tshark share one host (every capture of the loopback
does), the capturer takes CPU time from the job it captures: dumpcap copies each packet out
of the kernel and writes it, and on this machine's two cores a 256 MiB copy took 1.6 times as
long captured as not.  A capture then holds a slower job than the one it stands for, and
what it tells of the time outside the server is too long by about the capturing's cost.

`measure_capture_pairs` times transfers of TRANSFER_MIB over the loopback, a read (nfs-cat)
and a write (nfs-cp), each captured into memory and not, in interleaved pairs whose order
alternates; predictor/capture_cost.py reads the pairs as a cost per MiB moved.  How much the
capturer takes depends on how busy the job keeps the cores, and a job that waits for a disk
leaves it room that one served from memory does not; so the share is best where the captured
server's was: `share_in`, a directory on that filesystem, each run cold (every cache dropped
first, root), as the jobs it stands for ran; without it, a directory in memory.  The figure
moves from one minute to the next by as much as 2x here (docs/model-evidence.md), which is
why predictions take it as a band.

A capture also begins at a job's first packet and ends at its last: the client program's own
start (its exec, its libraries read in, its connection made) and its exit lie outside it.
`measure_client_starts` times small client jobs cold, captured, and keeps each run's seconds
beside its capture's span (the caller reads the span: `span_of`), whose difference is that
start; predictor/capture_cost.py reads them.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError
from fsbm.microbench.cache import drop_all
from fsbm.microbench.nfs_server import capturing, serving

TRANSFER_MIB = 64
PAIRS = 6  # of each direction
MEMORY = Path("/dev/shm")
# Small jobs of the clients the NFS suite runs, each doing next to nothing on the server: what
# one takes beyond its capture's span is the client's own start and end.
CLIENT_START_JOBS = (("nfs-ls", "an empty directory"), ("nfs-cat", "a file of 1 KiB"))
CLIENT_START_RUNS = 3  # cold runs of each


@dataclass(frozen=True)
class CapturePair:
    """One transfer of `mib` (direction "read" or "write") timed captured and not."""

    direction: str
    mib: float
    captured_s: float
    plain_s: float


def _timed(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise FsbmError(f"{command[0]} failed while measuring what capturing costs (exit {done.returncode}): "
                        f"{done.stderr.strip()[:300]}")
    return seconds


@dataclass(frozen=True)
class ClientStart:
    """One small client job (`job`: its program) run cold and captured: its seconds, and the
    span of its capture (first packet to last)."""

    job: str
    seconds: float
    span_s: float


@contextmanager
def _scratch(prefix: str, share_in: Path | None) -> Iterator[tuple[Path, Path]]:
    """A working directory in memory (the server's state, the captures, the client's files)
    and a new directory to share, in `share_in` or in the working one; both removed after."""
    where = MEMORY if MEMORY.is_dir() else None
    with tempfile.TemporaryDirectory(prefix=prefix, dir=where) as work, \
            tempfile.TemporaryDirectory(prefix=prefix, dir=share_in or work) as share:
        yield Path(work), Path(share)


def _one_run(direction: str, share: Path, local: Path, work: Path, captured: bool, cold: bool) -> float:
    """One transfer's seconds, against a server started for it (as a validation's cold job
    has: no handle or attribute cache from the run before, and no file it holds open, so
    what the write made can be removed after it), every cache dropped first where `cold`."""
    written = share / "written.bin"
    if cold:
        drop_all()
    try:
        with serving([share], work / "server") as server:
            command = (["nfs-cat", server.url(share / "source.bin")] if direction == "read"
                       else ["nfs-cp", str(local / "source.bin"), server.url(written)])
            if not captured:
                return _timed(command)
            with capturing(work / "capture.pcapng"):
                return _timed(command)
    finally:  # once the server is gone
        (work / "capture.pcapng").unlink(missing_ok=True)
        written.unlink(missing_ok=True)


def measure_capture_pairs(pairs: int = PAIRS, mib: int = TRANSFER_MIB,
                          progress: Callable[[str], None] = lambda line: None,
                          share_in: Path | None = None) -> list[CapturePair]:
    """`pairs` reads and as many writes of `mib` MiB over the loopback, each timed captured
    and not (the order alternating from pair to pair), against an NFS server exporting a new
    directory in `share_in`, every run cold, or one in memory, warm (root: the server, the
    capture and the cache drops need it).  The client's files and the captures are in
    memory; nothing is left in `share_in`."""
    with _scratch("fsbm-capture-cost-", share_in) as (work, share):
        local = work / "local"
        local.mkdir()
        block = bytes(range(256)) * 4096
        for path in (share / "source.bin", local / "source.bin"):
            with path.open("wb") as out:
                for _ in range(mib):
                    out.write(block)
        measured = []
        for k in range(pairs):
            for direction in ("read", "write"):
                seconds = {}
                for captured in ((True, False) if k % 2 == 0 else (False, True)):
                    seconds[captured] = _one_run(direction, share, local, work, captured, cold=share_in is not None)
                measured.append(CapturePair(direction, float(mib), seconds[True], seconds[False]))
                progress(f"{direction} of {mib} MiB: {seconds[True]:.3f} s captured, {seconds[False]:.3f} s not")
    return measured


def measure_client_starts(span_of: Callable[[Path], float], runs: int = CLIENT_START_RUNS,
                          progress: Callable[[str], None] = lambda line: None,
                          share_in: Path | None = None) -> list[ClientStart]:
    """Each of CLIENT_START_JOBS `runs` times (the jobs taking turns), every cache dropped
    first (root: the client's program and libraries are read from disk, as a cold job's are),
    against an NFS server started for the run exporting a new directory in `share_in` or in
    memory, started by sh as a job is, captured; `span_of` reads a capture's span in seconds.
    Nothing is left in `share_in`."""
    with _scratch("fsbm-client-start-", share_in) as (work, share):
        (share / "empty").mkdir()
        (share / "small.txt").write_bytes(b"x" * 1024)
        targets = {"nfs-ls": share / "empty", "nfs-cat": share / "small.txt"}
        capture = work / "capture.pcapng"
        measured = []
        for _ in range(runs):
            for program, _ in CLIENT_START_JOBS:
                drop_all()
                with serving([share], work / "server") as server:
                    with capturing(capture):
                        seconds = _timed(["sh", "-c", f"{program} {shlex.quote(server.url(targets[program]))} > /dev/null"])
                span = span_of(capture)
                capture.unlink(missing_ok=True)
                measured.append(ClientStart(program, seconds, span))
                progress(f"{program} cold: {seconds * 1e3:.1f} ms, its capture's span {span * 1e3:.1f} ms")
    return measured
