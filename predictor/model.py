"""The count x cost model (DESIGN: Prediction): a profile's event classes, priced on one
candidate, give the time the workload spends in that filesystem, line by line.

Which price each class gets:
- reads: the share the page cache would hold (the profile's reuse curve at the cache
  size; a cold start counts first touches as misses; where the class counted its own
  re-reads, that share of them: reread_share) at the warm price, the rest at the cold
  price, sequential, forward (by its mix of gaps, pricing.Pricer.forward_read) or random
  as the class is;
  a forward read that hits costs a warm random one; and the first read of each file
  that misses is a random read, not a sequential one (fsbench's sequential price is a long
  stream's, whose readahead the first read lacks), of as much of the file as the readahead
  it begins takes in (the bytes a stream reads on average, up to the kernel's initial
  window for a read of the sequential reads' mean size: Pricer.first_read_bytes), but
  where the table measured fsbench's read_listed_mix at the mix of the workload's files
  only read under SMALL_FILE_BYTES, that share of the first reads is priced as that case
  less the sequential read it replaces (Pricer.first_read_listed: btrfs keeps a small
  file inline beside its inode, and its first read costs a tenth of one from an extent);
  a sequential cold read made after other calls since the stream's last read has its wait
  for the device overlapped by readahead, up to the time of the workload's calls outside
  the reads (readahead_overlap), and in an NFS capture a stream's back-to-back cold reads
  have theirs overlapped up to the server's own handling of them (stream_waits_hidden,
  which predict applies); one that resumes a stream right after a read that skipped
  (characterizer.classes: resumes) costs, where readahead does not follow gapped streams, a
  read of that stream (pricing.Pricer.resumed_read), not a long sequential stream's read;
- regions read through a file mapping (characterizer.mapped): fsbench's mmap_read of the
  length (the faults' work), plus on a miss the device's part of a cold read of it
  (pricing.Pricer.mapped_read); no read call shows them, so a trace's read counts leave
  them out;
- writes: buffered, so the warm price; sequential ones allocate (fsbench write), random
  ones rewrite in place (fsbench overwrite), and so do the sequential ones that rewrote
  their file in place (characterizer.in_place: a WAL log written again from its start, a
  checkpoint's pages in order), at fsbench's overwrite in sequential order; one that
  straddles a page boundary it need not have (characterizer.classes: straddles) pays for
  the one page more it touches
  (pricing.Pricer.straddle), as each record SQLite journals does; where such writes come in
  several sizes and the table measured fsbench's append_mix at the workload's mix of them
  (`fsbm bench --for`), every sequential write is that case's price instead, the sizes and
  straddles made one after another as the workload makes them; the sequential writes into
  files the workload created (characterizer.classes: into_created), where the table
  measured fsbench's write_new_mix at the workload's mix of bytes in each such file and of
  those writes' sizes, are that case's price (pricing.Pricer.new_file_write): a file just
  made sets up its first pages, blocks and size as it is written, which appends to one long
  file do not;
- a read or copy that moved nothing (at end of file, where every read-to-the-end loop
  stops): fsbench's warm read of its smallest size, as no data moves;
- in-kernel copies (copy_file_range): fsbench's copy of a whole file of that size (a
  filesystem that shares extents clones it, one that does not reads and writes it: the
  cost table says which), whose source is read for the first time (copy_hit_fraction): on
  a cold start it misses, on a warm one it is cached where the working set fits;
- syncs, by kind (characterizer.syncs) and by the power of two of the bytes each made
  durable: one that commits metadata at fsbench's fsync after an allocating write, a
  data-only one at its fdatasync after a rewrite in place, either plus writing the bytes it
  makes durable; one whose bytes came in separate runs, the share of the way from one
  request to single blocks scattered over the file (scattered_share): a data-only one along
  fsbench's fdatasync after scattered rewrites, one that commits metadata too (a database
  file that also grew) plus that scattering's extra over one request (Pricer._scattered); one with
  nothing dirty at fsbench's fsync_clean, a directory's after its entries changed at
  fsync_dir;
- metadata: on a cold start, one call per distinct name touched pays the cold price (the
  first look at it), the rest the warm price; failed calls cost a lookup; a directory's
  listing is priced once, by the bytes of entries its calls returned together
  (_listing_lines, Pricer.listing), and the empty getdents64 that ends it is counted in it;
  a create whose file the
  workload then writes is priced among files written as they are made (fsbench
  create_written, at the mean bytes written into each), which on btrfs costs several
  times an empty create; an unlink of a file the trace showed holding data at fsbench's
  unlink_written, at the mean bytes such a file held; of the other unlinks, those in a
  directory that saw hundreds of them at fsbench's unlink_entries at that directory's size
  (rm -rf empties each directory it lists), the rest at a stream as long as the workload's
  (Pricer.unlink_among).  Where the table measured either at
  the workload's own mix of file sizes (create_written_mix, unlink_written_mix: `fsbm bench
  --for`), that price instead: on btrfs a mix costs more a create than its mean size does,
  and a create among more written files more, so create_written_mix is measured among as
  many files as the workload made and wrote (pricing.written_files).
  A file written under a temporary name and renamed into place once written (rsync, git)
  moves that wait on btrfs from its create to its rename: such creates take fsbench's
  create_renamed_mix and such renames its rename_written_mix, at their own mix, and an
  empty file's create and rename where the table has neither yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from fsbm.characterizer.classes import MAPPED_CLASS
from fsbm.documents import (ClassCount, Fsync, MetadataCount, PriceLine, Profile, Reuse, ReusePoint, SizeBucket,
                            SyncCount, SyncKind, size_mix)
from fsbm.predictor.pricing import UNLINK_DIRECTORY_BEYOND, Price, Pricer, WrittenFiles
from fsbm.units import readable_bytes
from fsbm.traces.vocabulary import GROUPS

STARTS = ("cold", "warm")


@dataclass(frozen=True)
class Line:
    """One priced class: `count` calls (fractional where a share is taken) at `price` each."""

    op: str
    group: str
    detail: str
    count: float
    price: Price
    # The share of these calls whose wait for the device readahead can overlap with the
    # calls the program makes between them (readahead_overlap).
    overlap_share: float = 0.0
    # The share of these calls that read a stream back to back (sequential reads that missed
    # with no other call since the stream's last read): readahead can overlap their wait only
    # with time outside the filesystem, such as an NFS server's own handling of each read
    # (stream_waits_hidden).
    stream_share: float = 0.0

    @property
    def total_ns(self) -> float:
        return self.count * self.price.ns

    @property
    def cpu_ns(self) -> float:
        """The caller's CPU time in these calls; where the cost table does not say (measured
        before fsbench kept it), their whole latency, which bounds it."""
        return self.count * (self.price.cpu_ns if self.price.cpu_ns is not None else self.price.ns)

    def price_line(self) -> PriceLine:
        """The line as a prediction shows it."""
        return PriceLine(op=self.op, group=self.group, detail=self.detail, count=self.count, ns_each=self.price.ns,
                         cpu_ns_each=self.price.cpu_ns, total_ns=self.total_ns, source=self.price.source)


@dataclass(frozen=True)
class FsTime:
    """The modelled time a workload spends in one candidate filesystem.  The pricer keeps one
    per point of the reuse curve, shared by every prediction that reaches that point, so it
    never changes, and works out each sum once."""

    candidate: str
    lines: tuple[Line, ...] = ()

    @cached_property
    def total_ns(self) -> float:
        return sum(line.total_ns for line in self.lines)

    @cached_property
    def cpu_ns(self) -> float:
        return sum(line.cpu_ns for line in self.lines)

    @cached_property
    def low_ns(self) -> float:
        return sum(line.count * line.price.low_ns for line in self.lines)

    @cached_property
    def high_ns(self) -> float:
        return sum(line.count * line.price.high_ns for line in self.lines)

    @cached_property
    def price_lines(self) -> tuple[PriceLine, ...]:
        """The lines as a prediction shows them, built once."""
        return tuple(line.price_line() for line in self.lines)

    def by_op(self) -> dict[str, float]:
        """ns per operation, the largest first (a copy: the sums are worked out once)."""
        return dict(self._by_op)

    @cached_property
    def _by_op(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for line in self.lines:
            out[line.op] = out.get(line.op, 0.0) + line.total_ns
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def by_group(self, cpu: bool = False) -> dict[str, float]:
        """ns per group of operations: of time, or with `cpu` of the caller's CPU time."""
        out = {g: 0.0 for g in GROUPS}
        for line in self.lines:
            out[line.group] += line.cpu_ns if cpu else line.total_ns
        return out


