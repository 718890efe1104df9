"""A traced job's runtime without tracing, from the trace itself.

strace stops the traced process twice per system call (ptrace), and with `-y` also reads
the link of every descriptor a call names.  Here that adds 15-100 us to every call, so a
traced job's wall span is its runtime several times over (2.5-40x in the suite), and no one
cost per call can be subtracted from it: tracing here switches between two speeds, bare
gaps between back-to-back calls of about 18 us or about 52 us, within one trace too.

What changes less between the speeds is how a gap compares with a call: under strace -T a
call's duration holds one of tracing's stops and a gap the other, and a gap takes about a
constant longer than the calls of its process just then, in both speeds (9-18 us for a loop
of bare calls here, depending on the hour).  So the strace parser (traces/native/timeline.c)
sums, per process, each gap after a timed call less the median of the process's last 32 call
durations, and counts those excesses by size.  Most gaps of a traced job hold little work, so
the median excess is tracing's constant for that trace, at the speed tracing ran at while it
was made and with the processes it ran at once (Timeline.gap_over_call_median_ns); the rule
takes it off every gap, and what is left is the process's own work.  The trace measures its
own constant because the hour matters: a bare loop traced an hour apart here took 10 us and
18 us, and a calibration run at another time than the trace cannot say which the trace saw.
Profiles from parsers that kept no counts take a share of the calibration's bare loop instead
(GAP_SHARE_OF_BARE_LOOP; GAP_OVER_CALL_NS where nothing was calibrated).

Not every gap of a traced job is all work and tracing's constant: a compiler's work runs
slower under tracing (each stop switches to the tracer and back, and a large program's caches
are cold after it), so the rule tells a compile about a third long.  Nothing in the trace
shows that slowdown yet (docs/model-evidence.md, "The trace's own yardstick").

Gaps with no timed call before them (each process's first, and every gap of a log without
-T) are measured against the median of the process's last 32 gaps (at most a bare gap's
slowest speed; in a log without -T, twice a call's start to the next's in a loop that is
almost all tracing, the median of three such loops the calibration times), each gap's signed
distance from it summed.  Such a gap leans above its median as a timed one does, and a log
without -T shows no call's duration to tell by how much; so the parser measures the gaps from
one bare call to the next (fstat then lseek: a call, its two stops and next to no work), each
against the median of the trace's last gaps between the same two kinds of call, and their
mean distance from it, the untimed trace's own lean, is taken off each of its gaps
(Timeline.untimed_lean_ns).  Against the same pair's, because a stall of tracing strikes
whichever pair it falls on; and the trace's, any process's, because a parallel job's
processes each make a handful of such gaps, too few for a median.  A pair whose median is
longer than a bare gap at its slowest holds the program's work (xz compresses between two
sigprocmasks, some blocks long, some short), and its gaps scatter as that work does, so they
tell no lean.  A call the log split in two (another process's line came before it returned)
shows its end, and the gap after it is measured against the process's last gaps from a
call's end, as in a log with -T.  The time a job spends outside the filesystem is then the gaps'
work and its calls that are not on files (exec, mmap, pipes), never below 0, over the number
of its processes that worked at once (`concurrency`: their lifetimes less the time they were
blocked waiting for one another, over the span).
Its file calls are what the cost model prices, on every candidate.  So is what it reads
through a file it mapped (characterizer/mapped.py), which no call shows: those page faults
fall in the gaps after the mmap, so the parser counts the gaps right after a file was mapped
apart too (Timeline.mapped_gaps_work_ns), and the prediction takes the modelled read of what
was mapped where the job was traced off the time outside, up to those gaps' work
(predict._less_mapped_reads), so that the read is counted once.

A call not on a file counts for its signed distance from its process's median call: its
kernel's work (an exec, a large mmap) stands above that median.  What tracing adds to a bare
call does not scatter evenly about the median, though: it leans above it, so each such call
would add its lean as work, and a loop of bare calls, whose untraced work is next to nothing,
would be told a few us of work a call.  How far it leans depends on the trace: a few us where
tracing ran smoothly, a hundred where the tracer was often kept waiting (the host busy, the
tracer and its tracee on different cores).  So the parser sums, over the calls that do little
in the kernel and never wait (close, fstat, getpid...), each one's signed distance from its
process's median call, and their mean is the trace's own lean (Timeline.bare_call_lean_ns).
The rule takes it off each call not on a file, and off each gap too: a gap holds one of
tracing's stops as a call does, and leans as far above the trace's median gap.  A trace with
too few bare calls to tell takes the calibration's bare loop's lean off its calls and nothing
off its gaps (docs/model-evidence.md, "A bare call's lean" and "The trace's own lean").

Processes working at once make each gap longer still: one tracer serves them all, and here it
competes with them for two cores.  A trace's own median holds that; for a profile without one,
`tracing_runs.calibrate` measures by how much (`contention_ns`: the constant of two compressions at once
against one's, per process more at once), and the rule takes that off each gap too.  What no
median holds is the work itself slowed while the processes and the tracer share the cores:
the trace cannot say how much, so the band reaches down by the most it can be
(shared_cores_stretch) and the estimate stays.

A log with -T is read a second time as strace without -T would have written it: the parser
feeds the same calls, their durations left out, to a second timeline (Timeline.untimed), and
the prediction tells the time outside from each reading and takes their mean (both_readings),
as the two rules err in ways that do not follow each other.

`tracing_runs.calibrate` checks the rule on this machine: small programs that spend their time outside
file calls, in different mixes (work between calls or little, one process or several, in
turn or at once), run untraced and under `strace -f -tt -T -y`, warm, where the rule's
estimate of their runtime is set against their measured runtime.  Those errors are the band a
trace's time outside is given before any validation.  A fitted runtime model gives a timed
trace's time outside the band of the per-gap constant between the programs it was fitted on
instead (estimator.RuntimeEstimator, `gap_shift_`): as wide as the trace's gaps make it, so a
trace of 80,000 calls has a wide one and a compiler's a narrow one; and a log without -T the
band of the untimed form's errors on the programs it left out, since the calibration's small
loops, almost all tracing, are told far worse without -T than whole programs are.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fsbm.documents import GAP_OVER_CALL_NS, PARSER_UNTIMED_CAP_NS, OutsideReading, Timeline
from fsbm.host import usable_cores
from fsbm.predictor.cold_start import ColdStart
from fsbm.predictor.estimator import UNTIMED_EVIDENCE
from fsbm.predictor.outside import Outside

STRACE_FLAGS = ("-f", "-tt", "-T", "-y", "-s", "64")
# The relative error of a time outside told from a trace where nothing measured it: +-50%.
UNCALIBRATED_BAND = (-0.5, 0.5)
# What a program's gap takes off where its profile has no median of its own (older parsers), as
# a share of what a loop of bare calls' gaps take over their calls on the same machine and day
# (tracing_runs.measure_bare_loop): fitted on three plain validations of
# the development set whose bare loops measured 10.2, 12.6 and 17.6 us (docs/model-evidence.md,
# "The constant as a share of the day's bare loop, the contention, and the band").
GAP_SHARE_OF_BARE_LOOP = 0.6
# The most a trace's own median gap over its calls counts for, as a share of what a loop of bare
# calls' gaps take over their calls (a mean, which the loop's scatter puts above its median):
# the development programs' own medians stood at 0.7-1.2x the day's bare loop, and a calibration
# program whose every gap holds 20 us of work (python-work) at 3.3x.
OWN_MEDIAN_CAP_SHARE = 2.0
# The most a gap's median counts for in a log without -T, as a share of a loop's start-to-start
# measured here (TracingCalibration.start_to_start_ns): tracing's cost of a bare call and gap at
# its slowest, not work (fitted on the development set's plain validation, docs/model-evidence.md).
UNTIMED_CAP_SHARE = 2.0
# The version of the rule a calibration measured for.  9: a log without -T's lean leaves out the
# pairs whose median holds work and pools each pair's gaps over the trace's processes, and its
# gaps after a split call are measured against the gaps from a call's end; 8: a log without -T's
# lean measures each gap between bare calls against its own pair's median, so the untimed band
# comes from calibration traces that count it so; 7: a log without -T takes its own lean off
# each gap (Timeline.untimed_lean_ns); 6: each calibration trace is judged without -T too
# (untimed_error_band); 5 took a trace's own bare calls' lean off its gaps and its calls not on
# files; 4 the calibration's bare loop's lean (call_lean_ns) off each call not on a file; 3
# measured the gaps after a timed call against the process's calls, 2 against their own median,
# and 1 whole runtimes: none is read.
SCHEMA_VERSION = 9
# Calibration programs whose traces are almost all tracing's cost (getppid calls with a
# microsecond of Python between them; gzip's small reads and writes), timed beside the bare
# loop for start_to_start_ns, which takes the slowest of the three: tracing here runs now and then
# ten times faster for minutes (13-36 us a call where 135-230 us is usual), and any one loop, or
# two, may be timed in such a while (docs/model-evidence.md).
START_TO_START_PROGRAMS = ("python-calls", "compress")
# A trace whose own bare calls lean at least this far above their median was made while tracing
# ran unevenly (the host busy), and its prediction says so (stall_warning): in the development
# set's ten plain runs, six traces leaned 21-164 us, each in an hour whose calibration or whose
# other traces stalled too (four of them among their run's three largest misses); every other
# trace 0-18 us.
STALLED_LEAN_NS = 20_000
# A calibration whose loops of almost all tracing took this many times as long a call as one
# another, or more, was made partly in one of tracing's fast whiles (uneven_warning): calibrations
# at one speed lie within 1.4x, those made partly in a fast while 7.5x and more apart
# (docs/model-evidence.md, "A calibration made at two speeds is said").
UNEVEN_LOOPS = 3.0


@dataclass(frozen=True)
class CalibrationRun:
    """One calibration program: its untraced runtimes and its traced timeline."""

    name: str
    untraced_ns: list[int]
    timeline: Timeline
    call_lean_ns: float = 0.0  # what the rule takes off each call not on a file (BareLoop)
    # The same trace with its call durations taken out, as strace without -T writes it; None
    # in calibrations made before it was kept.
    untimed: Timeline | None = None

    @property
    def runtime_ns(self) -> float:
        return float(statistics.median(self.untraced_ns))

    @property
    def lean_ns(self) -> float:
        """What the rule takes off each of this trace's calls not on files (call_lean)."""
        return call_lean(self.timeline, self.call_lean_ns)

    def error_at(self, gap_over_call_ns: float) -> float:
        """The rule's time outside the file calls, what a prediction takes from a trace, a gap
        taking `gap_over_call_ns` off, against the whole runtime: estimate / runtime - 1.  The
        programs' file calls are a few warm ones, so their time is in the runtime and not the
        estimate: a bias below 0 of their share at most."""
        return self.timeline.outside_ns_at(gap_over_call_ns, self.lean_ns) / max(self.runtime_ns, 1.0) - 1

    def untimed_error_at(self, cap_ns: float) -> float | None:
        """The rule's time outside from the trace without -T (Timeline.untimed_outside_ns, a
        gap's median counting for no more than `cap_ns`) against the whole runtime; None where
        the calibration kept no such trace.  Such an estimate holds the file calls' time too,
        which is in the runtime here."""
        if self.untimed is None:
            return None
        return self.untimed.untimed_outside_ns(cap_ns) / max(self.runtime_ns, 1.0) - 1

    @property
    def gap_over_call_ns(self) -> float | None:
        """The constant a gap would have to take off for the rule to tell this program's
        runtime exactly (its file calls are a few warm ones); None where it has no timed gap."""
        return self.timeline.gap_over_call_for(self.runtime_ns, self.lean_ns)


