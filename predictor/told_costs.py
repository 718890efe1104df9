"""What a trace's own call durations say each operation cost where it was traced, and where
the relative form puts the part of a measured runtime the model left unexplained.

strace -T times a call from its entry to its exit as the tracer saw them: what the filesystem
took, plus what tracing added.  A call that does next to nothing takes its process's median
call under tracing, and tracing's stalls lean above that median by the trace's bare calls'
lean (tracing.call_lean).  Per operation, the durations less that much a call, summed, are
what the trace tells the operation took (`ToldDurations`).

The relative form's time outside is a measured runtime less the traced candidate's
filesystem time.  Where that leaves more outside than the trace itself told, the rest is
filesystem time the model priced low (estimator.RuntimeEstimator).  Which operations it
belongs to is what the durations tell: an operation whose calls took longer than its price
on the traced candidate (`TracedExcess`).  That part is carried to each candidate by the
candidate's own price of the same operation over the traced one's (Mesnier's relative
fitness, per class): ext4's copies priced low say nothing of xfs's creates, and the clones
xfs makes of the same files take their part of the excess at xfs's price of a copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fsbm.documents import Profile, Timeline
from fsbm.predictor.estimator import Z90
from fsbm.predictor.model import FsTime
from fsbm.predictor.tracing import TracingCalibration, call_lean


@dataclass(frozen=True)
class ToldDurations:
    """What a plain trace's call durations (strace -T) tell each operation took on the
    filesystem traced: per operation, its timed calls and their durations less each call's
    share of tracing, `per_call_ns` (its process's median call and the trace's lean, module
    docstring), summed, never below 0."""

    ops: dict[str, tuple[int, float]] = field(default_factory=dict)
    per_call_ns: float = 0.0

    @classmethod
    def of(cls, profile: Profile, tracing: TracingCalibration | None) -> "ToldDurations":
        """The durations of `profile`'s trace; none for a trace without them, and for an NFS
        capture, whose reply times hold the network and the server's queue as well."""
        timeline = Timeline.of(profile.timeline)
        if profile.protocol == "nfs" or not timeline.timed or not timeline.timed_gaps:
            return cls()
        per_call = (timeline.timed_gaps_call_median_ns / timeline.timed_gaps
                    + call_lean(timeline, tracing.call_lean_ns if tracing else 0.0))
        return cls({op: (calls, max(ns - calls * per_call, 0.0))
                    for op, (calls, ns) in profile.classes.observed_ns().items()}, per_call)

    def beyond_chance_ns(self, op: str, priced_ns: float) -> float:
        """What the durations tell `op` took beyond `priced_ns`, less what tracing's scatter
        alone could make of its calls: a call's tracing cost strays by about its own size, so
        n calls' sum by Z90 x per_call_ns x sqrt(n) (never below 0).  A class of a few calls
        that met one of tracing's stalls tells nothing of its price."""
        calls, told = self.ops.get(op, (0, 0.0))
        return max(told - priced_ns - Z90 * self.per_call_ns * math.sqrt(calls), 0.0)


@dataclass(frozen=True)
class TracedExcess:
    """What the durations told each operation took beyond its price on the traced candidate
    (`ns`, per operation, never below 0), and how that carries to each candidate."""

    ns: dict[str, float]
    traced: FsTime

    @classmethod
    def of(cls, told: ToldDurations, traced: FsTime) -> "TracedExcess":
        """The operations the traced candidate prices, each with what the durations told
        beyond that price (ToldDurations.beyond_chance_ns).  An operation priced at nothing
        there has no ratio to carry it by, and is left to the uniform rest (estimator)."""
        return cls({op: told.beyond_chance_ns(op, ns) for op, ns in traced.by_op().items() if ns > 0}, traced)

    @property
    def total_ns(self) -> float:
        """The excess of every operation together: the most of the rest the operations take."""
        return sum(self.ns.values())

    def carry(self, candidate: FsTime) -> float:
        """Per ns of the excess on the traced candidate, ns on `candidate`: each operation's
        share of the excess by the candidate's price of it over the traced one's (1 on the
        traced candidate itself; 0 where nothing was told beyond the prices)."""
        total = self.total_ns
        if total <= 0:
            return 0.0
        theirs, ours = candidate.by_op(), self.traced.by_op()
        return sum(excess / total * theirs.get(op, 0.0) / ours[op] for op, excess in self.ns.items())