def _held(reuse: Reuse, cache_bytes: int, start: str, share: Callable[[ReusePoint], float],
          first_references: float) -> float:
    """A share the reuse curve says a page cache of `cache_bytes` holds (`share` of its
    largest point within that size).  Cold start: the curve as the characterizer gives it
    (first references miss).  Warm start: the data was read before the workload began, so
    the `first_references` (a share of the same whole) hit too when the working set fits."""
    held = [share(p) for p in reuse.points if p.cache_bytes <= cache_bytes]
    fraction = float(held[-1]) if held else 0.0
    if start == "warm" and reuse.distinct_blocks * reuse.block_size <= cache_bytes:
        fraction = min(1.0, fraction + first_references)
    return fraction


def hit_fraction(reuse: Reuse, cache_bytes: int, start: str = "cold") -> float:
    """The share of block reads a page cache of `cache_bytes` holds, from the reuse curve (_held)."""
    if not reuse.block_reads:
        return 0.0
    return _held(reuse, cache_bytes, start, lambda p: p.hit_fraction, reuse.cold_misses / reuse.block_reads)


def reread_share(reuse: Reuse, cache_bytes: int, start: str = "cold") -> float | None:
    """For a cold start, the share of the workload's re-reads (reads of blocks an earlier
    access touched) a page cache of `cache_bytes` holds: its hit fraction over that of a cache
    holding everything the workload touched.  A read class that counted its own re-reads
    (ClassCount.reread_fraction) hits in that share of them, where the workload's hit
    fraction would spread every class's hits alike: a program that reads its libraries again
    and again, then a large file once at random, would have its file's reads hit as often as
    its libraries'.  None for a warm start, whose first references hit too."""
    if start != "cold" or not reuse.block_reads or not reuse.points:
        return None
    everything = reuse.points[-1].hit_fraction
    return min(1.0, hit_fraction(reuse, cache_bytes, start) / everything) if everything > 0 else 0.0