def _start_to_start(run: CalibrationRun) -> float | None:
    """A calibration program's mean time from one call's start to the next's (span over calls);
    None where its trace has no call."""
    return run.timeline.span_ns / run.timeline.calls if run.timeline.calls else None


def call_lean(timeline: Timeline, bare_loop_lean_ns: float) -> float:
    """What the rule takes off each call not on a file of `timeline`'s trace beyond its
    process's median call: the trace's own lean (Timeline.bare_call_lean_taken_ns), or
    `bare_loop_lean_ns`, the calibration's, where the trace has too few bare calls to tell
    (module docstring)."""
    own = timeline.bare_call_lean_taken_ns
    return bare_loop_lean_ns if own is None else own


@dataclass(frozen=True)
class GapConstant:
    """What the rule takes off each gap of one trace over its process's median call
    (TracingCalibration.gap_over_call_told)."""

    ns: float
    from_trace: bool  # the trace's own median (at most the cap), not the calibration's constant
    evidence: str     # where it came from, in words


@dataclass(frozen=True)
class TracingCalibration:
    """How well a traced job's untraced time is told from its trace on this machine: the
    calibration programs' runs and the rule's error on each."""

    runs: list[CalibrationRun] = field(default_factory=list)
    flags: tuple[str, ...] = STRACE_FLAGS
    measured_at: str = ""
    schema_version: int = SCHEMA_VERSION
    # How much longer a bare gap takes under tracing than its process's median call, on a loop
    # of bare calls (module docstring); None: not measured.
    measured_gap_over_call_ns: float | None = None
    # From one bare call's start to the next's, the same loop traced; None: not measured.
    measured_start_to_start_ns: float | None = None
    # The cores the calibration ran on, which traces are taken to have run on too (0: not
    # measured; this machine's are taken then).
    cores: int = 0
    # How far a bare call's traced duration lies above its process's median call, on average,
    # on the same loop of bare calls (module docstring); None: not measured.
    measured_call_lean_ns: float | None = None
    # The part of a cold job's start that no plain trace holds (cold_start.py); None: not measured.
    cold_start: ColdStart | None = None

    @property
    def gap_over_call_ns(self) -> float:
        """What the rule takes off each gap of a program's trace, over its process's median call:
        GAP_SHARE_OF_BARE_LOOP of what a bare loop's gaps took here, or GAP_OVER_CALL_NS where
        no bare loop was measured."""
        if self.measured_gap_over_call_ns is None:
            return GAP_OVER_CALL_NS
        return GAP_SHARE_OF_BARE_LOOP * self.measured_gap_over_call_ns

    @property
    def call_lean_ns(self) -> float:
        """What the rule takes off each call not on a file beyond its process's median call:
        the bare loop's lean, or nothing where none was measured."""
        return self.measured_call_lean_ns or 0.0

    @property
    def start_to_start_ns(self) -> float | None:
        """From one call's start to the next's in a loop that is almost all tracing, at its
        slowest here: the longest of the bare loop's and of START_TO_START_PROGRAMS' traces
        (span over calls).  It bounds what tracing costs a gap (untimed_cap_ns), and tracing
        here runs at two speeds, now and then ten times faster for minutes: a bound from loops
        timed fast would count a trace's bare gaps made slow as work.  None where no bare loop
        was measured."""
        if self.measured_start_to_start_ns is None:
            return None
        return self._slowest_loop(self.measured_start_to_start_ns, _start_to_start)

    @property
    def untimed_cap_ns(self) -> float:
        """The most a gap's median counts for in a log without -T (Timeline.untimed_outside_ns):
        UNTIMED_CAP_SHARE of a loop's start-to-start here (start_to_start_ns), or the parser's
        own cap where none was measured."""
        loop = self.start_to_start_ns
        return float(PARSER_UNTIMED_CAP_NS) if loop is None else UNTIMED_CAP_SHARE * loop

    def bare_gap_for(self, timeline: Timeline) -> float | None:
        """What tracing cost a gap from one call's start to the next's in a log without -T:
        the slower of this calibration's loops (start_to_start_ns) and the log's own gaps from
        one bare call to the next (Timeline.untimed_bare_gap_ns), which say how fast tracing
        ran while the log was made; None where neither says."""
        return max(filter(None, (timeline.untimed_bare_gap_ns, self.start_to_start_ns)), default=None)

    def untimed_cap_for(self, timeline: Timeline) -> float:
        """untimed_cap_ns for one log without -T: UNTIMED_CAP_SHARE of bare_gap_for, where the
        calibration timed its loops (else untimed_cap_ns).  A calibration timed while tracing
        ran at its fast speed (a loop at 21 us from one call's start to the next, where most
        hours give 90-240) would count each gap of a log made at the slow speed as work: a
        test run's logs were told 2-12 times their time outside that way."""
        if self.start_to_start_ns is None:
            return self.untimed_cap_ns
        return UNTIMED_CAP_SHARE * self.bare_gap_for(timeline)

    def gap_over_call_of(self, timeline: Timeline) -> float:
        """What the rule takes off each gap of `timeline`'s trace over its process's median
        call (gap_over_call_told, which also says where it came from)."""
        return self.gap_over_call_told(timeline).ns

    def gap_over_call_told(self, timeline: Timeline) -> GapConstant:
        """What the rule takes off each gap of `timeline`'s trace, and where it came from: the
        trace's own median of a gap's excess over its process's median call
        (Timeline.gap_over_call_median_ns), which follows the speed tracing ran at for this
        trace and the processes it ran at once, counted for no more than own_median_cap_ns,
        and the trace's own bare calls' lean (Timeline.bare_call_lean_ns) where it tells one
        above 0: a gap's excess leans above its median as a call's does (module docstring).
        Where the parser kept no counts of it (profiles from before them), or where it is not
        above 0 (a process whose calls are mostly long file calls, so that its median call is
        no bare call and a gap is shorter than it), the calibration's constant
        (gap_over_call_ns) and contention_ns for each further process at once."""
        own = timeline.gap_over_call_median_ns
        if own is not None and own > 0:
            counted = min(own, self.own_median_cap_ns)
            words = f"the trace's own median of that excess, {own / 1e3:.1f} us" + (
                f", counted for no more than {counted / 1e3:.1f} us" if own > counted else "")
            lean = timeline.bare_call_lean_taken_ns
            if lean:
                return GapConstant(counted + lean, True, f"{words}, and {lean / 1e3:.1f} us, how far its "
                                   f"{timeline.bare_calls:,} bare calls lay above their median on average")
            return GapConstant(counted, True, words)
        constant = self.gap_over_call_ns + self.contention_ns * (timeline.concurrency - 1)
        why = ("this profile's parser kept no counts of the trace's own" if own is None else
               f"the trace's own median, {own / 1e3:.1f} us, says its calls are not bare ones")
        return GapConstant(constant, False, f"{constant / 1e3:.1f} us from the tracing calibration ({why})")

    @property
    def own_median_cap_ns(self) -> float:
        """The most a trace's own median counts for (gap_over_call_of): OWN_MEDIAN_CAP_SHARE of
        what a bare loop's gaps took over their calls here (of a typical bare loop's,
        GAP_OVER_CALL_NS / GAP_SHARE_OF_BARE_LOOP, where none was measured), or of
        START_TO_START_PROGRAMS' constants where one took more: the bound is tracing at its
        slowest, and a bare loop timed in one of tracing's fast whiles would lower it.  Where
        most of a program's gaps hold work, their median is that work, not tracing's constant."""
        bare = self.measured_gap_over_call_ns
        if bare is None:
            bare = GAP_OVER_CALL_NS / GAP_SHARE_OF_BARE_LOOP
        return OWN_MEDIAN_CAP_SHARE * self._slowest_loop(bare, lambda run: run.gap_over_call_ns)

    def _slowest_loop(self, bare: float, measure: Callable[[CalibrationRun], float | None]) -> float:
        """The most of _loops: tracing at its slowest here, the bound of what it costs, which a
        loop timed in one of tracing's fast whiles cannot lower."""
        return max(value for _, value in self._loops(bare, measure))

    def _loops(self, bare: float, measure: Callable[[CalibrationRun], float | None]) -> list[tuple[str, float]]:
        """Each loop by name: the bare loop's `bare`, and what `measure` tells of each of
        START_TO_START_PROGRAMS' runs (None: it tells nothing, and the run is left out)."""
        told = ((run.name, measure(run)) for run in self.runs if run.name in START_TO_START_PROGRAMS)
        return [("the bare loop", float(bare)), *((name, float(value)) for name, value in told if value is not None)]

    @property
    def uneven_warning(self) -> str:
        """A warning where the loops a start-to-start is timed on (start_to_start_ns) took
        UNEVEN_LOOPS times as long a call as one another or more: part of the calibration ran in
        one of tracing's fast whiles, so its programs' errors, and the bands taken from them, are
        of two speeds; "" where they agree, or no bare loop was measured."""
        if self.measured_start_to_start_ns is None:
            return ""
        loops = self._loops(self.measured_start_to_start_ns, _start_to_start)
        values = [ns for _, ns in loops]
        if max(values) < UNEVEN_LOOPS * min(values):
            return ""
        told = ", ".join(f"{name} {ns / 1e3:.1f} us" for name, ns in loops)
        return (f"tracing ran at two speeds while this calibration was made (a call's start to the next's: {told}); "
                "the bounds take the slowest, but its bands mix both speeds: calibrate again in a few minutes")

    @property
    def errors(self) -> list[float]:
        """The rule's relative error on each calibration program, from its trace with -T."""
        return [r.error_at(self.gap_over_call_of(r.timeline)) for r in self.runs]

    def untimed_error_of(self, run: CalibrationRun) -> float | None:
        """The rule's error on `run`'s trace without -T, at the cap this calibration takes for
        that log (untimed_cap_for); None where the run kept no such trace."""
        return run.untimed_error_at(self.untimed_cap_for(run.untimed)) if run.untimed is not None else None

    @property
    def untimed_errors(self) -> list[float]:
        """The same from each trace without -T, where the calibration kept one."""
        return [e for e in map(self.untimed_error_of, self.runs) if e is not None]

    @property
    def error_band(self) -> tuple[float, float]:
        """The band a trace with -T's time outside is given: its errors' (_band)."""
        return _band(self.errors)

    @property
    def untimed_error_band(self) -> tuple[float, float]:
        """The band a trace without -T's time outside is given: the untimed rule's own errors'
        where the calibration measured them, else the timed rule's (older calibrations)."""
        untimed = self.untimed_errors
        return _band(untimed) if untimed else self.error_band

    def _gap_over_call(self, name: str) -> tuple[float, float] | None:
        """Program `name`'s constant (gap_over_call_ns) and its processes at once."""
        for run in self.runs:
            if run.name == name and run.gap_over_call_ns is not None:
                return run.gap_over_call_ns, run.timeline.concurrency
        return None

    @property
    def contention_ns(self) -> float:
        """How much more a gap takes under tracing for each further process working at once
        (module docstring): the constant of two compressions at once over one's, per process
        more at once; 0 where the calibration did not run both, or where it came out below 0."""
        once, twice = self._gap_over_call("compress"), self._gap_over_call("compress-twice")
        if once is None or twice is None or twice[1] - once[1] < 0.5:
            return 0.0
        return max((twice[0] - once[0]) / (twice[1] - once[1]), 0.0)

    @property
    def traces_lean_ns(self) -> float | None:
        """How far the calibration's own traces' bare calls lay above their median, the median
        over its programs (Timeline.bare_call_lean_ns): how evenly tracing ran when it was
        measured; None where no program had enough bare calls to tell."""
        leans = [r.timeline.bare_call_lean_ns for r in self.runs if r.timeline.bare_call_lean_ns is not None]
        return float(statistics.median(leans)) if leans else None

    @property
    def cores_traced_on(self) -> int:
        """The cores a trace is taken to have run on: the calibration's, else this machine's."""
        return self.cores or usable_cores()

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tracing_calibration", "schema_version": self.schema_version, "errors": self.errors,
                "flags": list(self.flags), "measured_at": self.measured_at, "cores": self.cores,
                "gap_over_call_ns": self.measured_gap_over_call_ns,
                "start_to_start_ns": self.measured_start_to_start_ns,
                "program_gap_over_call_ns": {r.name: r.gap_over_call_ns for r in self.runs},
                "contention_ns": self.contention_ns, "call_lean_ns": self.measured_call_lean_ns,
                "untimed_errors": self.untimed_errors,
                "cold_start": self.cold_start.to_json() if self.cold_start else None,
                "runs": [{"name": r.name, "untraced_ns": r.untraced_ns, "timeline": r.timeline.model_dump(),
                          "untimed_timeline": r.untimed.model_dump() if r.untimed else None} for r in self.runs]}

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> "TracingCalibration":
        lean = body.get("call_lean_ns")
        runs = [CalibrationRun(r["name"], r["untraced_ns"], Timeline.of(r["timeline"]), lean or 0.0,
                               Timeline.of(r["untimed_timeline"]) if r.get("untimed_timeline") else None)
                for r in body.get("runs", [])]
        return cls(runs, tuple(body.get("flags", STRACE_FLAGS)), body.get("measured_at", ""),
                   int(body.get("schema_version", 1)), body.get("gap_over_call_ns"), body.get("start_to_start_ns"),
                   int(body.get("cores") or 0), lean, ColdStart.from_json(body.get("cold_start")))

    @property
    def current(self) -> bool:
        """Whether it measured what this version of the rule is judged by (SCHEMA_VERSION)."""
        return self.schema_version == SCHEMA_VERSION


