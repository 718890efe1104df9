"""Whether readahead rides a forward stream on a candidate, told by the traced run.

What a read of a forward stream (sorted lookups: past the last read's end, not at it)
costs is whether readahead rides the stream, and that is the stream's, not each read's:
measured on the validation images (2026-11-24), SQLite's 4013 lookups of a 200 MiB table
went to ext4's and xfs's device as 1066 readahead windows of ~150 KiB, and to btrfs's as
3876 reads of ~6 KiB; fsbench's 4 KiB streams rode readahead on ext4 16 KiB apart and not
64 KiB apart, on btrfs 4 KiB apart and not 16 KiB apart; and at one density the outcome
is a lottery (4000 reads sampled from the same file: 1644 to 3031 device reads on ext4
by seed).  So neither the gaps around a read (Pricer.forward_read pools fsbench's reads
by gap, which prices every stream as if readahead rode it as it rides fsbench's dense
streams) nor the stream's density alone (Pricer.forward_at_mean_gap, fsbench's streams
of that density as the lottery fell for them) tells what the stream costs.

The traced run does, on the filesystem it was traced on: its reads' mean traced duration.
Each candidate has three prices of the stream's reads: *alone*, a cold random read (no
readahead); *ridden*, the pooled price by gap; *at its density*, the mean-gap price.
Where alone is dearer than ridden, a riding share places a cost between them:
share = (alone - cost) / (alone - ridden).  fsbench's share at the stream's density says
how readily the candidate rides streams that sparse; the traced duration, the share the
stream rode on the traced filesystem.  A candidate rides the stream as the traced
filesystem did, in proportion to how readily each rides such streams in fsbench:

    expected = seen * (share here at the density / share there at the density), in [0, 1].

On btrfs, whose fsbench streams at SQLite's density never ride (share 0), the lookups are
priced as random reads whatever ext4 did; on xfs, which rides such streams as ext4 does,
as ext4's trace showed.  Without a traced duration, or a traced filesystem among the
candidates, the stream is priced ridden, as before this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsbm.predictor.pricing import Price, Pricer


@dataclass(frozen=True)
class Stream:
    """One forward class: its reads' mean size and gap, and how many followed a gap of each
    power of two."""

    size: int
    gap: float
    gaps_by_power: dict[str, int] | None


@dataclass(frozen=True)
class Prices:
    """A stream's three prices on one candidate, and fsbench's riding share at its density."""

    alone: Price
    ridden: Price
    at_density: Price

    def share(self, ns: float) -> float:
        """Where a cost of `ns` lies from alone (0) to ridden (1), clamped."""
        span = self.alone.ns - self.ridden.ns
        return min(max((self.alone.ns - ns) / span, 0.0), 1.0)

    @property
    def rides(self) -> bool:
        """Whether readahead can make the stream cheaper at all here (not on tmpfs)."""
        return self.alone.ns > self.ridden.ns

    @property
    def density_share(self) -> float:
        return self.share(self.at_density.ns)


def prices(pricer: Pricer, stream: Stream) -> Prices:
    return Prices(pricer.data("read", "random", "cold", stream.size),
                  pricer.forward_read(stream.size, stream.gap, stream.gaps_by_power),
                  pricer.forward_at_mean_gap(stream.size, stream.gap))


def expected_share(seen: float, here: float, there: float) -> float:
    """The share a candidate rides a stream that rode `seen` where it was traced, where
    fsbench's streams of its density ride `here` on the candidate and `there` on the traced
    filesystem.  Equal shares (the traced filesystem itself) carry `seen` as it is; where
    fsbench never rode such streams on the traced filesystem, the lottery the trace won
    there is carried to every candidate that rides them at all."""
    if here == there:
        return seen
    if there <= 0:
        return seen if here > 0 else 0.0
    return min(seen * here / there, 1.0)


@dataclass(frozen=True)
class Traced:
    """The filesystem a workload was traced on (its pricer), where its forward streams' traced
    durations were measured."""

    pricer: Pricer

    def miss_price(self, pricer: Pricer, stream: Stream, seen_ns: float) -> Price:
        """A read of `stream` that misses the cache, on `pricer`'s candidate, where such
        reads took `seen_ns` on average on the traced filesystem."""
        here = prices(pricer, stream)
        there = here if pricer is self.pricer else prices(self.pricer, stream)
        if not here.rides or not there.rides:
            return here.ridden
        seen = there.share(seen_ns)
        share = expected_share(seen, here.density_share, there.density_share)
        return here.alone.toward(here.ridden, share, (
            f"{here.ridden.source}; riding readahead {share:.0%} of the way from a cold random read "
            f"(traced on {self.pricer.table.candidate}: {seen:.0%}; fsbench's streams this sparse: "
            f"{here.density_share:.0%} here, {there.density_share:.0%} there)"))