def first_read_hit_fraction(reuse: Reuse, cache_bytes: int, start: str = "cold") -> float | None:
    """The share of the files' first reads a page cache of `cache_bytes` holds (_held); None
    for a profile made before the reuse curve kept it."""
    if not reuse.first_reads or any(p.first_read_hit_fraction is None for p in reuse.points):
        return None
    return _held(reuse, cache_bytes, start, lambda p: p.first_read_hit_fraction or 0.0,
                 reuse.first_reads_cold / reuse.first_reads)


def _split(op: str, group: str, detail: str, count: float, cold_share: float, cold: Price, warm: Price) -> list[Line]:
    """`count` calls, `cold_share` of them at the cold price."""
    out = []
    if cold_share > 0:
        out.append(Line(op, group, f"{detail}, cold".lstrip(", "), count * cold_share, cold))
    if cold_share < 1:
        out.append(Line(op, group, f"{detail}, warm".lstrip(", "), count * (1 - cold_share), warm))
    return out


def copy_hit_fraction(reuse: Reuse, cache_bytes: int, start: str = "cold") -> float:
    """The share of in-kernel copies whose source the page cache holds.  A trace names a
    copy's source only beside its destination (the event's path2), and the reuse curve holds
    the destination's blocks alone, so a copy's source counts as a first reference: it
    misses on a cold start, and on a warm one it was cached before the workload began where
    the working set fits (_held).  The reads' share would not do: reads of what the copies
    wrote (cp -r, then grep) all hit, while every source came from the device."""
    return _held(reuse, cache_bytes, start, lambda p: 0.0, 1.0)


def _stream_starts(profile: Profile, hits: float, first_hits: float | None = None) -> tuple[float, float, float]:
    """Sequential reads that start a stream (the first read of a file in a run) and miss, the
    mean size of a sequential read, and the mean bytes a stream reads: fsbench's sequential
    cold price is a long stream's average, readahead included, but each file read from its
    start is first a random read, of as much of the file as the readahead that read begins
    takes in (Pricer.first_read_bytes).  A stream misses as the files' first reads do
    (`first_hits`), where the profile says; else as the workload's reads do overall (`hits`)."""
    streams = profile.runs.read_only + profile.runs.read_write
    stream_hits = hits if first_hits is None else first_hits
    sequential = [c for bucket, c in profile.classes.data.get("read", {}).get("sequential", {}).items()
                  if bucket != "0"]  # a read at end of file moves nothing
    count = sum(c.count for c in sequential)
    nbytes = sum(c.bytes for c in sequential)
    size = nbytes / count if count else 0.0
    return min(streams * (1 - stream_hits), count * (1 - hits)), size, nbytes / streams if streams else size


# The files a workload only read that a program reads whole in one request (cat asks 128 KiB,
# grep 96 KiB, sha256sum 32 KiB): fsbench's read_listed_mix reads each of its files in one
# request of the mix's largest size, so a larger file's first read would be priced whole.
SMALL_FILE_BYTES = 32 << 10


def _small_files_read(profile: Profile) -> tuple[float, tuple[int, ...], float]:
    """Of the files the workload only read (runs.read_files_log2), the share holding less
    than SMALL_FILE_BYTES, their mix of sizes (documents.size_mix) and their mean bytes;
    (0, (), 0) where the profile does not say."""
    buckets = profile.runs.read_files_log2 or {}
    small = {bucket: files for bucket, files in buckets.items() if int(bucket) < SMALL_FILE_BYTES}
    count = sum(files.files for files in small.values())
    if not count:
        return 0.0, (), 0.0
    return (count / sum(files.files for files in buckets.values()), size_mix(small),
            sum(files.bytes for files in small.values()) / count)


def _first_read_lines(profile: Profile, pricer: Pricer, seeks: float, size: float, stream_bytes: float) -> list[Line]:
    """The extra cost of the `seeks` first reads of files that miss (_stream_starts): a small
    file's, where the table measured read_listed_mix at the mix of the workload's small files
    (_small_files_read), that case less the sequential cold read of their mean size; any
    other's the random cold read of what the first read brings in (Pricer.first_read_bytes)
    less the sequential cold read it replaces."""
    lines = []
    share, mix, mean = _small_files_read(profile)
    listed = pricer.first_read_listed(mix) if share else None
    if listed is not None:
        streamed = pricer.data("read", "sequential", "cold", max(round(mean), 1))
        lines.append(Line("read", "read", f"first read of a small file from a cold cache, whole: "
                                          f"{readable_bytes(mean)} on average", seeks * share,
                          listed.minus(streamed, f"{listed.source} less {streamed.source}")))
        seeks *= 1 - share
    if seeks > 0:
        first = pricer.first_read_bytes(size, stream_bytes)
        seek = pricer.data("read", "random", "cold", round(first))
        streamed = pricer.data("read", "sequential", "cold", round(size))
        asked = f" ({readable_bytes(size)} asked, the rest read ahead)" if first > size else ""
        lines.append(Line("read", "read", f"first read of a file from a cold cache: a random {readable_bytes(first)} "
                                          f"read{asked}", seeks, seek.minus(streamed, f"{seek.source} less "
                                                                                      f"{streamed.source}")))
    return lines


