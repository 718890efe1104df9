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
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError
from fsbm.microbench.cache import drop_all
from fsbm.microbench.nfs_server import capturing, serving

TRANSFER_MIB = 64
PAIRS = 6  # of each direction
MEMORY = Path("/dev/shm")


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


def _one_run(direction: str, share: Path, local: Path, work: Path, captured: bool, cold: bool) -> float:
    """One transfer's seconds, against a server started for it (as a validation's cold job
    has: no handle or attribute cache from the run before, and no file it holds open, so
    what the write made can be removed after it), every cache dropped first where `cold`."""
    written = share / "written.bin"
    if cold:
        subprocess.run(["sync"], check=True)
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
    where = MEMORY if MEMORY.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="fsbm-capture-cost-", dir=where) as tmp, \
            tempfile.TemporaryDirectory(prefix="fsbm-capture-cost-", dir=share_in or tmp) as shared:
        work, share = Path(tmp), Path(shared)
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
