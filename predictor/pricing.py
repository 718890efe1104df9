"""What one call of each event class costs on one candidate (DESIGN: Prediction, Cost table).

A price is the mean latency fsbench measured for the case, with its 95% interval, and
always says where it came from; beside it, the CPU time the caller spent in the call
(fsbench's cpu_ns), which is what the call takes of a program's measured CPU time.  A request size fsbench did not measure is priced through
the Park and Lipton curve t = S + ceil(b/d)*D + C*b, fitted (non-negative, relative error)
to that case's measured sizes and pinned to the measurements: the curve's value is scaled
by the measured/fitted ratio interpolated between the two nearest measured sizes, so the
price equals the measurement where there is one and follows the curve in between.  A case
fsbench did not measure at all is an error naming it, never a default.

A price drawn from beyond a curve's largest measured size is an extrapolation; the pricer
keeps each such case (`Pricer.unmeasured`) so that `fsbm bench --for PROFILE` can measure it
in the workload's own regime (predictor.regime).  So it does a case whose cost depends on the
workload's mix of file sizes (the *_mix benchmarks) or on how many files it made or listed
(cost_table.FILE_COUNT_BENCHES) where the table has it at another mix or count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from fsbm.errors import UsageError
from fsbm.lru import LruCache
from fsbm.predictor.cost_table import UNPINNED, Case, CostTable, GapCost, pooled_gap_costs
from fsbm.predictor.park_lipton import evaluate, nonnegative_fit, order_label
from fsbm.units import readable_bytes, to_figures

# fsbench's largest request size: a case beyond it is measured at this size and extrapolated.
MAX_REQUEST_BYTES = 64 << 20
# fsbench's largest copy, whose size is a whole file's rather than a request's: a 1 GiB copy
# is measured whole (on ext4 here it cost 1.45 times sixteen copies of 64 MiB, as the pages
# it dirtied outgrew what writeback lets wait), where the target has room for it twice.
MAX_COPY_BYTES = 1 << 40
# New bytes written in requests this large or larger sync as one request of them does: a new
# file's 328 KiB and 8 MiB written 64 KiB to 1 MiB at a time synced within the spread of one
# request's sync on ext4 and xfs, 4 KiB at a time 1.3-1.5 times slower (this machine).
LARGE_REQUEST_BYTES = 64 << 10
WORKLOADS_KEPT = 64  # profiles whose prices a Pricer keeps (Pricer.workload)

# The fsbench benchmark that prices each metadata operation, and what stands in where
# fsbench has none (said in the price's source).
METADATA_BENCH = {"open": "open", "close": "close", "create": "create", "stat": "stat_file", "setattr": "chmod",
                  "readdir": "readdir", "mkdir": "mkdir", "rmdir": "rmdir", "unlink": "unlink", "rename": "rename",
                  "link": "link", "symlink": "symlink", "readlink": "stat_file"}
# Programs walk trees in the order the entries were made far more often than at random.
METADATA_ORDER = "creation"


def _both(a: float | None, b: float | None, combine) -> float | None:
    return None if a is None or b is None else combine(a, b)


@dataclass(frozen=True)
class Price:
    """Mean cost of one call, ns, with a 95% interval of that mean, and the CPU time the
    caller spent in it (cpu_ns; None from a cost table measured before fsbench kept it)."""

    ns: float
    low_ns: float
    high_ns: float
    source: str
    cpu_ns: float | None = None

    @property
    def cpu_share(self) -> float | None:
        """The share of the latency that is the caller's CPU time."""
        if self.cpu_ns is None:
            return None
        return min(self.cpu_ns / self.ns, 1.0) if self.ns > 0 else 0.0

    def labelled(self, source: str) -> "Price":
        return replace(self, source=source)

    def scaled(self, factor: float, source: str | None = None) -> "Price":
        return Price(self.ns * factor, self.low_ns * factor, self.high_ns * factor, source or self.source,
                     None if self.cpu_ns is None else self.cpu_ns * factor)

    def at(self, ns: float, source: str) -> "Price":
        """This price moved to `ns`, its interval and CPU part in proportion; exactly `ns`
        where this price is 0 (nothing to be in proportion to)."""
        return self.scaled(ns / self.ns, source) if self.ns > 0 else Price(ns, ns, ns, source)

    def cpu_scaled(self, factor: float) -> "Price":
        """This price with its CPU part `factor` times as large, the wait for the device as
        it was (outside.cpu_scales says why); a price without a CPU part is left as it is."""
        if self.cpu_ns is None or factor == 1.0:
            return self
        extra = (factor - 1.0) * self.cpu_ns
        return Price(max(self.ns + extra, 0.0), max(self.low_ns + extra, 0.0), max(self.high_ns + extra, 0.0),
                     self.source, self.cpu_ns * factor)

    def plus(self, other: "Price", source: str) -> "Price":
        return Price(self.ns + other.ns, self.low_ns + other.low_ns, self.high_ns + other.high_ns, source,
                     _both(self.cpu_ns, other.cpu_ns, lambda a, b: a + b))

    def minus(self, other: "Price", source: str) -> "Price":
        """This price less `other`, never below zero; the interval's ends take the other's
        opposite ends, so it holds every difference of two values in the intervals."""
        return Price(max(self.ns - other.ns, 0.0), max(self.low_ns - other.high_ns, 0.0),
                     max(self.high_ns - other.low_ns, 0.0), source,
                     _both(self.cpu_ns, other.cpu_ns, lambda a, b: max(a - b, 0.0)))

    def toward(self, other: "Price", w: float, source: str) -> "Price":
        """The price a share `w` of the way from this one to `other` (interpolation)."""
        return Price((1 - w) * self.ns + w * other.ns, (1 - w) * self.low_ns + w * other.low_ns,
                     (1 - w) * self.high_ns + w * other.high_ns, source,
                     _both(self.cpu_ns, other.cpu_ns, lambda a, b: (1 - w) * a + w * b))


@dataclass(frozen=True, order=True)
class Unmeasured:
    """A case fsbench would measure to price the workload in its own regime: a data case a
    price reached beyond its curve's largest measured size (at most MAX_REQUEST_BYTES; a
    copy, MAX_COPY_BYTES), or a
    *_mix case at the workload's mix of file sizes (`file_sizes`; `size` is their mean), and
    for write_new_mix its mix of request sizes too (`request_sizes`; `size` is their mean),
    and for a case of cost_table.FILE_COUNT_BENCHES at the workload's count (`files`: the
    files stat_listed_mix runs among or create_written_mix makes, the entries of each
    directory readdir_entries lists, its `size` 0; None: fsbench's own count)."""

    bench: str
    order: str
    cache: str
    size: int
    file_sizes: tuple[int, ...] = ()
    request_sizes: tuple[int, ...] = ()
    files: int | None = None


def _measured(entry: Case, label: str) -> Price:
    latency = entry.latency_ns
    return Price(latency.mean, latency.low, latency.high, label, None if entry.cpu_ns is None else entry.cpu_ns.mean)


def _lacking(price: Price, bench: str) -> Price:
    """`price` standing in for fsbench's `bench`, which the cost table lacks: said so."""
    return price.labelled(f"{price.source} (this cost table has no {bench}: measure it again)")