def _mean_gap(counts: ClassCount | None) -> float:
    """The mean gap before a forward read class's reads (0 for no class)."""
    return counts.gap_bytes / counts.count if counts and counts.count else 0.0


def _resumed_lines(pricer: Pricer, counts: ClassCount, size: float, detail: str, forward: ClassCount | None,
                   hits: float) -> list[Line]:
    """The cache misses of a sequential read class's reads that resumed a stream, where the
    candidate prices them apart (pricing.Pricer.resumed_read), as a read of the workload's
    forward stream of that size (`forward`, its class)."""
    resumed = counts.resumes
    price = pricer.resumed_read(round(size), _mean_gap(forward)) if resumed and hits < 1 else None
    if price is None:
        return []
    return [Line("read", "read", f"{detail} resuming a stream after a gap, cache miss", resumed * (1 - hits), price)]


def _appended_mix(op: str, order: str, buckets: dict[str, ClassCount], pricer: Pricer) -> list[Line]:
    """Sequential buffered writes of several sizes, some straddling a page boundary (SQLite's
    journal: 4 bytes, a page, 4 bytes), as one line at fsbench's append_mix of the workload's
    mix of write sizes (Pricer.append_mix), where the table measured it; else none, and they
    are priced size by size.  Writes that straddle nothing keep fsbench's price of their own
    size, which measures them as they are."""
    if op != "write" or order != "sequential":
        return []
    sized = {bucket: counts for bucket, counts in buckets.items() if bucket != "0" and counts.count}
    if not any(counts.straddles for counts in sized.values()):
        return []
    mix = size_mix({bucket: SizeBucket(files=c.count, bytes=c.bytes) for bucket, c in sized.items()})
    price = pricer.append_mix(mix)
    if price is None:
        return []
    n = sum(counts.count for counts in sized.values())
    mean = sum(counts.bytes for counts in sized.values()) / n
    return [Line(op, "write", f"{readable_bytes(mean)} sequential, buffered, one after another at the workload's "
                              f"mix of sizes", n, price)]


def _in_place_lines(op: str, order: str, buckets: dict[str, ClassCount],
                    pricer: Pricer) -> tuple[list[Line], dict[str, ClassCount]]:
    """The sequential writes that rewrote their file in place (characterizer.in_place), at
    fsbench's overwrite in sequential order of their size, those straddling a page boundary
    (taken in proportion) one page more; and the buckets with those writes taken out."""
    if op != "write" or order != "sequential":
        return [], buckets
    lines, rest = [], {}
    for bucket, counts in buckets.items():
        if not counts.in_place or bucket == "0":
            rest[bucket] = counts
            continue
        share = counts.in_place / counts.count
        size = counts.bytes / counts.count
        detail = f"{readable_bytes(size)} sequential, buffered, rewriting the file in place"
        lines.append(Line(op, "write", detail, counts.in_place, pricer.data("overwrite", order, "warm", round(size))))
        if counts.straddles:
            lines.append(Line(op, "write", f"{detail}: straddling a page boundary, one page more",
                              counts.straddles * share, pricer.straddle("overwrite", order, "warm")))
        if counts.in_place < counts.count:
            rest[bucket] = _less(counts, "in_place")
    return lines, rest


def _less(counts: ClassCount, taken: str) -> ClassCount:
    """A write class's counts less the writes its field `taken` counts (into_created: those
    into files the workload created; in_place: those that rewrote their file in place), their
    bytes and straddles taken in proportion."""
    n = getattr(counts, taken)
    kept = 1 - n / counts.count
    return counts.model_copy(update={"count": counts.count - n, "bytes": round(counts.bytes * kept),
                                     "straddles": round(counts.straddles * kept), taken: 0})


def _new_file_lines(profile: Profile, op: str, order: str, buckets: dict[str, ClassCount],
                    pricer: Pricer) -> tuple[list[Line], dict[str, ClassCount]]:
    """The sequential writes into files the workload created, as one line at fsbench's
    write_new_mix of the workload's mix of bytes written into each created file and of those
    writes' sizes (Pricer.new_file_write), and the buckets with those writes taken out; where
    the table did not measure that case, no line and the buckets as they were."""
    if op != "write" or order != "sequential":
        return [], buckets
    created = {bucket: counts for bucket, counts in buckets.items() if bucket != "0" and counts.into_created}
    create = profile.classes.metadata.get("create")
    if not created or create is None:
        return [], buckets
    into = {bucket: counts.bytes * counts.into_created / counts.count for bucket, counts in created.items()}
    requests = size_mix({bucket: SizeBucket(files=counts.into_created, bytes=round(into[bucket]))
                         for bucket, counts in created.items()})
    price = pricer.new_file_write(size_mix(create.written_log2 or {}), requests)
    if price is None:
        return [], buckets
    n = sum(counts.into_created for counts in created.values())
    line = Line(op, "write", f"{readable_bytes(sum(into.values()) / n)} sequential, buffered, into files the "
                             "workload made, at its mix of file and request sizes", n, price)
    return [line], {bucket: _less(counts, "into_created") if bucket in created else counts
                    for bucket, counts in buckets.items()}


