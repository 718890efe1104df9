"""A capture dissected by tshark in parts at once, rows back in capture order.

tshark is what a capture's parse waits for.  `capsplit` (traces/native/capsplit.c) cuts the
capture into parts, in one of two ways (CUTS):
- "time": slices of the capture.  tshark loses an RPC-over-TCP stream it meets in the
  middle of a record, and cannot read a reply whose call it has not seen (docs/scale.md), so
  each direction of a connection moves to the next slice's part where a record begins (a
  segment is cut in two where one begins inside it), and the calls a part's replies answer
  are copied into it as lead-ins, whose rows are dropped here.  A capture of one busy
  connection spreads over the workers this way.
- "connection": each TCP connection whole in one part.
Everything else between two hosts goes whole into one part either way.  Every part is
dissected by its own tshark on the workers; each part's rows carry its frame numbers, which
capsplit's .frames file turns back into the whole capture's; the parts' rows, merged by those
numbers, are the rows one tshark gives the whole capture, and go through the same matching of
calls and replies.
"""

from __future__ import annotations

import heapq
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fsbm.locations import native_binary

PARTS_PER_WORKER = 2  # parts differ in size (a set of conversations, or a slice); each costs a tshark start
CUTS = ("time", "connection")
LEAD_IN = 1 << 63  # capsplit's mark on a frame copied into a part for its calls: its rows are another part's


@dataclass(frozen=True)
class DissectedPart:
    """tshark's field rows of one part, and how its run ended."""

    rows: Path
    frames: Path
    returncode: int
    stderr: str


@dataclass
class Dissected:
    """Every part of a capture, dissected."""

    parts: list[DissectedPart]

    def __iter__(self) -> Iterator[DissectedPart]:
        return iter(self.parts)

    def rows(self) -> Iterator[list[str]]:
        """The parts' rows in the whole capture's frame order, each with its frame number there."""
        return (cols for _, _, cols in heapq.merge(*(_numbered(part, k) for k, part in enumerate(self.parts))))


def _numbered(part: DissectedPart, k: int) -> Iterator[tuple[int, int, list[str]]]:
    """A part's rows with their frame numbers in the whole capture; a lead-in's rows left out."""
    frames = np.fromfile(part.frames, dtype="<u8")
    with open(part.rows, encoding="utf-8", errors="replace") as rows:
        for line in rows:
            cols = line.rstrip("\n").split("\t")
            if cols[0].isdigit() and 0 < int(cols[0]) <= len(frames):
                frame = int(frames[int(cols[0]) - 1])
                if frame & LEAD_IN:
                    continue
                cols[0] = str(frame)
                yield frame, k, cols


def capsplit_binary() -> Path:
    """capsplit: $FSBM_CAPSPLIT, the package's bin/, or PATH."""
    return native_binary("capsplit", Path(__file__).parent)


def dissect_part(command: list[str], part: Path, rows: Path) -> tuple[int, str]:
    """tshark's field rows of one part into `rows`: its exit status and what it said."""
    with open(rows, "wb") as out:
        done = subprocess.run([*command, "-r", str(part)], stdout=out, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL)
    return done.returncode, done.stderr.decode(errors="replace")


def dissected_in_parts(capture: Path, command: list[str], work: Path, workers: Any,
                       parts: int | None = None, cut: str = "time") -> Dissected | None:
    """The capture cut (`cut`, one of CUTS, which ingest checks) into `parts` (two a worker
    unless given) and each dissected by `command` on `workers`; None where capsplit cannot
    cut it (not pcap or pcapng, or damaged: one tshark over the whole capture then says what
    is wrong)."""
    from fsbm.cluster import worker_count

    parts = parts or min(256, PARTS_PER_WORKER * worker_count(workers))
    done = subprocess.run([str(capsplit_binary()), "--by", cut, str(parts), str(work / "part"), str(capture)],
                          capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        return None
    pieces = [(work / f"part-{k}.cap", work / f"part-{k}.frames", work / f"part-{k}.rows") for k in range(parts)]
    held = [k for k in range(parts) if pieces[k][1].stat().st_size]  # parts no conversation fell in are empty
    # The largest first, so that the last to start are the shortest.
    held.sort(key=lambda k: -pieces[k][0].stat().st_size)
    futures = {k: workers.submit(dissect_part, command, pieces[k][0], pieces[k][2]) for k in held}
    return Dissected([DissectedPart(pieces[k][2], pieces[k][1], *futures[k].result()) for k in sorted(held)])
