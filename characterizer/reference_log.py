"""The block references of a trace, in parts: what the reuse curve and the sizes of unlinked
files are made from, without gathering every reference in one place.

A part (the events of some actors) keeps its reads, writes, mapped regions and unlinks as
a ReferenceLog, each row with its place in the whole trace (clock, trace, seq).  Where the
parts are many (a Dask run), the log stays where it was made and the curve is built in two
rounds, each of which sends only what is bounded by the budget, the files or the unlinks:

1. every part says how many block references it makes, which files it names and where its
   unlinks fall (LogFacts); these add up to a LogPlan: the sampling rate for the whole
   trace, one id per file name (the names' rank, the same in every part and in a run on
   one machine, so a block is hashed alike everywhere), and every unlink in order;
2. every part samples its references at that rate, finds each file's first read, and the
   most each file held between two of its unlinks (LogSample); samples join, first reads
   merge by the earlier, holdings by the larger (LogSample.concat).

The one-machine path is the same two rounds over one log, so both give the same profile.
What a profile takes from the joined samples, the curve and the unlinked files' sizes
(ReuseOutcome), is made where they are joined: on a cluster, workers' tasks (each seed's curve
one of its own, joined_seed_curve, so that two workers make them at once), so the client
receives a few hundred numbers rather than the sample.

What a file held when it was unlinked is the largest end of an access to it since its
previous unlink, over every actor (rm removes what cp wrote): the unlinks cut each file's
accesses into lives, and an access's life is the number of the file's unlinks before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fsbm.characterizer import reuse
from fsbm.characterizer.arrays import present
from fsbm.characterizer.reuse import (FirstReads, References, Sample, block_totals, curve_of, reordering,
                                      sampling_rate, trace_order)


@dataclass
class ReferenceLog:
    """Block references of some actors, and the unlinks among them (is_unlink, no bytes),
    each with its place in the trace (clock, trace, seq); `file` indexes `names`."""

    clock: np.ndarray
    trace: np.ndarray
    seq: np.ndarray
    names: pa.Array
    file: np.ndarray
    offset: np.ndarray
    length: np.ndarray
    is_read: np.ndarray
    is_unlink: np.ndarray
    code: np.ndarray  # int16: each access's data class (classes.class_of_code), NO_CODE for an unlink

    ROW_FIELDS = ("clock", "trace", "seq", "offset", "length", "is_read", "is_unlink", "code")

    def merge(self, other: "ReferenceLog") -> "ReferenceLog":
        encoded = pc.dictionary_encode(pa.concat_arrays([self.names, other.names]))
        remap = encoded.indices.to_numpy().astype(np.int64)
        file = np.concatenate((remap[:len(self.names)][self.file], remap[len(self.names):][other.file]))
        rows = {f: np.concatenate((getattr(self, f), getattr(other, f))) for f in self.ROW_FIELDS}
        return ReferenceLog(names=encoded.dictionary, file=file, **rows)

    def _accesses(self, in_order: bool = False) -> np.ndarray | slice:
        """The rows that are accesses (not unlinks), in the log's order or, `in_order`, in the
        trace's: a slice where they come before every unlink and need no reordering (a log
        made in one piece), so that the columns are taken as views, not copied."""
        accesses = len(self.is_unlink) - int(self.is_unlink.sum())
        at: np.ndarray | slice = (slice(0, accesses) if not self.is_unlink[:accesses].any()
                                  else np.flatnonzero(~self.is_unlink))
        if in_order:
            ranked = reordering((self.clock[at], self.trace[at], self.seq[at]))
            if ranked is not None:
                at = ranked if isinstance(at, slice) else at[ranked]  # the slice starts at row 0
        return at

    def in_order(self) -> References:
        """The accesses in trace order, with this log's file ids (bench/reuse.py's input)."""
        at = self._accesses(in_order=True)
        return References(self.file[at], self.offset[at], self.length[at], self.is_read[at], self.code[at])

    def facts(self) -> "LogFacts":
        """What the plan needs of this part (round 1)."""
        at = self._accesses()
        total, reads = block_totals(References(self.file[at], self.offset[at], self.length[at], self.is_read[at]))
        unlinks = np.flatnonzero(self.is_unlink)
        used = np.flatnonzero(present(self.file, len(self.names)))
        return LogFacts(total, reads, self.names.take(pa.array(used)),
                        self.names.take(pa.array(self.file[unlinks])), self.clock[unlinks], self.trace[unlinks],
                        self.seq[unlinks])

    def sample(self, plan: "LogPlan", in_order: bool = False) -> "LogSample":
        """This part's sample, first reads and holdings under `plan` (round 2).  `in_order`:
        this log is the whole trace, so its references are put in order here and the sample
        carries no places (less to hold); such a sample merges with no other."""
        ids = pc.fill_null(pc.index_in(self.names, value_set=plan.names), -1).to_numpy()
        at = self._accesses(in_order)
        order = (self.clock[at], self.trace[at], self.seq[at])
        refs = References(ids[self.file[at]].astype(np.int64), self.offset[at], self.length[at], self.is_read[at],
                          self.code[at])
        places = None if in_order else order
        return LogSample(Sample.of(refs, plan.rate, places), FirstReads.of(refs, places),
                         *plan.lives(refs.file, *order, refs.offset + refs.length))


@dataclass
class LogFacts:
    """A part's count of block references and reads, the file names it references, and its
    unlinks (file name and place)."""

    total: int
    reads: int
    names: pa.Array
    unlink_names: pa.Array
    unlink_clock: np.ndarray
    unlink_trace: np.ndarray
    unlink_seq: np.ndarray

    def merge(self, other: "LogFacts") -> "LogFacts":
        return LogFacts(self.total + other.total, self.reads + other.reads,
                        pc.unique(pa.concat_arrays([self.names, other.names])),
                        pa.concat_arrays([self.unlink_names, other.unlink_names]),
                        np.concatenate((self.unlink_clock, other.unlink_clock)),
                        np.concatenate((self.unlink_trace, other.unlink_trace)),
                        np.concatenate((self.unlink_seq, other.unlink_seq)))


@dataclass
class LogPlan:
    """What every part samples by: the rate, the file names by id (their rank), and every
    unlink of a referenced file, ordered by file and then by place in the trace."""

    rate: float
    names: pa.Array
    unlink_file: np.ndarray
    unlink_clock: np.ndarray
    unlink_trace: np.ndarray
    unlink_seq: np.ndarray

    @classmethod
    def of(cls, facts: LogFacts) -> "LogPlan":
        """The plan for a trace of these facts: its rate as reuse.py's limits say now."""
        names = pc.unique(pa.concat_arrays([facts.names, facts.unlink_names]))
        names = names.take(pc.sort_indices(names))
        file = pc.index_in(facts.unlink_names, value_set=names).to_numpy(zero_copy_only=False).astype(np.int64)
        ranked = trace_order((file, facts.unlink_clock, facts.unlink_trace, facts.unlink_seq))
        return cls(sampling_rate(facts.total, exact_limit=reuse.EXACT_LIMIT, budget=reuse.SAMPLE_BUDGET), names,
                   file[ranked],
                   facts.unlink_clock[ranked], facts.unlink_trace[ranked], facts.unlink_seq[ranked])

    def lives(self, file: np.ndarray, clock: np.ndarray, trace: np.ndarray, seq: np.ndarray,
              end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The most bytes each (file, life) held by these accesses: (file, life, end) with
        one row per pair, where a life is the number of the file's unlinks before it."""
        n = len(self.unlink_file)
        if n == 0 or len(file) == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
        rows_file = np.concatenate((self.unlink_file, file))
        is_unlink = np.concatenate((np.ones(n, bool), np.zeros(len(file), bool)))
        ranked = trace_order((rows_file, np.concatenate((self.unlink_clock, clock)),
                              np.concatenate((self.unlink_trace, trace)), np.concatenate((self.unlink_seq, seq))))
        f, unlinking = rows_file[ranked], is_unlink[ranked]
        first = np.concatenate(([True], f[1:] != f[:-1]))
        before = np.cumsum(unlinking) - unlinking        # unlinks before each row, over all files
        life = before - before[first][np.cumsum(first) - 1]  # ... of its own file
        accesses = ~unlinking
        return _largest(f[accesses], life[accesses], np.concatenate((np.zeros(n, np.int64), end))[ranked][accesses])

    def unlinked_sizes(self, held: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        """For each unlink, the bytes its file held when it was unlinked: the most its life
        held (0 where no access showed any)."""
        n = len(self.unlink_file)
        if n == 0:
            return np.zeros(0, np.int64)
        first = np.concatenate(([True], self.unlink_file[1:] != self.unlink_file[:-1]))
        index = np.arange(n)
        life = index - index[first][np.cumsum(first) - 1]
        file, lives, end = held
        if not len(file):
            return np.zeros(n, np.int64)
        width = int(max(life.max(), lives.max())) + 1
        have = file * width + lives  # sorted: one row per (file, life)
        wanted = self.unlink_file * width + life
        at = np.minimum(np.searchsorted(have, wanted), len(have) - 1)
        return np.where(have[at] == wanted, end[at], 0)


def _largest(file: np.ndarray, life: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per (file, life), sorted, with the largest end."""
    if len(file) == 0:
        return file.astype(np.int64), life.astype(np.int64), end.astype(np.int64)
    width = int(life.max()) + 1
    pair, index = np.unique(file * width + life, return_inverse=True)
    most = np.zeros(len(pair), np.int64)
    np.maximum.at(most, index, end)
    return pair // width, pair % width, most


@dataclass
class LogSample:
    """A part's sampled references, its files' first reads, and the most each (file, life)
    held (file, life, end; one row per pair, sorted)."""

    sample: Sample
    first: FirstReads
    file: np.ndarray
    life: np.ndarray
    end: np.ndarray

    @property
    def held(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The most each (file, life) held: (file, life, end)."""
        return self.file, self.life, self.end

    @classmethod
    def concat(cls, parts: list["LogSample"]) -> "LogSample":
        """Several parts' samples as one: samples joined (Sample.concat), first reads the
        earlier, holdings the larger.  The parts are emptied."""
        first = reduce(FirstReads.merge, [part.first for part in parts])
        held = _largest(*(np.concatenate([getattr(part, name) for part in parts]) for name in ("file", "life", "end")))
        return cls(Sample.concat([part.sample for part in parts]), first, *held)


@dataclass
class ReferenceSummary:
    """All a profile takes from a trace's references: round 1's facts and plan, and round 2's
    merged sample."""

    facts: LogFacts
    plan: LogPlan
    sample: LogSample

    @classmethod
    def of(cls, log: ReferenceLog) -> "ReferenceSummary":
        """Both rounds over one log that holds the whole trace."""
        facts = log.facts()
        plan = LogPlan.of(facts)
        return cls(facts, plan, log.sample(plan, in_order=True))

    def reuse_curve(self) -> dict[str, object]:
        return curve_of(self.sample.sample if self.facts.total else None, self.sample.first, self.facts.total,
                        self.facts.reads)

    def unlinked_sizes(self) -> np.ndarray:
        return self.plan.unlinked_sizes((self.sample.file, self.sample.life, self.sample.end))

    def outcome(self) -> "ReuseOutcome":
        return ReuseOutcome(self.reuse_curve(), self.unlinked_sizes())


@dataclass(frozen=True)
class ReuseOutcome:
    """All a profile takes from a trace's references: the reuse curve's document, and the
    most each unlinked file held (one per unlink, in the plan's order)."""

    curve: dict[str, object]
    unlinked: np.ndarray


def reuse_outcome(facts: LogFacts, plan: LogPlan, *samples: LogSample, step: Callable = lambda f: f) -> Any:
    """Round 2's samples of every part joined, and what the profile takes from them
    (ReuseOutcome), in steps: the first reads, each seed's curve, the unlinked files' sizes,
    then the outcome.  `step` wraps each: as they are, one after another; dask.delayed, each a
    task of its own on a cluster (scale.py), where `samples` are delayed too and the result is
    the delayed outcome."""
    first = step(joined_first_reads)(*(part.first for part in samples))
    curves = [step(joined_seed_curve)(facts, first, k, *(part.sample.seed(k) for part in samples))
              for k in range(curve_seeds(facts, plan))]
    unlinked = step(joined_unlinked)(plan, *(part.held for part in samples))
    return step(outcome_of)(facts, plan, first, unlinked, *curves)


def curve_seeds(facts: LogFacts, plan: LogPlan) -> int:
    """How many seeds' curves the trace's reuse curve is made from (reuse.seeds_at); none for
    a trace without block references."""
    return reuse.seeds_at(plan.rate) if facts.total else 0


def joined_first_reads(*parts: FirstReads) -> FirstReads:
    """Every part's first reads as one: each file's earlier."""
    return reduce(FirstReads.merge, parts)


def joined_seed_curve(facts: LogFacts, first: FirstReads, k: int, *parts: Sample) -> reuse.SeedCurve:
    """Seed k's curve (reuse.seed_curve) from every part's sample of that seed (Sample.seed),
    joined; the parts are emptied.  Each seed is a task of its own on a cluster: the largest
    step left after the buckets, which one worker would otherwise make alone."""
    return reuse.seed_curve(Sample.concat(list(parts)), first, facts.reads, classes=k == 0)


def joined_unlinked(plan: LogPlan, *held: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """For each unlink, the bytes its file held (LogPlan.unlinked_sizes) from every part's
    holdings (LogSample.held), the larger of two."""
    return plan.unlinked_sizes(_largest(*(np.concatenate(column) for column in zip(*held))))


def outcome_of(facts: LogFacts, plan: LogPlan, first: FirstReads, unlinked: np.ndarray,
               *curves: reuse.SeedCurve) -> ReuseOutcome:
    """The profile's part of the joined samples: the curve's document from the seeds' curves
    (the reported one, then the one that checks it), and the unlinked files' sizes."""
    curve = reuse.curve_document(curves[0] if curves else None, curves[1] if len(curves) > 1 else None, first,
                                 facts.total)
    return ReuseOutcome(curve, unlinked)