def _data_lines(profile: Profile, pricer: Pricer, hits: float, first_hits: float | None,
                copy_hits: float, rereads: float | None = None) -> list[Line]:
    """The data calls' lines: reads, mapped regions and copies split into cache hits and
    misses (`hits` of the block reads, or where a class counted its re-reads, `rereads` of
    those (reread_share); `copy_hits` of the copies' sources), writes and syncs (module
    docstring)."""
    lines = []
    seeks, size, stream_bytes = _stream_starts(profile, hits, first_hits)
    if seeks > 0:
        lines += _first_read_lines(profile, pricer, seeks, size, stream_bytes)
    for op, orders in profile.classes.data.items():
        for order, buckets in orders.items():
            rewrites, buckets = _in_place_lines(op, order, buckets, pricer)
            new_files, buckets = _new_file_lines(profile, op, order, buckets, pricer)
            appended = _appended_mix(op, order, buckets, pricer)
            lines += rewrites + new_files + appended
            for bucket, counts in sorted(buckets.items(), key=lambda kv: int(kv[0])):
                n, nbytes = counts.count, counts.bytes
                size = nbytes / n if n else 0
                detail = f"{readable_bytes(size)} {order}"
                if bucket == "0":
                    group = "write" if op == "copy" else op
                    lines.append(Line(op, group, "0 B: at end of file", n, pricer.end_of_file()))
                elif op in ("read", "copy", MAPPED_CLASS):
                    group = "write" if op == "copy" else "read"
                    if op == MAPPED_CLASS:
                        detail = f"{readable_bytes(size)} mapped, read through once"
                        miss, hit = pricer.mapped_read(round(size), "cold"), pricer.mapped_read(round(size), "warm")
                    elif order == "forward":
                        gap = _mean_gap(counts)
                        detail = f"{readable_bytes(size)} forward, {readable_bytes(gap)} apart"
                        miss = pricer.forward_read(round(size), gap, counts.gap_log2, counts.stream_gap_log2)
                        hit = pricer.data(op, "random", "warm", round(size))
                    else:
                        miss = pricer.data(op, order, "cold", round(size))
                        hit = pricer.data(op, order, "warm", round(size))
                    held = (copy_hits if op == "copy" else
                            counts.reread_fraction * rereads
                            if rereads is not None and counts.reread_fraction is not None else hits)
                    interleaved = counts.interleaved / n if n and op == "read" and order == "sequential" else 0.0
                    resumed = _resumed_lines(pricer, counts, size, detail, orders.get("forward", {}).get(bucket),
                                             hits) if op == "read" and order == "sequential" else []
                    rest = n - counts.resumes if resumed else n
                    streamed = 1.0 - interleaved if op == "read" and order == "sequential" else 0.0
                    lines += resumed + [Line(op, group, f"{detail}, {label}", count, price,
                                             *((interleaved, streamed) if label == "cache miss" else (0.0, 0.0)))
                                        for label, count, price in (("cache miss", rest * (1 - held), miss),
                                                                    ("cache hit", n * held, hit))
                                        if count > 0]
                elif appended:
                    continue  # priced above, as one line of appends at the workload's mix
                else:
                    bench = "write" if order == "sequential" else "overwrite"
                    lines.append(Line(op, "write", f"{detail}, buffered", n, pricer.data(bench, order, "warm",
                                                                                          round(size))))
                    if counts.straddles:
                        lines.append(Line(op, "write", f"{detail}, buffered: straddling a page boundary, one page more",
                                          counts.straddles, pricer.straddle(bench, order, "warm")))
    return lines


SYNC_DETAIL = {"metadata": "committing metadata", "data": "data only", "clean": "nothing dirty",
               "directory": "a directory whose entries changed"}


def _sync_lines(fsync: Fsync, done: int, pricer: Pricer) -> list[Line]:
    """One line per kind of sync (characterizer.syncs), and for the kinds that write data
    back, per power of two of the bytes each sync made durable where the profile counted
    them (SyncKind.bytes_log2): a sync's price is not linear in its bytes, so a kind that
    mixes a journal header's 28 B with a transaction's pages is not priced at their mean.
    Each is priced after its bytes written in the requests they came in where the profile
    counted them (SyncCount.requests; Pricer.fsync says which syncs that moves).
    A profile made before the kinds were told apart has only the mean bytes per sync: every
    sync is then a metadata one."""
    kinds = fsync.kinds or {"metadata": SyncKind(count=done, bytes=round((fsync.bytes_written_per_fsync or 0) * done))}
    lines = []
    for kind, counts in kinds.items():
        writes_back = kind in ("metadata", "data")
        groups = list(counts.bytes_log2.values()) if writes_back and counts.bytes_log2 else [counts]
        for group in groups:
            if not group.count:
                continue
            per_sync = group.bytes / group.count
            detail = SYNC_DETAIL[kind] + (f", after {readable_bytes(per_sync)} written" if writes_back else "")
            share = scattered_share(group)
            if share > 0:
                detail += f" in {group.runs / group.count:.1f} runs"
            request = group.bytes / group.requests if group.requests else None
            lines.append(Line("fsync", "sync", detail, group.count, pricer.fsync(per_sync, kind, share, request)))
    return lines