def _band(errors: list[float]) -> tuple[float, float]:
    """The 90% band of a rule's relative errors (no narrower than +-10%: a handful of programs
    cannot show a tighter one); +-50% where nothing was calibrated.  Its low end is never
    below -90%: an estimate of nothing says nothing of how much more the truth is, so such a
    band reaches ten times the estimate."""
    if not errors:
        return UNCALIBRATED_BAND
    low, high = np.percentile(errors, [5, 95])
    return max(min(float(low), -0.10), -0.90), max(float(high), 0.10)


def newest_current(bodies: Iterable[dict[str, Any] | None]) -> TracingCalibration | None:
    """The first current calibration among stored ones (`bodies`, newest first), told apart by
    its schema version; where it measured no cold start (cold_start.py), with the newest one
    measured, so that a later calibration without `--cold-start` does not undo one with it.
    Nothing is read beyond what that needs."""
    found = None
    for body in bodies:
        if not body or int(body.get("schema_version", 1)) != SCHEMA_VERSION:
            continue
        if found is None:
            found = TracingCalibration.from_json(body)
            if found.cold_start is not None:
                return found
        elif body.get("cold_start"):
            return replace(found, cold_start=ColdStart.from_json(body["cold_start"]))
    return found


def shared_cores_stretch(concurrency: float, cores: int) -> float:
    """The most a traced job's work may have been slowed by sharing `cores` with its tracer,
    where `concurrency` of its processes worked at once.  strace serves every tracee from one
    thread: with one process working, the tracer runs while it is stopped, and they take turns;
    with more, the tracer works while the others run, up to a core of its own, and the
    processes and the tracer share the cores.  A process then gets as little as cores /
    (processes + the tracer's share) of one, and its gaps hold its work that many times over.
    How much the tracer took is not in the trace, so this bounds the band's low end and
    leaves the estimate (docs/model-evidence.md, "Work slowed beside the tracer")."""
    tracer = min(max(concurrency - 1.0, 0.0), 1.0)
    return max(1.0, (concurrency + tracer) / max(cores, 1))