# Files of a larger mean size are priced at it, not at their mix: there a file's data costs
# milliseconds and its create a fraction of one, and fsbench's mix case would write fewer
# files than its waits need (it writes at most 256 MiB a repetition: MIX_BYTES_PER_REP,
# meta.c).
MIX_MEAN_LIMIT = 1 << 20
# A gap bucket's pooled forward cost stands on at least this many reads of fsbench's.
MIN_GAP_READS = 32
# Readahead follows gapped streams where fsbench's densest one sits at least this share of
# the way from a random read to a sequential one (forward_read: ext4 and xfs 0.9, btrfs 0-0.3).
FOLLOWS_GAPPED = 0.5


def _pooled_by_gap(rows: list[GapCost]) -> list[tuple[int, float]]:
    """fsbench's gap_costs of several streams, pooled by gap bucket (cost_table.pooled_gap_costs),
    the buckets past a gap (> 0) with at least MIN_GAP_READS reads, smallest gap first."""
    return [(row.gap, row.mean_ns) for row in pooled_gap_costs(rows) if row.gap > 0 and row.count >= MIN_GAP_READS]


def _cost_at_gap(costs: list[tuple[int, float]], gap: int) -> float:
    """The pooled cost at a gap bucket: its own, or between two buckets in log(gap), or the
    nearest one's beyond them."""
    if gap <= costs[0][0]:
        return costs[0][1]
    if gap >= costs[-1][0]:
        return costs[-1][1]
    (g0, c0), (g1, c1) = max(c for c in costs if c[0] <= gap), min(c for c in costs if c[0] >= gap)
    if g0 == g1:
        return c0
    w = math.log(gap / g0) / math.log(g1 / g0)
    return (1 - w) * c0 + w * c1


PAGE_BYTES = 4096