def scattered_share(counts: SyncCount, block: int = 4096) -> float:
    """How far the bytes a kind of sync made durable were from one run to a block a run:
    (runs - 1) / (blocks - 1) per sync, 0 where a sync wrote a block or less, or where the
    profile did not count runs."""
    if not counts.count or not counts.runs:
        return 0.0
    blocks = counts.bytes / counts.count / block
    if blocks <= 1:
        return 0.0
    return min(max((counts.runs / counts.count - 1) / (blocks - 1), 0.0), 1.0)


# Metadata calls on files holding data, priced apart (characterizer.classes): the count,
# bytes and sizes keys of the class, how a line says it, and the price by bytes a file.
WITH_DATA = {"create": ("written", "written_bytes", "written_log2", "then written", Pricer.create_written),
             "unlink": ("with_data", "data_bytes", "data_log2", "of a file holding data", Pricer.unlink_written),
             "rename": ("written", "written_bytes", "written_log2", "into place of a file just written",
                        Pricer.rename_written)}
# Of the creates then written, those renamed into place once written (the class's "renamed",
# renamed_bytes, renamed_log2): how a line says them, and their price (on btrfs their wait is
# the renames': fsbench's create_renamed_mix and rename_written_mix).
RENAMED_CREATES = ("then written and renamed into place", Pricer.create_renamed)
# Of the others, those synced once written (the class's "synced", synced_bytes, synced_log2:
# SQLite's journal, made, written, synced and removed in each transaction): no dirty data of
# theirs is left for a later create to wait for, so each is priced as an empty create.
SYNCED_CREATES = ("then written and synced", lambda pricer, _files, cache: pricer.metadata("create", cache))


def _without(buckets: dict[str, SizeBucket], taken: dict[str, SizeBucket]) -> dict[str, SizeBucket]:
    """`buckets` less the files and bytes of `taken`, bucket by bucket (none below 0)."""
    left = {}
    for key, bucket in buckets.items():
        gone = taken.get(key)
        files = bucket.files - (gone.files if gone else 0)
        if files > 0:
            left[key] = SizeBucket(files=files, bytes=max(bucket.bytes - (gone.bytes if gone else 0), 0))
    return left


def _plain_price(op: str, counts: MetadataCount, pricer: Pricer, cache: str) -> Price:
    """A metadata call's price with nothing known of the file's data: an unlink's in a stream as
    long as the workload's unlinks (Pricer.unlink_among), any other's fsbench's own."""
    return pricer.unlink_among(counts.done, cache) if op == "unlink" else pricer.metadata(op, cache)


def _plain_lines(op: str, counts: MetadataCount, pricer: Pricer, cold_share: float, count: float) -> list[Line]:
    """`count` of an operation's calls with nothing known of the file's data.  Of an unlink's,
    those made in directories that saw more than UNLINK_DIRECTORY_BEYOND unlinks each are
    priced at that directory's size (Pricer.unlink_emptying: rm -rf empties each directory it
    lists), as many as the directories held, within `count`; the rest at _plain_price."""
    lines: list[Line] = []
    sizes = (counts.directory_unlinks or {}) if op == "unlink" else {}
    for entries, directories in sorted(((int(k), n) for k, n in sizes.items()), reverse=True):
        if entries <= UNLINK_DIRECTORY_BEYOND or count <= 0:
            break
        emptied = min(entries * directories, count)
        lines += _split(op, "metadata", f"in a directory of {entries} entries emptied", emptied, cold_share,
                        pricer.unlink_emptying(entries, counts.done, "cold"),
                        pricer.unlink_emptying(entries, counts.done, "warm"))
        count -= emptied
    if count > 0:
        lines += _split(op, "metadata", "", count, cold_share, _plain_price(op, counts, pricer, "cold"),
                        _plain_price(op, counts, pricer, "warm"))
    return lines


def _with_data_lines(op: str, counts: MetadataCount, pricer: Pricer, cold_share: float) -> list[Line]:
    """The lines of a metadata operation some of whose calls were on files holding data
    (WITH_DATA): the rest priced as on an empty file, those by the bytes a file; a create's
    renamed into place once written (RENAMED_CREATES), and those synced once written
    (SYNCED_CREATES), apart from the other written ones."""
    count_key, bytes_key, sizes_key, detail, price = WITH_DATA[op]
    with_data, nbytes, sizes = getattr(counts, count_key), getattr(counts, bytes_key), getattr(counts, sizes_key) or {}
    lines = _plain_lines(op, counts, pricer, cold_share, counts.done - with_data)
    groups = []
    if op == "create":
        for files, files_bytes, files_sizes, said in ((counts.renamed, counts.renamed_bytes, counts.renamed_log2,
                                                       RENAMED_CREATES),
                                                      (counts.synced, counts.synced_bytes, counts.synced_log2,
                                                       SYNCED_CREATES)):
            files = min(files, with_data)
            if files:
                groups.append((files, files_bytes, files_sizes or {}, *said))
                with_data, nbytes, sizes = with_data - files, nbytes - files_bytes, _without(sizes, files_sizes or {})
    groups.insert(0, (with_data, nbytes, sizes, detail, price))
    for files, nbytes, sizes, said, priced in groups:
        if files <= 0:
            continue
        written = WrittenFiles(round(files), max(nbytes, 0) / files, size_mix(sizes))
        lines += _split(op, "metadata", f"{said}, {readable_bytes(written.bytes_per_file)} a file", files, cold_share,
                        priced(pricer, written, "cold"), priced(pricer, written, "warm"))
    return lines