def untraced_outside(timeline: Timeline, calibration: TracingCalibration | None) -> Outside | None:
    """The job's time outside its file calls without tracing (module docstring); None where
    the trace has no timestamps (strace without -tt).  Without call durations (no -T) a gap
    runs from one call's start to the next's, so the estimate (kind UNTIMED_EVIDENCE) holds the
    file calls' time too, and the caller takes their modelled time on the traced filesystem
    off it (predict.Workload), of the calls the log did not split in two: those show their
    duration, and the gap after them starts at their end.  Its band is the calibration's
    (error_band; untimed_error_band for a log without -T); a fitted runtime model narrows or
    widens a timed trace's by how far the constant a gap takes off strayed between the
    programs it was fitted on (Outside.per_gap_s, estimator.RuntimeEstimator), and widens a
    log without -T's to that where it is wider than what it learnt of such logs."""
    if not timeline.known:
        return None
    calibration = calibration or TracingCalibration()
    at_once = f"over {timeline.concurrency:.2f} processes working at once"
    stretch = shared_cores_stretch(timeline.concurrency, calibration.cores_traced_on)
    shared = (f"; the processes shared {calibration.cores_traced_on} cores with the tracer, which may have slowed "
              f"their work up to {stretch:.2f} times, so the band reaches that much lower" if stretch > 1 else "")
    lean_s = timeline.lean_off_ns / 1e9
    warning = stall_warning(timeline, calibration, lean_s)
    if not timeline.timed:
        cap_ns = calibration.untimed_cap_for(timeline)
        seconds = timeline.untimed_outside_ns(cap_ns) / 1e9
        lean = timeline.untimed_lean_ns
        leaned = (f", and {lean / 1e3:.1f} us, how far the gaps from one of its {timeline.untimed_bare_gaps:,} bare "
                  "calls to the next lay above their median on average" if lean is not None else "")
        synced = (f"; the {timeline.untimed_sync_gaps:,} gaps after a flush ({timeline.untimed_sync_gaps_ns / 1e9:.3f} s) "
                  "left out, as the flushes' time is the cost model's" if timeline.untimed_sync_gaps else "")
        evidence = (f"the trace read without call durations (as strace without -T writes it): the time from "
                    f"each call's start to the next's, less what tracing cost it then (the median of its process's last 32, at most "
                    f"{cap_ns / 1e3:.0f} us{leaned}){synced}, {at_once}: "
                    f"{seconds:.3f} s from a traced span of {timeline.span_ns / 1e9:.3f} s{shared}")
        # What tracing cost a gap is a median taken off each gap the estimate counts: each ns it
        # is off moves the estimate by this many seconds (0 is its floor, not its truth).
        per_gap_s = max(timeline.untimed_gaps - timeline.untimed_sync_gaps, 0) / timeline.concurrency / 1e9
        evidence += per_gap_sentence(per_gap_s, seconds)
        return replace(Outside.within(seconds, calibration.untimed_error_band, UNTIMED_EVIDENCE, evidence, stretch, lean_s),
                       per_gap_s=per_gap_s, warning=warning)
    constant = calibration.gap_over_call_told(timeline)
    lean_ns = call_lean(timeline, calibration.call_lean_ns)
    outside_ns = timeline.outside_ns_at(constant.ns, lean_ns)
    seconds = outside_ns / 1e9
    whose = "its bare calls" if timeline.bare_call_lean_ns is not None else "a bare call here"
    lean = f" and {lean_ns / 1e3:.1f} us, how far {whose} lay above it on average" if lean_ns else ""
    evidence = (f"the trace's own gaps between calls and its calls not on files, each less what tracing cost it "
                f"then (a gap: the median of its process's last 32 calls and {constant.evidence}; a call: the median of "
                f"the last 32{lean}), {at_once}: {seconds:.3f} s from a traced span of {timeline.span_ns / 1e9:.3f} s{shared}")
    # Each ns more a gap takes off moves the estimate by this many seconds, until it is 0.
    gaps_s = timeline.timed_gaps / timeline.concurrency / 1e9
    per_gap_s = gaps_s if outside_ns > 0 else 0.0
    evidence += per_gap_sentence(gaps_s, seconds)
    return replace(Outside.within(seconds, calibration.error_band, "trace", evidence, stretch, lean_s),
                   per_gap_s=per_gap_s, mapped_s=timeline.mapped_gaps_work_ns(constant.ns) / 1e9, warning=warning)


