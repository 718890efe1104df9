"""The number of files open over time (Tang's open files), in parts: its time-weighted mean,
spread and maximum, without gathering every open and close in one place.

A part (the events of some actors) keeps the changes its opens and closes make to the level
as a LevelLog: rows of (window, clock, change).  Window 0 is the whole trace; window k + 1 is
checkpoint k, whose level counts only its own events' opens and closes.  Each window's
statistics are taken over its span [t0, t1], starting at 0.

The level is a sum over the parts, and its spread and maximum are not sums of the parts'.
So the statistics are made in two rounds over cells, each window cut into equal stretches of
time holding about CHANGES_PER_CELL changes between them (LevelPlan); each round sends only
per-cell numbers:

1. every part sums and counts its changes per cell (LevelLog.tally); summed over the parts,
   the sums give the level at the start of every cell and the counts the batches below;
2. the cells are dealt out in batches of about CHANGES_PER_BATCH changes; a batch takes its
   cells' changes from every part (LevelLog.cut), puts them in order and integrates the level
   over each cell from its starting level (CellSums.of).

The sums add up per window, in cell order (OpenLevels.of_sums).  The one-machine path is the
same two rounds over one log, so both give the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CHANGES_PER_CELL = 1_000_000
CHANGES_PER_BATCH = 4_000_000
WHOLE = 0  # the window of the whole trace; checkpoint k is window k + 1


def checkpoint_window(k: int) -> int:
    """The window of checkpoint k."""
    return k + 1


@dataclass
class LevelLog:
    """The changes some actors' opens and closes make to the level: when (clock), by how
    much, and in which window."""

    window: np.ndarray  # int32
    clock: np.ndarray   # int64
    change: np.ndarray  # int8: an open or close moves the level by one at most

    # Every open and close makes a change, so the log grows with the trace: it is kept narrow.
    DTYPES = {"window": np.int32, "clock": np.int64, "change": np.int8}

    @classmethod
    def of(cls, window: int, clock: np.ndarray, change: np.ndarray) -> "LevelLog":
        return cls(np.full(len(clock), window, cls.DTYPES["window"]), clock.astype(cls.DTYPES["clock"]),
                   change.astype(cls.DTYPES["change"]))

    @classmethod
    def concat(cls, logs: list["LevelLog"]) -> "LevelLog":
        return cls(*(np.concatenate([getattr(log, f) for log in logs]).astype(dtype, copy=False) if logs
                     else np.zeros(0, dtype) for f, dtype in cls.DTYPES.items()))

    def merge(self, other: "LevelLog") -> "LevelLog":
        return LevelLog.concat([self, other])

    def cells(self, plan: "LevelPlan") -> np.ndarray:
        """The cell of each change."""
        return plan.cell_of(self.window, self.clock)

    def tally(self, plan: "LevelPlan") -> np.ndarray:
        """Round 1: per cell, the sum of the changes in it (row 0) and how many they are (row 1);
        the tallies of several parts add up."""
        cells = self.cells(plan)
        return np.stack((np.bincount(cells, weights=self.change, minlength=plan.cells),
                         np.bincount(cells, minlength=plan.cells))).astype(np.int64)

    def cut(self, plan: "LevelPlan", batch: tuple[int, int]) -> "LevelLog":
        """Round 2: the changes in cells [first, stop) of a batch."""
        cell = self.cells(plan)
        keep = (cell >= batch[0]) & (cell < batch[1])
        return LevelLog(self.window[keep], self.clock[keep], self.change[keep])


@dataclass
class LevelPlan:
    """Every window's cells, in order of window and then of time, so a window's cells are
    consecutive.  A (window, clock) is placed by one key: its clock's distance from the
    window's t0, plus the spans of every window before it (`base`)."""

    spans: dict[int, tuple[int, int]]  # window: (t0, t1)
    counts: dict[int, int]  # window: its changes
    cell_window: np.ndarray
    cell_start: np.ndarray  # clock units
    cell_key: np.ndarray
    base: np.ndarray  # by window id: the key of its t0
    t0: np.ndarray  # by window id

    @classmethod
    def of(cls, spans: dict[int, tuple[int, int]], counts: dict[int, int]) -> "LevelPlan":
        size = max(spans, default=-1) + 1
        base, t0s = np.zeros(size, np.int64), np.zeros(size, np.int64)
        windows, starts, keys = [], [], []
        at = 0
        for window in sorted(spans):
            t0, t1 = spans[window]
            width = max(t1 - t0, 0) + 1
            n = max(1, math.ceil(counts.get(window, 0) / CHANGES_PER_CELL))
            offsets = width * np.arange(n, dtype=np.int64) // n
            base[window], t0s[window] = at, t0
            windows.append(np.full(n, window, np.int64))
            starts.append(t0 + offsets)
            keys.append(at + offsets)
            at += width
        empty = [np.zeros(0, np.int64)]
        return cls(dict(spans), dict(counts), np.concatenate(windows or empty), np.concatenate(starts or empty),
                   np.concatenate(keys or empty), base, t0s)

    @property
    def cells(self) -> int:
        return len(self.cell_start)

    def cell_of(self, window: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """The cell of each (window, clock): the last of its window's cells starting at or before it."""
        return np.searchsorted(self.cell_key, self.base[window] + (clock - self.t0[window]), side="right") - 1

    def cell_end(self, cell: int) -> int:
        """Where a cell's integral stops: the next cell's start, or its window's t1."""
        window = int(self.cell_window[cell])
        if cell + 1 < self.cells and self.cell_window[cell + 1] == window:
            return int(self.cell_start[cell + 1])
        return self.spans[window][1]

    def starting_levels(self, tallies: np.ndarray) -> np.ndarray:
        """The level at the start of each cell: the changes of the window's cells before it
        (`tallies`: LevelLog.tally's sums)."""
        out = np.zeros(self.cells, np.int64)
        running = 0
        for cell in range(self.cells):
            if cell == 0 or self.cell_window[cell] != self.cell_window[cell - 1]:
                running = 0
            out[cell] = running
            running += int(tallies[cell])
        return out

    def batches(self, counts: np.ndarray) -> list[tuple[int, int]]:
        """Consecutive cells in batches of about CHANGES_PER_BATCH changes (`counts`: the
        changes in each cell, LevelLog.tally's counts)."""
        out, first, held = [], 0, 0
        for cell in range(self.cells):
            held += int(counts[cell])
            if held >= CHANGES_PER_BATCH:
                out.append((first, cell + 1))
                first, held = cell + 1, 0
        if first < self.cells:
            out.append((first, self.cells))
        return out


@dataclass
class CellSums:
    """Per cell of a batch [first, stop): the integral of the level over time, of its square,
    and its largest value."""

    first: int
    integral: np.ndarray  # int64: level x clock units
    square: np.ndarray  # float64: level^2 x clock units
    largest: np.ndarray  # int64

    @classmethod
    def of(cls, plan: LevelPlan, batch: tuple[int, int], starts: np.ndarray, *cuts: LevelLog) -> "CellSums":
        """Round 2: the batch's cells integrated from their starting levels, with the changes
        every part cut for it, in the order of (clock, change)."""
        first, stop = batch
        log = LevelLog.concat(list(cuts))
        cell = log.cells(plan)
        order = np.lexsort((log.change, log.clock, cell))
        cell, clock, change = cell[order], log.clock[order], log.change[order]
        n = stop - first
        integral, square, largest = np.zeros(n, np.int64), np.zeros(n), np.zeros(n, np.int64)
        bounds = np.searchsorted(cell, np.arange(first, stop + 1))
        for i in range(n):
            c, lo, hi = first + i, bounds[i], bounds[i + 1]
            times = np.concatenate(([plan.cell_start[c]], clock[lo:hi], [plan.cell_end(c)]))
            level = starts[c] + np.concatenate(([0], np.cumsum(change[lo:hi])))
            weights = np.diff(times)
            integral[i] = int((level * weights).sum())
            square[i] = float((level.astype(np.float64) ** 2 * weights).sum())
            largest[i] = int(level.max())
        return cls(first, integral, square, largest)


@dataclass
class OpenLevels:
    """Each window's time-weighted mean, spread and maximum of the level."""

    stats: dict[int, dict[str, float]]

    @classmethod
    def of_sums(cls, plan: LevelPlan, sums: list[CellSums]) -> "OpenLevels":
        integral = np.zeros(plan.cells, np.int64)
        square, largest = np.zeros(plan.cells), np.zeros(plan.cells, np.int64)
        for part in sums:
            at = slice(part.first, part.first + len(part.integral))
            integral[at], square[at], largest[at] = part.integral, part.square, part.largest
        stats = {}
        for window, (t0, t1) in plan.spans.items():
            cells = plan.cell_window == window
            if not plan.counts.get(window) or t1 <= t0:
                stats[window] = {"mean": 0.0, "std": 0.0, "max": 0}
                continue
            total = t1 - t0
            mean = sum(int(v) for v in integral[cells]) / total
            spread = sum(float(v) for v in square[cells]) / total - mean * mean
            stats[window] = {"mean": mean, "std": math.sqrt(max(spread, 0.0)), "max": int(largest[cells].max())}
        return cls(stats)

    @classmethod
    def of(cls, log: LevelLog, spans: dict[int, tuple[int, int]], counts: dict[int, int]) -> "OpenLevels":
        """Both rounds over one log (the one-machine path)."""
        plan = LevelPlan.of(spans, counts)
        sums, changes = log.tally(plan)
        starts = plan.starting_levels(sums)
        return cls.of_sums(plan, [CellSums.of(plan, batch, starts, log.cut(plan, batch))
                                  for batch in plan.batches(changes)])