def _listing_lines(counts: MetadataCount, directories: int, pricer: Pricer, cold_share: float) -> list[Line]:
    """A workload's directory listings, priced a directory at a time.

    fsbench's readdir cases each list a whole directory, in however many getdents64 calls it
    takes, so a directory listed in k calls costs one listing of all its bytes, not k
    listings of a k-th of them each: an NFS READDIRPLUS reply names about 1 KiB of entries,
    and priced a call at a time the block a cold listing reads was counted once a reply.  The
    directories listed are the listings the trace saw end (the empty getdents64 each ends
    with) or, where no listing shows its end (an NFS READDIR says it in its last reply), the
    distinct directories the workload touched; never more than the calls.  `cold_share` of
    them are cold, as of the other metadata calls (a lookup in a directory may have read its
    blocks before the listing does)."""
    listings = min(counts.done, counts.empty or directories or counts.done)
    per_listing = counts.listed_bytes / listings if counts.listed_bytes else None
    calls = f", in {counts.done / listings:.1f} calls" if counts.done > listings else ""
    detail = f"a directory of {readable_bytes(per_listing)} listed{calls}" if per_listing else f"a directory listed{calls}"
    return _split("readdir", "metadata", detail, listings, cold_share, pricer.listing(per_listing, "cold"),
                  pricer.listing(per_listing, "warm"))


def _metadata_lines(profile: Profile, pricer: Pricer, start: str) -> list[Line]:
    classes = profile.classes.metadata
    names = profile.namespace.files_touched + profile.namespace.directories_touched
    calls = sum(c.done + c.failed for op, c in classes.items() if op not in ("close", "fsync"))
    cold_share = min(1.0, names / calls) if calls and start == "cold" else 0.0
    lines = []
    for op, counts in classes.items():
        if op == "fsync":
            lines += _sync_lines(profile.fsync, counts.done, pricer)
        elif op in ("read", "write"):
            pass  # failed data calls: below
        elif op == "close":
            lines.append(Line(op, "metadata", "", counts.done, pricer.metadata("close", "warm")))
        elif op in WITH_DATA and getattr(counts, WITH_DATA[op][0]):
            lines += _with_data_lines(op, counts, pricer, cold_share)
        elif op == "stat" and counts.listed:
            listed = min(counts.listed, counts.done)
            mix = size_mix(counts.listed_log2 or {})
            lines += _split(op, "metadata", "", counts.done - listed, cold_share, pricer.metadata(op, "cold"),
                            pricer.metadata(op, "warm"))
            lines += _split(op, "metadata", "of an entry listed with its attributes", listed, cold_share,
                            pricer.listed_stat("cold", mix, listed), pricer.listed_stat("warm", mix, listed))
        elif op == "readdir" and counts.done:
            lines += _listing_lines(counts, profile.namespace.directories_touched, pricer, cold_share)
        elif counts.done:
            lines += _plain_lines(op, counts, pricer, cold_share, counts.done)
        if counts.failed:
            lines += _split(op, "metadata", "failed", counts.failed, cold_share, pricer.failed_lookup("cold"),
                            pricer.failed_lookup("warm"))
        if counts.empty:
            lines.append(Line(op, "metadata", "end of listing", counts.empty,
                              Price(0.0, 0.0, 0.0, "counted in the listing's first getdents64", 0.0)))
    return lines


def _wait_ns(price: Price) -> float:
    """The part of a price that is a wait for the device: its latency less its CPU time (0
    where the table did not measure the CPU time)."""
    return max(price.ns - price.cpu_ns, 0.0) if price.cpu_ns is not None else 0.0


def readahead_overlap(lines: list[Line]) -> list[Line]:
    """`lines` with the device wait of interleaved sequential cold reads (overlap_share)
    taken off as far as the workload's other calls outside the reads last.

    fsbench prices a sequential cold read from a stream read back to back, each read waiting
    for the device.  A reader that makes other calls between its reads (tar writes each
    member of the archive it reads) gives readahead that time to bring the next reads in.
    The wait so hidden is at most the time of the calls outside the read group (writes,
    metadata, syncs); a read's CPU time is never hidden."""
    between = sum(line.total_ns for line in lines if line.group != "read")
    return _waits_hidden(lines, lambda line: line.overlap_share, between, "the calls between its reads")


def stream_waits_hidden(fs: FsTime, window_ns: float, behind: str) -> FsTime:
    """`fs` with the device wait of its streams' back-to-back cold reads (stream_share) taken
    off as far as `window_ns`, time outside the filesystem that lies between those reads
    (`behind` says what it is), lasts: readahead brings a stream's next reads in while the
    reader is elsewhere, as it does behind other calls (readahead_overlap).  A read's CPU time
    is never hidden."""
    return FsTime(fs.candidate, tuple(_waits_hidden(list(fs.lines), lambda line: line.stream_share, window_ns,
                                                    behind)))