def both_readings(timed: Outside, untimed: Outside) -> Outside:
    """A log with -T's time outside: the mean of its two readings, `timed` (untraced_outside of
    its timeline) and `untimed` (of the same log read as strace without -T would have written
    it, Timeline.untimed), each less what the cost model prices already.

    The two rules err in different ways.  The timed one takes a constant off each gap for
    tracing, told from the trace's own gaps, and over the 100,000 gaps of a database program
    a microsecond of it is a tenth of a second; the untimed one takes each gap's median off it
    and the modelled time of the file calls out of what is left, and errs by what that model
    misprices.  Neither error follows the other, and the mean was nearer than either on the
    development set (docs/model-evidence.md, "Both readings of one trace").  Its band spans the
    mean of theirs, how far a gap's constant moves it (per_gap_s) and what it took off for
    tracing's lean (lean_s) are their means, and it keeps the timed reading's warning: a log
    without -T tells no stall.  Its evidence gives the three figures; each reading's own
    evidence is kept apart (`readings`), for the prediction to show beside it."""
    seconds = (timed.seconds + untimed.seconds) / 2
    evidence = (f"the mean of the trace read two ways, {seconds:.3f} s: with its call durations {timed.seconds:.3f} s, "
                f"without them {untimed.seconds:.3f} s")
    readings = tuple(OutsideReading(reading=name, seconds=one.seconds, evidence=one.evidence)
                     for name, one in (("with call durations", timed), ("without call durations", untimed)))
    return Outside(seconds, (timed.low + untimed.low) / 2, (timed.high + untimed.high) / 2, timed.kind, evidence,
                   per_gap_s=(timed.per_gap_s + untimed.per_gap_s) / 2, stretch=max(timed.stretch, untimed.stretch),
                   lean_s=(timed.lean_s + untimed.lean_s) / 2, warning=timed.warning, readings=readings)