def initial_readahead_bytes(request: float, read_ahead_kb: int) -> int:
    """The window Linux reads on a file's first read from its start (mm/readahead.c,
    get_init_ra_size): the request's pages rounded up to a power of two, four times that where
    it is at most a 32nd of the device's readahead (read_ahead_kb), twice where at most a
    quarter, else the whole readahead.  A 10 KiB read on this host's loop devices (2,560 KiB)
    reads 64 KiB."""
    pages = max(math.ceil(request / PAGE_BYTES), 1)
    most = max(read_ahead_kb * 1024 // PAGE_BYTES, 1)
    window = 1 << (pages - 1).bit_length()
    window = window * 4 if window <= most / 32 else window * 2 if window <= most / 4 else most
    return window * PAGE_BYTES


def _case_count(count: float, bounds: tuple[int, int]) -> int:
    """A workload's count as a case is measured at: to two significant figures, so that
    workloads of nearly as many share a case, within `bounds` (fewest, most)."""
    low, high = bounds
    return to_figures(min(max(count, low), high), 2)


# A stream of unlinks more than this many times the files fsbench's unlink ran among is measured
# at its own count (Pricer.unlink_among), and the fewest and most files it is asked to run among.
UNLINKS_BEYOND = 4.0
UNLINKED_FILES_RANGE = (1_000, 100_000)


# Unlinks in a directory that saw more than this many of them are priced at the directory's size
# (Pricer.unlink_emptying): UNLINKS_BEYOND times the hundred entries of each directory of
# fsbench's tree (Tang's App. C fan-out, microbench/src/tree.h); and the sizes unlink_entries
# is asked to empty directories of, a 1-2-5 series.
UNLINK_DIRECTORY_BEYOND = 400
EMPTIED_DIRECTORY_SIZES = (500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)


def emptied_directory_size(entries: int) -> int:
    """The size of directory unlink_entries measures a workload's directory of `entries` at:
    the nearest of EMPTIED_DIRECTORY_SIZES, by ratio.  Each case unlinks tens of thousands of
    files three times over, and an unlink's cost moves little within a factor of two of a
    directory's size (xfs, unpinned: 28-31 us from 2,000 entries to 14,000), so a tree's
    directories of 500, 590 and 600 entries are one case, not three."""
    return min(EMPTIED_DIRECTORY_SIZES, key=lambda size: abs(math.log(entries / size)))


# A listing more than this many times the bytes of the largest fsbench measured is measured at
# its own count of entries (readdir_entries), and the fewest and most entries it is asked to
# list a directory (listed_entries).
LISTING_BEYOND = 2.0
LISTED_ENTRIES_RANGE = (200, 100_000)


def listed_entries(listed_bytes: float, bytes_per_entry: float) -> int:
    """The entries of each directory readdir_entries is asked to list for a workload's
    listing of `listed_bytes`: as many of fsbench's entries (`bytes_per_entry` each, as its
    readdir listed them) as fill it, within LISTED_ENTRIES_RANGE (_case_count)."""
    return _case_count(listed_bytes / bytes_per_entry, LISTED_ENTRIES_RANGE)


# The fewest and most files fsbench's stat_listed_mix is asked to make (listed_files).
LISTED_FILES_RANGE = (1000, 100_000)


def listed_files(count: int) -> int:
    """The files a listing workload's stat_listed_mix is measured among: its count of listed
    entries, within LISTED_FILES_RANGE (fewer would time too few calls; more would take minutes
    to make; _case_count)."""
    return _case_count(count, LISTED_FILES_RANGE)


# The fewest and most files fsbench's create_written_mix is asked to make and write
# (written_files).
WRITTEN_FILES_RANGE = (200, 20_000)


@dataclass(frozen=True)
class WrittenFiles:
    """Files a workload's calls were on that held data (it wrote them as it made them, or
    they held data when unlinked): how many, the bytes in each on average, and their sizes
    (documents.size_mix; empty where unknown)."""

    count: int
    bytes_per_file: float
    mix: tuple[int, ...] = ()


def written_files(files: WrittenFiles) -> int:
    """The files create_written_mix is measured among for a workload that made and wrote
    `files`: their count to two figures, within WRITTEN_FILES_RANGE (fewer would time too few
    creates).  On btrfs the share of such creates that wait grows with the data written
    before them (among 200 files of a tree's mix 5%, among 1,000 22%), so the case is
    measured at the workload's own count.  fsbench makes fewer where so many files of the mix
    would hold more than it writes a repetition; the case is still known by this count
    (cost_table.FILE_COUNT_BENCHES)."""
    return _case_count(files.count, WRITTEN_FILES_RANGE)


class Pricer:
    """Prices from one candidate's cost table."""

    def __init__(self, table: CostTable) -> None:
        self.table = table
        self.block_size = int(table.environment.get("fs_block_size") or 4096)
        self._fits: dict[tuple[str, str, str, int | None], dict[str, float]] = {}
        # A cost table never changes, so neither does a price: the HTTP API prices the same
        # classes again and again with one Pricer per stored table (_kept).
        self._prices: dict[tuple, Any] = {}
        self._benches = frozenset(e.bench for e in table.entries)
        # The cases priced from beyond what the table measured (see Unmeasured).
        self.unmeasured: set[Unmeasured] = set()
        self._workloads = LruCache(WORKLOADS_KEPT)  # id(profile) -> (profile, {key: price})

    def _entry(self, bench: str, order: str, cache: str, size: int | None = None) -> Case:
        entry = self.table.entry(bench, order, cache, size)
        if entry is None:
            what = f"{bench} {order} {cache}" + (f" {size} B" if size is not None else "")
            raise UsageError(f"the cost table of {self.table.candidate} has no measurement of {what}",
                             hint="run `fsbm bench` on it without --only, --orders or --caches")
        return entry

    def metadata(self, op: str, cache: str) -> Price:
        return self._kept(("metadata", op, cache), lambda: self._metadata_price(op, cache))

    def _metadata_price(self, op: str, cache: str) -> Price:
        bench = METADATA_BENCH[op]
        price = _measured(self._entry(bench, METADATA_ORDER, cache), f"fsbench {bench} {cache}")
        if op == "readlink":
            return price.labelled(f"fsbench stat_file {cache} (no readlink benchmark)")
        if op == "readdir":
            return self.listing(None, cache)
        return price

    def listing(self, listed_bytes: float | None, cache: str) -> Price:
        """The listing of one directory whose getdents64 calls, or NFS READDIRs, returned
        `listed_bytes` bytes of entries in all (None: not known).

        A listing's cost grows with its entries, and most directories programs list hold tens
        of entries, not fsbench's 100.  fsbench's readdir lists whole directories of 100
        entries, readdir_small of 10, and readdir_entries of a workload's own count where it
        lists directories far larger (`fsbm bench --for`); each says the bytes its listing
        returned.  A traced listing is priced linearly in its bytes between the two measured
        listings around it (the smallest's below them, on the line through the two largest
        beyond), each less the listing's open and close, which a trace shows as events of
        their own (_less_ends).  One more than LISTING_BEYOND times the largest measured is
        kept as unmeasured at its own count of entries (listed_entries): a large directory is
        indexed and read in blocks, and a cold listing of 4,000 entries cost ext4 three times
        the line through the two small ones.  A listing of unknown size, or from a table
        without readdir_small, is priced at the 100 entries, said so."""
        readdir = self._entry("readdir", METADATA_ORDER, cache)
        large = self._less_ends(readdir, cache)
        small = self._less_ends(self._entry("readdir_small", METADATA_ORDER, cache), cache) \
            if self._has("readdir_small") else None
        if listed_bytes is None:
            return large[1].labelled(f"{large[1].source} (a listing of unknown size: priced at its 100 entries)")
        if small is None or not small[0] or not large[0]:
            return _lacking(large[1], "readdir_small")
        measured_cache = self.table.measured_cache(cache)
        sized = [self._less_ends(e, cache) for e in self.table.entries
                 if e.bench == "readdir_entries" and e.cache == measured_cache and e.listed_bytes_per_op]
        points = sorted([small, large, *sized], key=lambda point: point[0])
        if listed_bytes > LISTING_BEYOND * points[-1][0]:
            entries = listed_entries(listed_bytes, large[0] / (readdir.entries_per_op or 100))
            self.unmeasured.add(Unmeasured("readdir_entries", METADATA_ORDER, measured_cache, 0, files=entries))
        if listed_bytes <= points[0][0]:
            b0, p0, _ = points[0]
            return p0.labelled(f"{p0.source}, {b0:.0f} B listed (for {listed_bytes:.0f} B)")
        above = next((i for i, (b, _, _) in enumerate(points) if b >= listed_bytes), len(points) - 1)
        (b0, p0, name0), (b1, p1, name1) = points[above - 1], points[above]
        w = (listed_bytes - b0) / (b1 - b0)
        if w > 1 and p1.ns <= p0.ns:
            return p1.labelled(f"{p1.source}, {b1:.0f} B listed (for {listed_bytes:.0f} B)")
        where = "between" if w <= 1 else "on the line beyond"
        return p0.toward(p1, w, f"fsbench {name0} and {name1} {cache} less open and close, {listed_bytes:.0f} B "
                                f"listed: {where} {b0:.0f} and {b1:.0f} B")

    def _less_ends(self, entry: Case, cache: str) -> tuple[float | None, Price, str]:
        """fsbench's whole listing `entry` less its open and close, never below a close, with
        the bytes it listed (None from a table measured before fsbench kept them) and the
        case's name.  fsbench has looked each directory up before it lists it since it kept
        the bytes, so from such a table the open taken off is a warm one; before, the case's
        own."""
        listed = entry.listed_bytes_per_op or None
        opened = "warm" if listed else cache
        ends = self.metadata("open", opened).plus(self.metadata("close", opened), "")
        floor = self.metadata("close", cache)
        less = _measured(entry, "").minus(ends, "")
        name = f"{entry.bench} of {entry.files} entries" if entry.bench == "readdir_entries" and entry.files \
            else entry.bench
        return listed, Price(max(less.ns, floor.ns), max(less.low_ns, floor.low_ns), max(less.high_ns, floor.high_ns),
                             f"fsbench {name} {cache} less its open and close",
                             _both(less.cpu_ns, floor.cpu_ns, max)), name

    def create_written(self, files: WrittenFiles, cache: str) -> Price:
        """A create among `files` the workload writes as it makes them: fsbench's
        create_written_mix at their mix and among as many files (written_files), else
        create_written at their mean bytes (_by_bytes_per_file).  On btrfs such a create waits
        for other files' data to be written out (its metadata reservation flushes them), so it
        costs several times an empty create, more among a mix of sizes than among files all of
        its mean, and more the more data was written before it; ext4 and xfs do not wait."""
        return self._by_bytes_per_file("create_written", "create", files, cache, among=written_files(files))

    def create_renamed(self, files: WrittenFiles, cache: str) -> Price:
        """A create among `files` the workload writes as it makes them and renames into place
        once written (rsync, git): fsbench's create_renamed_mix at their mix.  The renames
        start writing each file's data out, so on btrfs such a create waits no more than an
        empty one (create_written's does); the renames wait (rename_written).  Without the
        case in the table, priced as an empty create, said so."""
        return self._by_mix_or("create_renamed_mix", files.mix, cache, lambda: self.metadata("create", cache))

    def rename_written(self, files: WrittenFiles, cache: str) -> Price:
        """A rename into place of one of `files`, each just made and written: fsbench's
        rename_written_mix at their mix, which on btrfs waits for the file's data to start
        being written out (several times a rename of an empty file).  Without the case in the
        table, priced as a rename, said so."""
        return self._by_mix_or("rename_written_mix", files.mix, cache, lambda: self.metadata("rename", cache))

    def _by_mix_or(self, bench: str, mix: tuple[int, ...], cache: str, otherwise: Callable[[], Price]) -> Price:
        """fsbench's `bench` measured at `mix` (_at_mix), else `otherwise`'s price labelled as
        standing in for it (kept as unmeasured where the mix is one `fsbm bench --for` asks for)."""
        mixed = self._at_mix(bench, METADATA_ORDER, cache, mix, "file sizes")
        if mixed is not None:
            return mixed
        instead = otherwise()
        return instead.labelled(f"{instead.source} (for {bench}, not measured at these files' sizes)")

    def unlink_among(self, count: float, cache: str) -> Price:
        """An unlink of a file the trace did not show holding data, in a workload that made
        `count` unlinks: fsbench's unlink.  An unlink costs more the longer the stream before
        it (on btrfs, 24,000 cost 37-47 us each where the quick table's thousand cost 20-29
        us), so a stream more than UNLINKS_BEYOND times the files the table's unlink ran among
        is priced at its own count (to two figures, within UNLINKED_FILES_RANGE) where the
        table measured it there, timed whole and unpinned as rm runs (`fsbm bench --for`;
        options_measuring); else the table's own, said so, and the case kept as unmeasured.
        A case at that count measured pinned is not taken for it: on xfs an unpinned stream
        costs up to a quarter more."""
        return self._kept(("unlink_among", round(count), cache), lambda: self._unlink_among(count, cache))

    def _unlink_among(self, count: float, cache: str, ask: bool = True) -> Price:
        """unlink_among's price, the case at the workload's count kept as unmeasured where
        the table lacks it and `ask` (not where the price only stands in for another case's)."""
        plain = self.metadata("unlink", cache)
        own = self.table.entry("unlink", METADATA_ORDER, cache)
        if own is None or not own.files or count <= UNLINKS_BEYOND * own.files:
            return plain
        files = _case_count(count, UNLINKED_FILES_RANGE)
        at_count = self._whole_stream("unlink", files, cache, ask)
        if at_count is not None:
            return _measured(at_count, f"fsbench unlink {at_count.cache}, among {files} files (the workload's "
                                       f"{count:.0f} unlinks, timed whole, unpinned)")
        measures = ": `fsbm bench --for` measures it" if ask else ""
        return plain.labelled(f"{plain.source}, among {own.files} files (not the workload's {count:.0f} unlinks"
                              f"{measures})")

    def _whole_stream(self, bench: str, files: int, cache: str, ask: bool = True) -> Case | None:
        """The table's case of `bench` (a stream timed whole: fsbench.WHOLE_STREAM_BENCHES) at
        `files`, measured unpinned as the programs making such streams run; None where it has
        none, the case then kept as unmeasured for `fsbm bench --for` if `ask`."""
        measured_cache = self.table.measured_cache(cache)
        case = next((e for e in self.table.entries if e.bench == bench and e.cache == measured_cache
                     and e.files == files and e.placement == UNPINNED), None)
        if case is None and ask:
            self.unmeasured.add(Unmeasured(bench, METADATA_ORDER, measured_cache, 0, files=files))
        return case

    def unlink_emptying(self, entries: int, count: float, cache: str) -> Price:
        """An unlink of one of the `entries` of a directory rm -rf empties, in a workload of
        `count` unlinks: fsbench's unlink_entries at about that many entries
        (emptied_directory_size), timed whole and unpinned as rm runs (`fsbm bench --for`).  On
        xfs an unlink in a directory of thousands of entries costs an unpinned program 40-55%
        more than in one of a hundred; pinned to a CPU, fsbench sees none of it, so a case
        measured pinned is not taken.  Where the table lacks the case: the stream's price
        (unlink_among), said so, and this case kept as unmeasured; the stream's own case is not
        asked for here, since once this one is measured nothing uses it."""
        return self._kept(("unlink_emptying", entries, round(count), cache),
                          lambda: self._unlink_emptying(entries, count, cache))

    def _unlink_emptying(self, entries: int, count: float, cache: str) -> Price:
        files = emptied_directory_size(entries)
        case = self._whole_stream("unlink_entries", files, cache)
        if case is not None:
            return _measured(case, f"fsbench unlink_entries {case.cache}, emptying directories of {files} "
                                   "entries (timed whole, unpinned)")
        stream = self._unlink_among(count, cache, ask=False)
        return stream.labelled(f"{stream.source} (not in directories of {files} entries: `fsbm bench --for` "
                               "measures it)")

    def unlink_written(self, files: WrittenFiles, cache: str) -> Price:
        """An unlink of one of `files`, each holding data: fsbench's unlink_written
        (_by_bytes_per_file), which frees the file's blocks and cached pages as well as its
        name and inode, so it costs more than an empty file's unlink."""
        return self._by_bytes_per_file("unlink_written", "unlink", files, cache)

    def _by_bytes_per_file(self, bench: str, op: str, files: WrittenFiles, cache: str,
                           among: int | None = None) -> Price:
        """fsbench's `bench` (a metadata call among files of a size it wrote): where the
        files' sizes are a mix (more than one size, of a mean up to MIX_MEAN_LIMIT) and the
        table measured `bench`_mix at that mix (among `among` files where given), that; else
        at their mean bytes, linear in the bytes between the sizes it measured, the nearest
        size's beyond them, and the mix kept as unmeasured (`fsbm bench --for` measures it).
        A cost table measured before fsbench had the case prices it as `op` on an empty
        file, said so."""
        mixed = self._at_mix(f"{bench}_mix", METADATA_ORDER, cache, files.mix, "file sizes", files=among)
        if mixed is not None:
            return mixed
        if not self._has(bench):
            return _lacking(self.metadata(op, cache), bench)
        bytes_per_file = files.bytes_per_file
        curve = self._curve(bench, METADATA_ORDER, cache)
        label = f"fsbench {bench} {cache}"
        below = [c for c in curve if c[0] <= bytes_per_file]
        above = [c for c in curve if c[0] > bytes_per_file]
        if not below or not above:
            size, entry = below[-1] if below else above[0]
            return _measured(entry, f"{label} {size} B (the nearest size written, for {bytes_per_file:.0f} B)")
        (s0, e0), (s1, e1) = below[-1], above[0]
        w = (bytes_per_file - s0) / (s1 - s0)
        return _measured(e0, "").toward(_measured(e1, ""), w,
                                        f"{label}, {bytes_per_file:.0f} B a file: between {s0} and {s1} B")

    def _at_mix(self, bench: str, order: str, cache: str, mix: tuple[int, ...], sizes: str,
                requests: tuple[int, ...] = (), files: int | None = None) -> Price | None:
        """A *_mix case `bench` measured at exactly this mix (`sizes` says of what), and at
        this mix of request sizes where it has one (`requests`, write_new_mix's), and among
        this many files where it is given (`files`): its price, or None where the mix is one
        size or of a mean above MIX_MEAN_LIMIT (nothing to ask for), or where the table did
        not measure it at this mix (then kept as unmeasured: `fsbm bench --for` measures it).
        Measured at the mix but among another count of files, the nearest count's price
        stands in, said so, and the case at the workload's count is kept as unmeasured: the
        mix is nearer the workload than any single size."""
        if len(set(mix)) < 2 or sum(mix) / len(mix) > MIX_MEAN_LIMIT:
            return None
        measured_cache = self.table.measured_cache(cache)
        at_mix = [e for e in self.table.entries
                  if e.bench == bench and e.cache == measured_cache and tuple(e.file_sizes or ()) == mix
                  and tuple(e.request_sizes or ()) == requests] if self._has(bench) else []
        entry = next((e for e in at_mix if e.files == files), None)
        if entry is None:
            size = round(sum(requests) / len(requests)) if requests else round(sum(mix) / len(mix))
            self.unmeasured.add(Unmeasured(bench, order, measured_cache, size, mix, requests, files))
            if files is None or not at_mix:
                return None
            entry = min(at_mix, key=lambda e: (e.files is None, abs(math.log(e.files / files)) if e.files else 0))
        said = f" in requests of {readable_bytes(min(requests))} to {readable_bytes(max(requests))}" if requests else ""
        if entry.files == files:
            among = f", among {files} files" if files else ""
        else:
            counted = f"{entry.files}" if entry.files else "fsbench's own count of"
            among = f", among {counted} files (not the workload's {files}: `fsbm bench --for` measures it)"
        if entry.objects and entry.files and entry.objects < entry.files:
            among += f" (fsbench made {entry.objects}: as many of the mix as it writes a repetition)"
        return _measured(entry, f"fsbench {bench} {measured_cache}: the workload's {len(mix)} {sizes}, "
                                f"{readable_bytes(min(mix))} to {readable_bytes(max(mix))}, "
                                f"mean {readable_bytes(sum(mix) / len(mix))}{said}{among}")

    def listed_stat(self, cache: str, mix: tuple[int, ...], files: int) -> Price:
        """The attributes of an entry a listing returned with them (an NFS READDIRPLUS's),
        among `files` files of `mix` sizes (documents.size_mix): fsbench's stat_listed_mix
        at that mix among that many files (listed_files), which reads a directory's inodes
        in its listing's order.  Where the table has no such case (it is kept as
        unmeasured: `fsbm bench --for` measures it) or the files are all of one size,
        stat_file, said so."""
        mixed = self._at_mix("stat_listed_mix", METADATA_ORDER, cache, mix, "file sizes", files=listed_files(files))
        if mixed is not None:
            return mixed
        return self.metadata("stat", cache).labelled(f"fsbench stat_file {cache} (not measured among the "
                                                     f"listed files' sizes: stat_listed_mix)")

    def first_read_listed(self, mix: tuple[int, ...]) -> Price | None:
        """The first read of a file, cold and whole, among files of `mix` sizes
        (documents.size_mix of a workload's small files only read): fsbench's read_listed_mix
        at that mix, which reads each file whole after its open, in its directory's listing
        order.  btrfs keeps a file of up to 2 KiB inline in the metadata leaf its open read,
        so such a first read costs it 8-17 us against 120-170 us from a data extent, which a
        read of fsbench's one large file cannot show.  None where the table did not measure
        it at this mix (kept as unmeasured: `fsbm bench --for` measures it) or the files are
        all of one size."""
        return self._kept(("first_read_listed", mix), lambda: self._at_mix(
            "read_listed_mix", METADATA_ORDER, "cold", mix, "sizes of files only read"))

    def failed_lookup(self, cache: str) -> Price:
        return self.metadata("stat", cache).labelled(f"fsbench stat_file {cache} (a failed call walks the path)")

    def _measured(self, bench: str, order: str, cache: str, gap: int | None = None) -> list[tuple[int, Case]]:
        """The one-request cases of `bench` the table measured at this order, cache and gap, by
        size, smallest first; empty where it measured none."""
        cache = self.table.measured_cache(cache)
        return sorted(((e.size, e) for e in self.table.one_request_entries()
                       if e.bench == bench and e.order == order and e.cache == cache and e.size and e.gap == gap),
                      key=lambda found: found[0])

    def _curve(self, bench: str, order: str, cache: str, gap: int | None = None) -> list[tuple[int, Case]]:
        """_measured, or a clear error where the table measured none of them."""
        found = self._measured(bench, order, cache, gap)
        if not found:
            what = f"{bench} {order_label({'order': order, 'gap': gap})} {cache}"
            raise UsageError(f"the cost table of {self.table.candidate} has no measurement of {what}",
                             hint="run `fsbm bench` on it without --only, --orders or --caches")
        return found

    def _fit(self, bench: str, order: str, cache: str, gap: int | None,
             curve: list[tuple[int, Case]]) -> dict[str, float]:
        key = (bench, order, cache, gap)
        if key not in self._fits:
            points = [(size, e.latency_ns.mean) for size, e in curve]
            self._fits[key] = nonnegative_fit(points, self.block_size, with_rmw=bench == "overwrite")
        return self._fits[key]

    def first_read_bytes(self, request: float, file_bytes: float) -> float:
        """What the first read of a file from its start, `request` bytes, brings in from the
        device: the bytes read of the file (`file_bytes`) up to the initial readahead window
        (initial_readahead_bytes), as one request the read waits for whole; the request alone
        where the table does not record the device's readahead.  A 37 KiB file read in 10 KiB
        reads cold on this host's ext4: the first read 146 us, the other three 11 us together
        (a 4 KiB file's first read: 73 us)."""
        read_ahead_kb = self.table.environment.get("read_ahead_kb")
        if not read_ahead_kb:
            return request
        return max(request, min(file_bytes, initial_readahead_bytes(request, int(read_ahead_kb))))

    def data(self, bench: str, order: str, cache: str, size: int, gap: int | None = None) -> Price:
        """One `bench` call (read, write, overwrite, copy, ...) of `size` bytes (`gap`: the
        measured gap of a forward read)."""
        size = max(int(size), 1)
        if bench == "copy" and not self._has("copy"):
            return self._kept(("copy", cache, size), lambda: self._copy_without_benchmark(cache, size))
        return self._kept(("data", bench, order, cache, size, gap),
                          lambda: self._price_data(bench, order, cache, size, gap))

    def _kept(self, key: tuple, build: Callable[[], Any]) -> Any:
        """A price worked out once for this Pricer and kept: its table never changes."""
        if key not in self._prices:
            self._prices[key] = build()
        return self._prices[key]

    def workload(self, profile: Any, key: tuple, build: Callable[[], Any]) -> Any:
        """A workload's price on this table (model.price_workload), worked out once per `key`
        and kept for the WORKLOADS_KEPT profiles last asked about: the HTTP API asks of one
        stored profile again and again, at page-cache sizes that reach the same point of its
        reuse curve.  Kept by the profile object itself (held, so its id is not reused)."""
        kept = self._workloads.peek(id(profile))
        if kept is None or kept[0] is not profile:
            kept = (profile, {})
            self._workloads.put(id(profile), kept)
        if key not in kept[1]:
            kept[1][key] = build()
        return kept[1][key]

    def forward_read(self, size: int, gap: float, gaps_by_power: dict[str, int] | None = None,
                     in_stream: dict[str, int] | None = None) -> Price:
        """_forward_read, kept."""
        powers = tuple(sorted(gaps_by_power.items())) if gaps_by_power else None
        streamed = tuple(sorted(in_stream.items())) if in_stream else None
        return self._kept(("forward_read", size, gap, powers, streamed),
                          lambda: self._forward_read(size, gap, gaps_by_power, in_stream))

    def _forward_read(self, size: int, gap: float, gaps_by_power: dict[str, int] | None = None,
                      in_stream: dict[str, int] | None = None) -> Price:
        """A cold read of `size` bytes in a forward stream (sorted lookups) whose reads are `gap`
        bytes apart on average, and `gaps_by_power` of them after a gap of each power of two
        (the profile's gap_log2), `in_stream` of those in a stream (stream_gap_log2: the read
        before them skipped little).

        What such a read costs depends on whether readahead rides the stream: a short gap
        lands in a window readahead opened, a long one misses.  So each read is priced at the
        mean cost of fsbench's reads that followed a gap of the same power of two, pooled over
        all its forward streams of that request size.  A bucket holds at least MIN_GAP_READS
        reads; between two such the price follows log(gap), beyond them it is the nearest
        one's.  The streams' size nearest `size` is taken, scaled as the mean-gap price scales
        between the two sizes; the interval is the mean-gap price's, relatively.

        Pooling gives small gaps the dense streams' price, which is right only where
        readahead follows gapped streams at all.  Where fsbench's densest stream wider apart
        than a read sits less than FOLLOWS_GAPPED of the way from a random read to a
        sequential one (follows_gapped_streams: btrfs), the stream is priced by its mean gap
        instead; but its reads in a stream (`in_stream`), each as fsbench's stream of its own
        gap (by the mean-gap curve at that gap): readahead here does follow a stream of reads
        a page apart (on the val btrfs image 8.8 us a 4 KiB read, its sequential read 8.2),
        and a mean that a few long jumps make (a database's VACUUM: 763 KiB, where 97% of its
        reads skip a page after a read that skipped a page) prices every read as a jump.
        Without the histogram, or from a cost table without reads by gap (said so), the
        price is the mean gap's."""
        by_mean = self._forward_at_mean_gap(size, gap)
        if not gaps_by_power or self.table.memory_only or not self.table.gaps("read", "cold"):
            return by_mean
        streams = self.table.gap_costs("read", "cold")
        if not streams:
            return _lacking(by_mean, "forward reads by gap")
        follows = self.unfollowed_gap(size)
        if follows is not None:
            unfollowed = (f"readahead here does not follow streams {follows[0]} B apart: {follows[1]:.0%} of the way "
                          f"from a random read to a sequential one")
            streamed = sum(in_stream.values()) if in_stream else 0
            if not streamed:
                return by_mean.labelled(f"{by_mean.source} ({unfollowed})")
            reads = max(sum(gaps_by_power.values()), streamed)
            ns = (sum(n * self._forward_at_mean_gap(size, int(lo)).ns for lo, n in in_stream.items())
                  + (reads - streamed) * by_mean.ns) / reads
            source = (f"{by_mean.source}, but its {streamed / reads:.0%} in a stream each as fsbench's stream of its "
                      f"own gap ({unfollowed})")
            return by_mean.at(ns, source)
        measured = min(streams, key=lambda s: (abs(math.log(s / max(size, 1))), -s))
        costs = _pooled_by_gap(streams[measured])
        if not costs:
            return by_mean
        reads = sum(gaps_by_power.values())
        ns = sum(n * _cost_at_gap(costs, int(lo)) for lo, n in gaps_by_power.items()) / reads
        source = f"fsbench read forward cold {measured} B, each read at the pooled cost of reads after a like gap"
        if measured != size:
            reference = self._forward_at_mean_gap(measured, gap).ns
            ns *= by_mean.ns / reference if reference > 0 else 1.0
            source += f", scaled to {size} B as the mean-gap price scales"
        return by_mean.at(ns, source)

    def resumed_read(self, size: int, stream_gap: float) -> Price | None:
        """A cold read of `size` bytes at the previous read's end, made right after a read that
        skipped ahead or back (characterizer.classes: resumes), on a filesystem whose readahead
        does not follow gapped streams (follows_gapped_streams): no run of reads grew a window
        for it, so it costs what the stream it resumes costs, priced by its mean gap
        (`stream_gap`, the workload's forward reads of that size; a random cold read where it
        has none), not a long sequential stream's read.  None where readahead follows gapped
        streams or the table cannot say: there such a read finds the window the previous read
        began, and costs a sequential one."""
        follows = self.unfollowed_gap(size)
        if follows is None:
            return None
        price = self.forward_read(size, stream_gap) if stream_gap > 0 else self.data("read", "random", "cold", size)
        return price.labelled(f"{price.source}; it resumes a stream after a gap, and readahead here does not follow "
                              f"streams {follows[0]} B apart")

    def unfollowed_gap(self, size: int) -> tuple[int, float] | None:
        """follows_gapped_streams' stream and share where readahead here does not follow
        gapped streams of `size`-byte reads (less than FOLLOWS_GAPPED of the way to a
        sequential read); None where it does, or the table cannot say."""
        follows = self.follows_gapped_streams(size)
        return follows if follows is not None and follows[1] < FOLLOWS_GAPPED else None

    def follows_gapped_streams(self, size: int) -> tuple[int, float] | None:
        """How far readahead follows a stream of `size`-byte reads with gaps between them:
        fsbench's stream at the smallest gap wider than a read, as a share of the way from a
        cold random read (0) to a sequential one (1), with that gap; None where the table
        has no such stream or a random read costs no more than a sequential one."""
        wider = [g for g in self.table.gaps("read", "cold") if g > size]
        if not wider:
            return None
        alone = self.data("read", "random", "cold", size).ns
        streamed = self.data("read", "sequential", "cold", size).ns
        if alone <= streamed:
            return None
        stream = self.data("read", "forward", "cold", size, wider[0]).ns
        return wider[0], min(max((alone - stream) / (alone - streamed), 0.0), 1.0)

    def _forward_at_mean_gap(self, size: int, gap: float) -> Price:
        """A cold read of `size` bytes in a forward stream whose reads are `gap` bytes apart on
        average, priced by the mean alone.  fsbench measures such streams at a few mean gaps; between
        two of them the price follows log(gap); below the smallest it runs linearly down to
        the sequential read at gap 0 (a stream with no gaps); beyond the largest it is the
        largest's.  A cost table without forward reads prices them as random, said so."""
        gaps = self.table.gaps("read", "cold")
        if self.table.memory_only or not gaps:
            price = self.data("read", "random", "cold", size)
            return price if self.table.memory_only else _lacking(price, "forward-order reads")
        if gap >= gaps[-1]:
            price = self.data("read", "forward", "cold", size, gaps[-1])
            if gap == gaps[-1]:
                return price
            return price.labelled(f"{price.source}, gap {gaps[-1]} B (the largest measured, for {gap:.0f} B)")
        if gap <= gaps[0]:
            lower, upper = self.data("read", "sequential", "cold", size), self.data("read", "forward", "cold", size, gaps[0])
            w = max(gap, 0.0) / gaps[0]
            where = f"between sequential and gap {gaps[0]} B"
        else:
            g0 = max(g for g in gaps if g < gap)
            g1 = min(g for g in gaps if g >= gap)
            lower, upper = self.data("read", "forward", "cold", size, g0), self.data("read", "forward", "cold", size, g1)
            w = math.log(gap / g0) / math.log(g1 / g0)
            where = f"between gaps {g0} and {g1} B"
        return lower.toward(upper, w, f"fsbench read forward cold {size} B, gap {gap:.0f} B: {where}")

    def straddle(self, bench: str, order: str, cache: str) -> Price:
        """What a `bench` call pays for touching one page more than it must (a request that
        straddles a page boundary, characterizer.classes: straddles): fsbench's call of a
        block and a byte less its call of a block, the one more (partial) block each d+1
        call touches; where fsbench did not measure d+1, the Park-Lipton curve's.  fsbench's
        d-1 writes straddle as they go (each starts a byte before the last ended), so a
        straddling request just under a block is priced up to this much too high.

        Warm, where both calls were measured, it is the difference of their median calls,
        not of their means.  A warm call touches no device, and its mean is moved by the few
        calls that met a writeback or a commit (btrfs: one 18-27 ms stall among thousands of
        3 us overwrites doubles a case's mean), and the difference of two such means carries
        both cases' stalls, whichever way they fell.  The extra page's own cost is what a
        typical call pays; the stalls stay priced, in the aligned call's mean."""
        one_more = self.data(bench, order, cache, self.block_size + 1)
        aligned = self.data(bench, order, cache, self.block_size)
        source = f"{bench} {order} {cache}: {one_more.source} less {aligned.source}"
        by_means = one_more.minus(aligned, source)
        if self.table.measured_cache(cache) != "warm":
            return by_means
        medians = [self.table.entry(bench, order, cache, size) for size in (self.block_size + 1, self.block_size)]
        if any(e is None or e.latency_ns.p50 is None for e in medians):
            return by_means
        ns = max(medians[0].latency_ns.p50 - medians[1].latency_ns.p50, 0.0)
        return replace(by_means, ns=ns, low_ns=min(by_means.low_ns, ns), high_ns=max(by_means.high_ns, ns),
                       source=f"{source}, their median calls")

    def new_file_write(self, files: tuple[int, ...], requests: tuple[int, ...]) -> Price | None:
        """A write into a file the workload made: fsbench's write_new_mix at the workload's
        mix of bytes written into each such file (`files`) and of the requests that wrote them
        (`requests`, documents.size_mix both), where the table measured it; else None (kept as
        unmeasured), and the writes keep their other prices.  A file just made has its first
        pages, blocks and size set up by its first writes, which appends to one long file do
        once; what that costs differs by filesystem."""
        if not requests:
            return None
        return self._at_mix("write_new_mix", "sequential", "warm", files, "file sizes", requests)

    def append_mix(self, mix: tuple[int, ...]) -> Price | None:
        """A sequential buffered write among a workload's writes of `mix` sizes
        (documents.size_mix), some of which straddle a page boundary: fsbench's append_mix,
        which makes those writes one after another as the workload does, straddles and all,
        rather than pricing each size alone and a straddle as a difference of two cases.
        None where there is no such case to price it by (_at_mix)."""
        return self._at_mix("append_mix", "sequential", "warm", mix, "write sizes")

    def _has(self, bench: str) -> bool:
        return bench in self._benches

    def _copy_without_benchmark(self, cache: str, size: int) -> Price:
        """A cost table measured before fsbench had its copy benchmark: the copy priced as
        reading the source and writing the destination, which is what a filesystem that
        cannot share extents does (and an overestimate on one that can), said so.  A cold
        source is read from its start, as a file's first read is: a random read of its size,
        not a long stream's average (model: the first read of each file)."""
        read = self.data("read", "random" if cache == "cold" else "sequential", cache, size)
        write = self.data("write", "sequential", "warm", size)
        return read.plus(write, f"{read.source} + {write.source} (this cost table has no copy benchmark: "
                                "measure it again to price clones)")

    def _price_data(self, bench: str, order: str, cache: str, size: int, gap: int | None = None) -> Price:
        curve = self._curve(bench, order, cache, gap)
        sizes = [s for s, _ in curve]
        label = f"fsbench {bench} {order_label({'order': order, 'gap': gap})} {cache}"
        if size in sizes:
            return _measured(curve[sizes.index(size)][1], f"{label} {size} B")
        params = self._fit(bench, order, cache, gap, curve)
        modelled = evaluate(params, size, self.block_size)
        if len(curve) == 1 or modelled <= 0:
            self._note_unmeasured(bench, order, cache, gap, size, sizes[-1])
            # One size, or a curve that is zero there: the nearest measurement, said so.
            nearest = min(curve, key=lambda c: abs(math.log(c[0] / size)))
            return _measured(nearest[1], f"{label} {nearest[0]} B (nearest measured size to {size} B)")
        anchors = [(s, _measured(e, ""), evaluate(params, s, self.block_size)) for s, e in curve]
        below = [a for a in anchors if a[0] < size]
        above = [a for a in anchors if a[0] > size]
        if below and above:
            (s0, p0, m0), (s1, p1, m1) = below[-1], above[0]
            w = math.log(size / s0) / math.log(s1 / s0)
            where = f"Park-Lipton between {s0} and {s1} B"
        else:
            (s0, p0, m0) = below[-1] if below else above[0]
            (s1, p1, m1), w = (s0, p0, m0), 0.0
            where = f"Park-Lipton from {s0} B (beyond the measured sizes)"
            self._note_unmeasured(bench, order, cache, gap, size, sizes[-1])
        ratio = (1 - w) * (p0.ns / m0 if m0 > 0 else 1.0) + w * (p1.ns / m1 if m1 > 0 else 1.0)
        # The interval and the CPU time, as shares of the latency, between the two sizes.
        low = (1 - w) * (p0.low_ns / p0.ns if p0.ns else 1.0) + w * (p1.low_ns / p1.ns if p1.ns else 1.0)
        high = (1 - w) * (p0.high_ns / p0.ns if p0.ns else 1.0) + w * (p1.high_ns / p1.ns if p1.ns else 1.0)
        cpu = _both(p0.cpu_share, p1.cpu_share, lambda a, b: (1 - w) * a + w * b)
        ns = modelled * ratio
        return Price(ns, ns * low, ns * high, f"{label} {size} B: {where}", None if cpu is None else ns * cpu)

    def _note_unmeasured(self, bench: str, order: str, cache: str, gap: int | None, size: int, largest: int) -> None:
        """Keep a case priced from beyond the curve's largest measured size, where fsbench
        could measure nearer (forward streams' gaps are measured by gap, not size)."""
        wanted = min(size, MAX_COPY_BYTES if bench == "copy" else MAX_REQUEST_BYTES)
        if gap is None and wanted > largest:
            self.unmeasured.add(Unmeasured(bench, order, "warm" if self.table.memory_only else cache, wanted))

    def mapped_read(self, size: int, cache: str) -> Price:
        """_mapped_read, kept."""
        return self._kept(("mapped_read", size, cache), lambda: self._mapped_read(size, cache))

    def _mapped_read(self, size: int, cache: str) -> Price:
        """A region of `size` bytes mapped and read through by page faults, once
        (characterizer.mapped).  Warm: fsbench's mmap_read (map, touch every page, unmap),
        whose faults cost more than a read's copy.  Cold: that, plus the device's part of a
        cold random read of the size (cold less warm): a fault reads the region in as a read
        of its length would, where the region is the whole file (git and ripgrep map whole
        files), since the window a fault reads around it stops at the file's end.
        fsbench's cold mmap_read maps a region of a large file, whose fault reads far past
        it: a database's mapping, not this.  A table without mmap_read prices the region as
        a read of its length, said so."""
        if not self._has("mmap_read"):
            return _lacking(self.data("read", "random", cache, size), "mmap_read")
        faults = self.data("mmap_read", "random", "warm", size)
        if cache == "warm" or self.table.memory_only:
            return faults
        cold, warm = self.data("read", "random", "cold", size), self.data("read", "random", "warm", size)
        return cold.minus(warm, "").plus(faults, f"{cold.source} less {warm.source}, + {faults.source}")

    def end_of_file(self) -> Price:
        """A data call that moved nothing (a read or copy at end of file, the last call of
        every read-to-the-end loop): no data is fetched or written, so it costs what a call
        that finds its page cached does, fsbench's warm read of the smallest size measured."""
        smallest = self._curve("read", "sequential", "warm")[0][0]
        price = self.data("read", "sequential", "warm", smallest)
        return price.labelled(f"{price.source} (moves no data: at end of file)")

    def fsync(self, bytes_per_fsync: float, kind: str = "metadata", scattered: float = 0.0,
              request: float | None = None) -> Price:
        """One sync of `kind` (characterizer.syncs) after `bytes_per_fsync` dirty bytes.
        metadata: fsbench's fsync after an allocating write, those bytes written in requests
        of `request` bytes on average where it is given (_written_in_requests); data: its
        fdatasync after a rewrite in place, `scattered` (0-1) of the way from one request of
        those bytes to as many single blocks scattered over the file (_scattered).  Where the
        table measured that sync after writes of this size or more (and of another size
        besides), the price follows that curve: the writeback as
        the filesystem does it, in large extents.  Otherwise it is the sync after 4 KiB plus
        the time to write the rest through to the device (sequential direct writes), and the
        case is kept as unmeasured for `fsbm bench --for`.  clean: fsbench's sync of a file
        with nothing dirty.  directory: its sync of a directory after a file was made in it.
        A filesystem in memory has no device: its sync is fsbench's, whatever was written.  A
        cost table measured before fsbench had a kind's case prices it as the next one up
        (directory as clean, clean and data as metadata), said so."""
        if kind == "directory":
            entry = self.table.entry("fsync_dir", "sequential", "warm")
            if entry is not None:
                return _measured(entry, "fsbench fsync_dir (a directory after a file was made in it)")
            return _lacking(self.fsync(0, "clean"), "fsync_dir")
        if kind == "clean":
            entry = self.table.entry("fsync_clean", "sequential", "warm")
            if entry is not None:
                return _measured(entry, "fsbench fsync_clean (nothing dirty)")
            return _lacking(self._sync_base("fsync", "fsbench fsync after 4096 B"), "fsync_clean")
        bench = "fdatasync_overwrite" if kind == "data" else "fsync"
        if bench == "fdatasync_overwrite" and self.table.entry(bench, "sequential", "warm", 4096) is not None:
            base = self._sync_base(bench, "fsbench fdatasync after a 4096 B rewrite")
        else:
            base = self._sync_base("fsync", "fsbench fsync after 4096 B")
            if bench == "fdatasync_overwrite":
                base, bench = _lacking(base, bench), "fsync"
        size = int(bytes_per_fsync)
        if size <= 4096 or self.table.memory_only:
            return base
        written = self._written_in_requests(bench, size, request)
        if written is not None:
            return self._scattered(written, bench, size, scattered)
        sizes = [s for s, _ in self._curve(bench, "sequential", "warm")]
        if len(sizes) > 1 and sizes[-1] >= min(size, MAX_REQUEST_BYTES):
            return self._scattered(self.data(bench, "sequential", "warm", size), bench, size, scattered)
        # The direct writes stand in for the sync's own case: that case is the one to measure.
        kept = set(self.unmeasured)
        through = self.data("write", "sequential", "direct", size)
        first = self.data("write", "sequential", "direct", 4096)
        self.unmeasured = kept | {Unmeasured(bench, "sequential", "warm", min(size, MAX_REQUEST_BYTES))}
        extra = through.minus(first, "")
        return self._scattered(base.plus(extra, f"{base.source} + direct write of {size} B less 4096 B"), bench, size,
                               scattered)

    def _written_in_requests(self, bench: str, size: int, request: float | None) -> Price | None:
        """fsbench's sync after `size` new bytes written as the workload wrote them: in requests
        of `request` bytes on average, taken at the power of two at or below it and at least a
        block (fsbench fsync with --request-sizes).  Written a page at a time, new bytes stay
        in pages of their own, where one large request puts them in large folios, and on ext4
        and xfs a sync of 328 KiB so written cost 1.3-1.5 times as much (this machine).

        None, for the price after one request, where that is what the sync is like: requests
        of LARGE_REQUEST_BYTES or more, or as large as the bytes; a sync of a rewrite (its
        pages are the ones its file was laid out in, which fsbench's data-only case lays out a
        block at a time, whatever the rewrite's requests); more bytes than fsbench writes
        (MAX_REQUEST_BYTES).  None too where the table has not measured the case, which is
        then kept for `fsbm bench --for`."""
        if bench != "fsync" or not request or size > MAX_REQUEST_BYTES:
            return None
        requested = max(self.block_size, 1 << max(int(request), 1).bit_length() - 1)
        if requested >= min(size, LARGE_REQUEST_BYTES):
            return None
        cache = self.table.measured_cache("warm")
        entry = next((e for e in self.table.entries
                      if e.bench == bench and e.order == "sequential" and e.cache == cache and e.size == size
                      and tuple(e.request_sizes or ()) == (requested,)), None)
        if entry is None:
            self.unmeasured.add(Unmeasured(bench, "sequential", cache, size, request_sizes=(requested,)))
            return None
        return _measured(entry, f"fsbench fsync sequential warm {size} B in requests of {readable_bytes(requested)}")

    def _scattered(self, one_request: Price, bench: str, size: int, share: float) -> Price:
        """A sync of `size` bytes rewritten in separate runs: `share` of the way from fsbench's
        sync after one request of that size to its sync after as many single blocks scattered
        over the file (fdatasync_overwrite, random).  Written back, scattered blocks are as
        many writes to the device; a database's pages cost two to three times one request of
        their bytes.  A sync that also commits metadata (fsync; a database file that grew as
        well) pays the same for its scattered blocks: the data-only pair's difference at that
        share, added to its own price.  Where the table has not measured the scattered case at
        this size, the one request's price stands and the case is kept for `fsbm bench --for`."""
        data_only = "fdatasync_overwrite"
        if share <= 0:
            return one_request
        measured = [size for size, _ in self._measured(data_only, "random", "warm")]
        if len(measured) < 2 or max(measured) < min(size, MAX_REQUEST_BYTES):
            self.unmeasured.add(Unmeasured(data_only, "random", "warm", min(size, MAX_REQUEST_BYTES)))
            return one_request
        share = min(share, 1.0)
        said = f"{one_request.source}, {100 * share:.0f}% of the way to its blocks scattered"
        scattered = self.data(data_only, "random", "warm", size)
        if bench == data_only:
            return one_request.toward(scattered, share, said)
        extra = scattered.minus(self.data(data_only, "sequential", "warm", size), "")
        return one_request.plus(extra.scaled(share), f"{said} (as {data_only} scatters)")

    def _sync_base(self, bench: str, label: str) -> Price:
        return _measured(self._entry(bench, "sequential", "warm", 4096), label)