def stream_calls(fs: FsTime) -> tuple[float, float]:
    """The stream reads `fs` prices (stream_share of its lines): how many calls, and their
    CPU time in ns."""
    return (sum(line.count * line.stream_share for line in fs.lines),
            sum(line.cpu_ns * line.stream_share for line in fs.lines))


def _waits_hidden(lines: list[Line], share: Callable[[Line], float], budget_ns: float, behind: str) -> list[Line]:
    """`lines` with the device wait of each line's `share` of its calls taken off, as far as
    `budget_ns` goes, in proportion to each line's wait; said in each line changed."""
    waits = sum(line.count * share(line) * _wait_ns(line.price) for line in lines)
    if waits <= 0 or budget_ns <= 0:
        return lines
    hidden = min(budget_ns / waits, 1.0)
    out = []
    for line in lines:
        each = hidden * share(line) * _wait_ns(line.price)
        if each > 0:
            line = replace(line, detail=f"{line.detail}, {100 * share(line) * hidden:.0f}% of its wait hidden behind "
                                        f"{behind}",
                           price=line.price.minus(Price(each, each, each, "readahead overlap", 0.0),
                                                  f"{line.price.source} less the wait readahead overlaps"))
        out.append(line)
    return out


@dataclass(frozen=True)
class CpuScales:
    """Per group of operations, how many times fsbench's CPU time per call a workload's calls
    took where it was traced (`factors`, outside.cpu_scales), and fsbench's CPU prices of
    those calls there (`traced_ns`).

    A factor below 1 shrinks every candidate's CPU prices of the group in proportion (a
    workload's reads and writes move fewer bytes a call than fsbench's cases, and their CPU
    goes with the bytes).  One above 1 adds CPU that fsbench's cases do not spend (a sync
    that writes back more than fsbench's did): in proportion on a candidate whose prices of
    the group are lower, but never more than it added where it was traced, because a
    candidate whose calls cost more CPU for reasons fsbench does measure (btrfs builds its log
    tree in the caller) spends the excess once, not that many times over.  For the same
    reason a sync's factor below 1 takes off a candidate whose syncs cost more CPU no more
    than it took off where it was traced: a workload whose syncs find little to write back
    still pays for the candidate's own way of syncing.  Without `traced_ns` every factor is
    taken in proportion."""

    factors: dict[str, float] = field(default_factory=dict)
    traced_ns: dict[str, float] = field(default_factory=dict)

    def on(self, cpu_ns: dict[str, float]) -> dict[str, float]:
        """The factor each group's CPU prices are taken by on a candidate whose unscaled CPU
        prices of the workload's calls are `cpu_ns` by group."""
        out = {}
        for group, factor in self.factors.items():
            own, traced = cpu_ns.get(group, 0.0), self.traced_ns.get(group)
            if (factor > 1.0 or group == "sync") and traced is not None and own > traced:
                factor = 1.0 + (factor - 1.0) * traced / own
            out[group] = factor
        return out


def price_workload(profile: Profile | dict[str, Any], pricer: Pricer, *, cache_bytes: int, start: str = "cold",
                   cpu_scales: CpuScales | None = None) -> FsTime:
    """The modelled filesystem time of a profile's workload on the pricer's candidate.
    `cpu_scales`: how this workload's calls' CPU time where it was traced moves fsbench's
    CPU prices (CpuScales; outside.cpu_scales)."""
    profile = Profile.of(profile)
    hits = hit_fraction(profile.reuse, cache_bytes, start)
    first_hits = first_read_hit_fraction(profile.reuse, cache_bytes, start)
    copy_hits = copy_hit_fraction(profile.reuse, cache_bytes, start)
    rereads = reread_share(profile.reuse, cache_bytes, start)
    scales = (tuple(sorted(cpu_scales.factors.items())), tuple(sorted(cpu_scales.traced_ns.items()))) \
        if cpu_scales and cpu_scales.factors else None
    # The cache size enters only through the shares it holds: sizes that reach the same
    # point of the reuse curve are one price, worked out once (Pricer.workload).
    return pricer.workload(profile, (hits, first_hits, copy_hits, rereads, start, scales),
                           lambda: _priced(profile, pricer, hits, first_hits, copy_hits, rereads, start, cpu_scales))


def _priced(profile: Profile, pricer: Pricer, hits: float, first_hits: float | None, copy_hits: float,
            rereads: float | None, start: str, cpu_scales: CpuScales | None) -> FsTime:
    """price_workload, for the shares of block reads, of first reads, of copies' sources and
    of re-reads the cache holds."""
    lines = (_data_lines(profile, pricer, hits, first_hits, copy_hits, rereads)
             + _metadata_lines(profile, pricer, start))
    if cpu_scales and cpu_scales.factors:
        factors = cpu_scales.on(FsTime(pricer.table.candidate, tuple(lines)).by_group(cpu=True))
        lines = [replace(line, price=line.price.cpu_scaled(factors.get(line.group, 1.0))) for line in lines]
    return FsTime(pricer.table.candidate, tuple(line for line in readahead_overlap(lines) if line.count > 0))