# The share of a trace's time outside that 1 us more or less taken off each of its gaps must
# move before its evidence says so (per_gap_sentence).
SENSITIVE_SHARE = 0.1


def per_gap_sentence(per_gap_s: float, seconds: float) -> str:
    """How far 1 us more or less taken off each gap would move a trace's time outside, where
    that is at least SENSITIVE_SHARE of it (or it is 0), so that the user sees why a trace of
    many calls has a wide band: the constant is told per gap, and over 100,000 gaps 1 us is
    0.1 s (docs/model-evidence.md, "A timed trace of many calls").  `per_gap_s`: seconds per ns
    a gap, over the processes at once."""
    per_us = per_gap_s * 1e3
    if per_us <= 0 or per_us < SENSITIVE_SHARE * seconds:
        return ""
    if seconds <= 0:
        return (f"; that is its floor, and each us less that tracing cost each of its gaps would add {per_us:.3f} s "
                "(its band allows for it)")
    return (f"; each us more or less that tracing cost each of its gaps moves this by {per_us:.3f} s "
            "(its band allows for it)")


def stall_warning(timeline: Timeline, calibration: TracingCalibration, lean_s: float) -> str:
    """A warning where `timeline`'s trace was made while tracing ran unevenly: its own bare
    calls' lean (Timeline.bare_call_lean_ns) at least STALLED_LEAN_NS, beside the calibration's
    traces' where it has them; "" where it was not, or nothing tells.  Not against the
    calibration's alone: one made in the same busy hour leans as far.  A log without -T is not
    told: the gaps from one bare call to the next it leans by hold the program's own work too
    (a Python import's 36-81 us in calm hours)."""
    lean = timeline.bare_call_lean_ns if timeline.timed else None
    if lean is None or lean < STALLED_LEAN_NS:
        return ""
    usual = calibration.traces_lean_ns
    against = f" (the tracing calibration's traces: {usual / 1e3:.1f} us)" if usual is not None else ""
    return (f"tracing ran unevenly while this trace was made: its {timeline.bare_calls:,} bare calls lay "
            f"{lean / 1e3:.1f} us above their median on average{against}, so its time outside is uncertain by "
            f"{lean_s:.3f} s more either way; a trace made at a quieter moment narrows the interval")


CAPTURE = "capture"


def capture_outside(timeline: Timeline) -> Outside | None:
    """An NFS capture's clients' time outside the server (traces/nfs_timeline.py): their time
    with no call outstanding, and one shortest round trip per stretch of waiting, over the
    clients working at once; None where the capture has no replies to time."""
    if not timeline.known or not timeline.timed:
        return None
    seconds = timeline.outside_ns / 1e9
    clients = f"{timeline.processes} client's" if timeline.processes == 1 else f"{timeline.processes} clients'"
    evidence = (f"the capture's clients' own time: {clients} time with no NFS call outstanding, "
                f"and a round trip (their shortest reply) per stretch of waiting, over {timeline.concurrency:.2f} "
                f"clients at once: {seconds:.3f} s of a captured span of {timeline.span_ns / 1e9:.3f} s, where "
                f"its calls were outstanding {timeline.file_calls_signed_ns / 1e9:.3f} s on the captured server "
                "(its band a fixed +-50%, fitted on nothing: `fsbm validate --capture` measures how it holds)")
    # Nothing is fitted on captures: as wide as an uncalibrated trace's.
    return Outside.within(seconds, UNCALIBRATED_BAND, CAPTURE, evidence)
