"""Predictions for a workload on candidate filesystems (`fsbm predict`).

Per candidate: the runtime with a 90% interval, the time in the filesystem operation by
operation, and the ranking with how sure it is.  Every runtime comes from the runtime model
(estimator.RuntimeEstimator: outside + factor x filesystem), in one or two forms:
- absolute: every trace gets one.  The time outside the filesystem rests on the best
  evidence the profile has: a `fsbm trace record` recording's untraced CPU time
  (outside.py); else the trace's own gaps between calls and its calls not on files, each
  less what tracing cost it, for a log with -T the mean of its reading with its call
  durations and without them (tracing.py); else nothing, and the output says so.
- relative (Mesnier's relative fitness): a runtime measured on the traced candidate, whose
  filesystem part is replaced by each candidate's; the rest stays as measured.

The model is the one a validation fitted on workloads traced the same way (prediction_service.py
chooses it); before any validation, the intervals are those of the costs and of the time
outside.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pandas as pd

from fsbm.characterizer.classes import MAPPED_CLASS
from fsbm.documents import COPY_OPERATION, Prediction, Profile, Timeline
from fsbm.errors import UsageError
from fsbm.predictor.capture_cost import CaptureCost
from fsbm.predictor.confidence import cost_log_sds, order_confidence
from fsbm.predictor.cost_table import MEMORY_ONLY_FILESYSTEMS, CostTable
from fsbm.predictor.estimator import (CARRY_COLUMN, EXCESS_COLUMN, GAP_COLUMN, LEAN_COLUMN, STRETCH_COLUMN,
                                      UNTIMED_EVIDENCE, RuntimeEstimator)
from fsbm.predictor.model import CpuScales, FsTime, price_workload, stream_calls, stream_waits_hidden
from fsbm.predictor.outside import Outside, calls_cpu_seconds, cpu_scales, outside_features, outside_seconds
from fsbm.predictor.pricing import Pricer
from fsbm.predictor.told_costs import ToldDurations, TracedExcess
from fsbm.predictor.tracing import CAPTURE, TracingCalibration, both_readings, capture_outside, untraced_outside

SCHEMA_VERSION = 2


def calibration_key(table: CostTable) -> str:
    """What a calibration factor is kept under: filesystem type and whether it was aged."""
    aging = str(table.environment.get("aging_state") or "fresh")
    return f"{table.environment.get('fs_type', table.candidate)} {'aged' if aging.startswith('aged') else 'fresh'}"


def concurrency(profile: Profile) -> float:
    """How many of the workload's processes worked at once, on average (Timeline.concurrency;
    1 where the trace cannot tell): its calls overlap one another's work as its computing
    does, so the filesystem's part of the wall time is count x cost over this."""
    return Timeline.of(profile.timeline).concurrency


def feature_row(table: CostTable, fs: FsTime, outside: Outside, at_once: float = 1.0) -> dict[str, Any]:
    """The runtime model's row (estimator.COLUMNS) of a workload on one candidate: its
    filesystem time is count x cost over `at_once`, the processes working at once."""
    return {"key": calibration_key(table), "fs_s": fs.total_ns / 1e9 / at_once, "fs_low_s": fs.low_ns / 1e9 / at_once,
            "fs_high_s": fs.high_ns / 1e9 / at_once, "outside_s": outside.seconds, "outside_low_s": outside.low,
            "outside_high_s": outside.high, "evidence": outside.kind, GAP_COLUMN: outside.per_gap_s,
            STRETCH_COLUMN: outside.stretch, LEAN_COLUMN: outside.lean_s}


def relative_rows(rows: pd.DataFrame, traced: int, measured: float) -> pd.DataFrame:
    """`rows` in the relative form: the time outside is `measured` (a runtime on the row
    `traced`) less that candidate's filesystem time (estimator.RuntimeEstimator says where
    the workload's own time outside bounds it)."""
    base = rows.iloc[traced]
    out = rows.copy()
    out["outside_evidence"] = rows["evidence"]  # what the workload's own time outside rested on
    out["evidence"] = "measured"
    out["measured_s"] = measured
    out["traced"] = [i == traced for i in range(len(rows))]
    out["traced_key"] = base["key"]
    for column in ("fs_s", "fs_low_s", "fs_high_s"):
        out[f"traced_{column}"] = base[column]
    return out


def outside_from_trace(profile: Profile | dict[str, Any], calibration: TracingCalibration | None,
                       start: str = "cold") -> Outside:
    """The time outside the filesystem of a plain trace (tracing.untraced_outside) or an NFS
    capture (tracing.capture_outside), or nothing, saying why; a cold prediction from a plain
    trace with the cold start no trace holds (_with_cold_start)."""
    profile = Profile.of(profile)
    return _with_cold_start(_trace_reading(profile, Timeline.of(profile.timeline), calibration), calibration, start)


def _trace_reading(profile: Profile, reading: Timeline, calibration: TracingCalibration | None) -> Outside:
    """The time outside told from one reading of a trace's calls (the profile's timeline, or
    its reading without durations, Timeline.untimed): a plain trace's (tracing.untraced_outside),
    an NFS capture's (tracing.capture_outside), or nothing, saying why."""
    if profile.protocol == "nfs":
        estimate, why = capture_outside(reading), "the capture has no replies to time its calls by"
    else:
        estimate, why = untraced_outside(reading, calibration), "the trace has no timestamps (strace -tt)"
    if estimate is not None:
        return estimate
    return Outside.exactly(0.0, "none", f"not known, as {why}; only the filesystem's time is predicted, and "
                                        "--measured adds the relative form")


def _with_cold_start(outside: Outside, calibration: TracingCalibration | None, start: str) -> Outside:
    """A plain trace's time outside and, for a cold prediction, the cold start no trace holds
    (strace loaded the program before its trace begins), where the calibration measured it
    (cold_start.py), else said so; any other time outside as it is."""
    if start != "cold" or outside.kind not in ("trace", UNTIMED_EVIDENCE):
        return outside
    cold_start = calibration.cold_start if calibration else None
    if cold_start is not None:
        return outside.more(cold_start.seconds, cold_start.band, cold_start.words())
    return replace(outside, evidence=f"{outside.evidence}; the cold start no trace holds (strace loaded the program "
                                     "before its trace begins) is not in it: `fsbm trace calibrate --cold-start`, "
                                     "as root, measures it")


def _is_reference(entry: dict[str, Any]) -> bool:
    """A candidate that keeps nothing across a reboot (tmpfs): a yardstick, never a purchase."""
    return entry["environment"].get("fs_type") in MEMORY_ONLY_FILESYSTEMS


def _ranking(entries: list[dict[str, Any]], value: str, cost_log_sd: dict[str, float],
             ratio_log_sd: float) -> dict[str, Any]:
    """The candidates in order, and the best choice against the next, with the confidence that
    the best is faster (confidence.order_confidence: the model's ratio error `ratio_log_sd` and
    each candidate's cost measurements, `cost_log_sd` by candidate)."""
    order = sorted(entries, key=lambda e: e[value])
    choices = [e for e in order if not _is_reference(e)]
    out: dict[str, Any] = {"order": [e["candidate"] for e in order], "by": value,
                           "references": [e["candidate"] for e in order if _is_reference(e)]}
    if choices:
        out["best"] = choices[0]["candidate"]
    if len(choices) > 1:
        best, second = choices[0], choices[1]
        spreads = (ratio_log_sd, cost_log_sd[best["candidate"]], cost_log_sd[second["candidate"]])
        out.update({"runner_up": second["candidate"],
                    "faster_by": second[value] / best[value] - 1 if best[value] else None,
                    "saves": 1 - best[value] / second[value] if second[value] else None,
                    "confidence": order_confidence(best[value], second[value], spreads)})
    return out


@dataclass(frozen=True)
class Workload:
    """A profile priced on each candidate: the runtime model's rows (estimator.COLUMNS), the
    filesystem time behind each, the time outside and how the calls' CPU was scaled."""

    features: list[dict[str, Any]]  # per candidate, its row (feature_row)
    times: list[FsTime]
    outside: Outside
    scales: CpuScales
    outside_features: dict[str, float] | None
    at_once: float = 1.0  # the processes working at once (concurrency)
    # What the trace's call durations tell each operation took where it was traced.
    told: ToldDurations = field(default_factory=ToldDurations)

    @classmethod
    def priced(cls, profile: Profile | dict[str, Any], pricers: list[Pricer], *, cache_bytes: int, start: str = "cold",
               traced_on: str | None = None, tracing: TracingCalibration | None = None,
               capture_cost: CaptureCost | None = None) -> "Workload":
        """`traced_on`: the candidate the workload was traced on, whose costs tell the system
        time outside the filesystem (outside.py); `tracing`: how well this machine's traces
        tell their untraced time (the band of a plain trace's time outside); `capture_cost`:
        what capturing costs a job here (capture_cost.py), which widens a capture's band
        where its clients shared the server's host."""
        profile = Profile.of(profile)
        names = [pricer.table.candidate for pricer in pricers]
        on_traced = None  # the modelled CPU seconds of its filesystem calls where it was traced
        scales = CpuScales()  # outside.cpu_scales: known only where it was traced
        if traced_on is not None:
            if traced_on not in names:
                raise UsageError(f"--traced-on {traced_on} is not one of the candidates ({', '.join(names)})")
            traced = pricers[names.index(traced_on)]
            on_traced = calls_cpu_seconds(profile, traced, cache_bytes=cache_bytes, start=start)
            scales = cpu_scales(profile, traced, cache_bytes=cache_bytes, start=start)
        features = None
        timeline = Timeline.of(profile.timeline)
        if profile.recording:
            features = outside_features(profile, on_traced, start)
            cores = features.get("cpu_parallelism", 1.0)
            over = f", its CPU time over the {cores:.2f} cores it computed on at once" if cores > 1 else ""
            outside = Outside.exactly(outside_seconds(features), "recording",
                                      f"the recording's untraced CPU time and waits{over}")
        else:
            outside = _trace_reading(profile, timeline, tracing)
        times = [price_workload(profile, pricer, cache_bytes=cache_bytes, start=start, cpu_scales=scales)
                 for pricer in pricers]
        at_once = timeline.concurrency
        if outside.kind == CAPTURE:
            times = _streams_behind_server(profile, names, times, traced_on)
            outside = _with_server_handling(outside, timeline, names, times, traced_on, at_once)
            outside = _with_capturing_cost(outside, profile, capture_cost, at_once)
            outside = _with_client_start(outside, profile, capture_cost, start)
        else:
            outside = _less_priced(outside, timeline, names, times, traced_on, tracing)
        if outside.kind == "trace" and timeline.untimed is not None:
            untimed = _trace_reading(profile, timeline.untimed, tracing)
            outside = both_readings(outside, _less_priced(untimed, timeline.untimed, names, times, traced_on, tracing,
                                                          observed_ns=timeline.file_calls_long_ns))
        outside = _with_cold_start(outside, tracing, start)
        rows = [feature_row(pricer.table, fs, outside, at_once) for pricer, fs in zip(pricers, times)]
        return cls(rows, times, outside, scales, features, at_once, ToldDurations.of(profile, tracing))

    @cached_property
    def rows(self) -> pd.DataFrame:
        """The runtime model's X: a row per candidate."""
        return pd.DataFrame(self.features)

    def relative_rows(self, traced: int, measured: float) -> pd.DataFrame:
        """The rows in the relative form (relative_rows), `measured` a runtime on candidate
        `traced`, with what the trace's call durations told beyond that candidate's prices and
        how it carries to each candidate (told_costs.TracedExcess), over the processes working
        at once as the filesystem times are."""
        excess = TracedExcess.of(self.told, self.times[traced])
        return relative_rows(self.rows, traced, measured).assign(**{
            EXCESS_COLUMN: excess.total_ns / 1e9 / self.at_once,
            CARRY_COLUMN: [excess.carry(time) for time in self.times]})


def _less_priced(outside: Outside, reading: Timeline, names: list[str], times: list[FsTime], traced_on: str | None,
                 tracing: TracingCalibration | None, observed_ns: float | None = None) -> Outside:
    """A plain trace's time outside, told from `reading` of its calls, less what the cost model
    prices already: without call durations, the file calls' time its gaps hold
    (_less_file_calls; `observed_ns`: where the log has durations after all, what they say its
    file calls took); with them, the reads of the files it mapped (_less_mapped_reads).  Each
    over the processes that reading tells worked at once."""
    if outside.kind == UNTIMED_EVIDENCE:
        return _less_file_calls(outside, names, times, traced_on, reading.concurrency, reading, tracing, observed_ns)
    if outside.mapped_s > 0:
        return _less_mapped_reads(outside, names, times, traced_on, reading.concurrency)
    return outside


def _traced_anchor(names: list[str], times: list[FsTime], traced_on: str | None) -> tuple[int, str]:
    """The candidate whose modelled time a plain trace's time outside is told against, and
    where, in words: `traced_on`, where it was traced; without it, the candidate whose
    filesystem time is the median, said so."""
    if traced_on is not None:
        return names.index(traced_on), f"on {traced_on}, where it was traced"
    anchor = sorted(range(len(times)), key=lambda i: times[i].total_ns)[len(times) // 2]
    return anchor, f"on {names[anchor]}, the median candidate (--traced-on names the one it was traced on)"


def _less_file_calls(outside: Outside, names: list[str], times: list[FsTime], traced_on: str | None,
                     at_once: float, timeline: Timeline, tracing: TracingCalibration | None,
                     observed_ns: float | None = None) -> Outside:
    """A time outside that holds file calls' time too (a trace without -T), less their
    modelled time where the workload was traced (_traced_anchor), over the processes working
    at once, as the time outside is: of each priced class, the share of its calls whose time
    lies in the gaps (Timeline.share_in_gaps; the log split the others in two, and their time
    is in no gap).  Of each operation's, the part its gaps' medians already took off is left
    (Timeline.held_in_medians_ns, at the calibration's cap): a program whose gaps are mostly
    its file calls has a median that holds a typical one, and taking the modelled time off
    again would count it twice.  What tracing cost a gap is the slower of the trace's own bare
    gaps (Timeline.untimed_bare_gap_ns: how fast tracing ran while it was made) and the
    calibration's loop (start_to_start_ns), TracingCalibration.bare_gap_for: a file call's
    stops cost tracing more than a bare call's (its path and buffer decoded), so the trace's
    bare gaps alone understate them; with neither, nothing is held.  Where the parser left the gaps after syncs out of it
    (Timeline.untimed_sync_gaps), the syncs' modelled time stays in: the trace does not hold it.

    A log with -T read as if it had none still says how long its long file calls took where
    it was traced (`observed_ns`: those a millisecond or more above their processes' median
    call, summed, Timeline.file_calls_long_ns; no tracing stop takes so long), and no less
    than that is taken off: where the model prices the calls far below what the trace shows
    (a copy the median candidate clones in milliseconds and the traced filesystem copied in
    seconds), the difference is the filesystem's time, not the program's."""
    anchor, where = _traced_anchor(names, times, traced_on)
    syncs_apart = timeline.untimed_sync_gaps > 0
    lines = [line for line in times[anchor].lines if not (syncs_apart and line.op == "fsync")]
    in_gaps: dict[str, float] = {}  # by the operation the parser counts a class's calls under
    for line in lines:
        op = COPY_OPERATION.get(line.op, line.op)
        in_gaps[op] = in_gaps.get(op, 0.0) + line.total_ns * timeline.share_in_gaps(line.op)
    calibration = tracing or TracingCalibration()
    loop = calibration.bare_gap_for(timeline)
    held = {op: min(ns, timeline.held_in_medians_ns(op, calibration.untimed_cap_for(timeline), loop)) if loop else 0.0
            for op, ns in in_gaps.items()}
    in_gaps_ns, held_ns, all_ns = sum(in_gaps.values()), sum(held.values()), sum(line.total_ns for line in lines)
    which = "file calls' but its syncs'" if syncs_apart else "file calls'"
    split = (f" ({in_gaps_ns / all_ns:.0%} of it: the log split the other calls in two, and showed their time apart "
             "from the gaps)" if all_ns and in_gaps_ns < 0.995 * all_ns else "")
    medians = (f", but the {held_ns / 1e9:.3f} s of it its gaps' medians took off already (above a bare gap's "
               f"{loop / 1e3:.0f} us)" if held_ns > 0 and loop else "")
    said = f"less its {which} modelled time {where}{split}{medians}"
    off_ns = in_gaps_ns - held_ns
    seen_ns = (observed_ns or 0.0) * (in_gaps_ns / all_ns if all_ns else 1.0)
    if seen_ns > off_ns:
        said = (f"less its {which} time as the log's durations show it: its calls a millisecond or more above their "
                f"processes' median call took {seen_ns / 1e9:.3f} s where it was traced, more than all its file calls' "
                f"modelled time {where} ({off_ns / 1e9:.3f} s)")
        off_ns = seen_ns
    return outside.less(off_ns / 1e9 / at_once, said)


def _streams_behind_server(profile: Profile, names: list[str], times: list[FsTime],
                           traced_on: str | None) -> list[FsTime]:
    """A capture's modelled times with each candidate's stream reads' wait for the device
    hidden behind the server's own handling of those reads (model.stream_waits_hidden).

    An NFS server sends each read's reply and waits for the client's next call while
    readahead brings the stream's next blocks in, so a candidate's slower device shows only
    where its wait outlasts that time.  The time is the sequential READs' time outstanding on
    the captured server (their untimed calls at the timed ones' mean), as many of them as the
    model reads as a stream, less their modelled CPU time where the capture was taken
    (_traced_anchor): all that is not the filesystem's computing counts as the server's own.
    Where the captured server's streams waited on its device, that overstates the time for a
    candidate whose device is faster."""
    classes = list(profile.classes.data.get("read", {}).get("sequential", {}).values())
    timed = sum(c.timed for c in classes)
    anchor, where = _traced_anchor(names, times, traced_on)
    streams, cpu_ns = stream_calls(times[anchor])
    if not timed or streams <= 0:
        return times
    window_ns = sum(c.dur_ns for c in classes) / timed * streams - cpu_ns
    said = (f"the server's own handling of the stream's reads ({window_ns / 1e9:.3f} s: their time outstanding in the "
            f"capture less their modelled CPU time {where})")
    return [stream_waits_hidden(fs, window_ns, said) for fs in times]


def _with_server_handling(outside: Outside, timeline: Timeline, names: list[str], times: list[FsTime],
                          traced_on: str | None, at_once: float) -> Outside:
    """A capture's time outside the server, and the server's time in its calls that the cost
    model does not price: how long the calls were outstanding on the captured server beyond
    its floor (Timeline.file_calls_signed_ns) less their modelled time where the capture was
    taken (_traced_anchor), over the clients working at once.  That is the NFS server's own
    handling of each call (decoding, its caches, replying), the same whichever filesystem it
    exports; where the model prices the calls above what the capture saw, the difference is
    taken off instead (never below 0)."""
    anchor, where = _traced_anchor(names, times, traced_on)
    handling = (timeline.file_calls_signed_ns - times[anchor].total_ns) / 1e9 / at_once
    said = (f"the server's own handling of the calls, {abs(handling):.3f} s: their {timeline.file_calls_signed_ns / 1e9:.3f} "
            f"s outstanding in the capture less their modelled time {where}")
    if handling >= 0:
        return outside.more(handling, (handling, handling), said)
    return outside.less(-handling, f"less {said} (the model prices them above what the capture saw)")


# Less than this, a band's reach is no part of any figure a prediction shows.
NEGLIGIBLE_S = 0.5e-3


def _with_capturing_cost(outside: Outside, profile: Profile, cost: CaptureCost | None, at_once: float) -> Outside:
    """A capture's time outside whose band reaches lower by what capturing may have cost the
    job it holds, where its clients called a server at their own address (the capturer
    shared their host): up to the calibrated seconds per MiB moved at the high end of their
    spread (capture_cost.py), over the clients working at once; the time itself is the
    capture's.  What a job bears depends on how busy it keeps the cores, more than the
    calibration's transfers tell (docs/model-evidence.md), so the cost widens the band and
    moves nothing.  Where nothing was calibrated, said so."""
    if not Timeline.of(profile.timeline).same_host_clients:
        return outside
    found = cost.of_capture(profile) if cost is not None else None
    if found is None:
        return replace(outside, evidence=f"{outside.evidence}; its clients shared the server's host, and what "
                                         "capturing there may have cost them is not in its band (`fsbm trace "
                                         "calibrate --capture`, as root, measures it)")
    seconds, (_, high), mib = found
    seconds, high = seconds / at_once, high / at_once
    if high < NEGLIGIBLE_S:  # a job that moved next to no bytes: nothing to allow for, nor to say
        return outside
    lower = outside.more(0.0, (-high, 0.0), f"its band reaching {high:.3f} s lower for what capturing may have cost "
                                             f"the job ({mib:.1f} MiB moved on the host the clients shared with the "
                                             f"server; {seconds:.3f} s at the {1e3 * cost.seconds_per_mib:.2f} ms a "
                                             "MiB calibrated here)")
    return replace(lower, low=max(lower.low, 0.0))


def _with_client_start(outside: Outside, profile: Profile, cost: CaptureCost | None, start: str) -> Outside:
    """A capture's time outside and, for a cold prediction whose clients called a server at
    their own address (a job started on this host), the client's own start and end, which
    lie before its first packet and after its last (capture_cost.py): its median, its band
    the calibration's range.  Where nothing was calibrated, said so; a warm prediction, or
    clients elsewhere, take nothing."""
    if start != "cold" or not Timeline.of(profile.timeline).same_host_clients:
        return outside
    if cost is None or not cost.starts:
        return replace(outside, evidence=f"{outside.evidence}; the client's own start and end, before its first "
                                         "packet and after its last, are not in it (`fsbm trace calibrate "
                                         "--capture`, as root, measures them)")
    return outside.more(cost.client_start_s, cost.client_start_band, cost.start_words())


def _less_mapped_reads(outside: Outside, names: list[str], times: list[FsTime], traced_on: str | None,
                       at_once: float) -> Outside:
    """A time outside whose gaps after the program mapped files hold its reads of them
    (Outside.mapped_s), less the modelled time of those reads where the workload was traced
    (_traced_anchor), up to those gaps' work: the cost model prices them as the mappings',
    on every candidate, so the time outside does not hold them too."""
    anchor, where = _traced_anchor(names, times, traced_on)
    mapped_ns = sum(line.total_ns for line in times[anchor].lines if line.op == MAPPED_CLASS)
    taken = min(mapped_ns / 1e9 / at_once, outside.mapped_s)
    if taken <= 0:
        return outside
    return outside.less(taken, f"less {taken:.3g} s of it in the gaps after it mapped files, the modelled read of "
                               f"what it mapped {where}")


def predict(profile: Profile | dict[str, Any], tables: list[tuple[int | None, Pricer]], *, cache_bytes: int,
            start: str = "cold", model: RuntimeEstimator | None = None, model_id: int | None = None,
            measured: float | None = None, traced_on: str | None = None,
            tracing: TracingCalibration | None = None, capture_cost: CaptureCost | None = None) -> Prediction:
    """The prediction document for a profile on each candidate's cost table (its Pricer).

    `model`: the fitted runtime model (unfitted: factor 1, the costs' intervals), stored as
    document `model_id`; `measured`: a real runtime on `traced_on`, for the relative form;
    `traced_on`, `tracing` and `capture_cost`: as Workload.priced."""
    if not tables:
        raise UsageError("give at least one candidate")
    if measured is not None and traced_on is None:
        raise UsageError("a measured runtime needs the candidate it was measured on (--traced-on)")
    model = model or RuntimeEstimator.unfitted()
    profile = Profile.of(profile)
    names = [pricer.table.candidate for _, pricer in tables]
    workload = Workload.priced(profile, [pricer for _, pricer in tables], cache_bytes=cache_bytes, start=start,
                               traced_on=traced_on, tracing=tracing, capture_cost=capture_cost)
    times, outside, scales = workload.times, workload.outside, workload.scales
    features = workload.outside_features
    row_of = workload.features
    parts = model.predict_parts(row_of)
    entries = []
    for i, ((table_id, pricer), fs) in enumerate(zip(tables, times)):
        table = pricer.table
        factor = model.factor(row_of[i]["key"])
        scale = factor["factor"] / 1e9 / workload.at_once
        entries.append({
            "candidate": table.candidate, "calibration_key": row_of[i]["key"], "cost_table_id": table_id,
            "cost_table_measured_at": table.measured_at,
            "environment": {k: table.environment.get(k) for k in ("fs_type", "mount_options", "aging_state")},
            "runtime_s": float(parts["runtime"][i]), "low_s": float(parts["low"][i]), "high_s": float(parts["high"][i]),
            "fs_s": float(parts["fs"][i]), "fs_modelled_s": fs.total_ns / 1e9, "fs_factor": factor,
            "outside_s": float(parts["outside"][i]),
            "breakdown_s": {op: ns * scale for op, ns in fs.by_op().items()},
            "lines": list(fs.price_lines),
        })
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "kind": "prediction", "workload": profile.source,
        "scope": profile.scope, "cache_bytes": cache_bytes, "start": start, "cpu_scales": scales.factors,
        "traced_cpu_ns": scales.traced_ns, "model_id": model_id, "model_fitted_on": getattr(model, "fitted_on_", None),
        "model_errors": model.errors_, "validated": model.validated, "calibrated": bool(model.factors_),
        "outside_features": features, "outside_evidence": outside.evidence,
        "outside_readings": list(outside.readings), "evidence": outside.kind,
        "warnings": [outside.warning] if outside.warning else [], "concurrency": workload.at_once,
        "observed_s": {op: ns / 1e9 for op, (_, ns) in sorted(profile.classes.observed_ns().items(),
                                                              key=lambda kv: -kv[1][1])},
        "told_s": {op: ns / 1e9 for op, (_, ns) in workload.told.ops.items()},
        "traced_on": traced_on,
        "absolute": outside.kind != "none", "candidates": entries,
    }
    evidence = str(row_of[0]["evidence"]) if row_of else "none"
    spreads = cost_log_sds(row_of, parts["fs"], parts["runtime"])
    doc["ranking"] = _ranking(entries, "runtime_s", dict(zip(names, spreads)), model.ratio_log_sd(evidence))
    if measured is not None:
        relative = model.predict_parts(workload.relative_rows(names.index(traced_on), measured))
        for i, e in enumerate(entries):
            e["relative_s"], e["relative_low_s"], e["relative_high_s"] = (
                float(relative[key][i]) for key in ("runtime", "low", "high"))
        doc["measured"] = {"seconds": measured, "on": traced_on}
        spreads = cost_log_sds(row_of, relative["fs"], relative["runtime"])
        doc["relative_ranking"] = _ranking(entries, "relative_s", dict(zip(names, spreads)),
                                           model.ratio_log_sd("measured"))
    return Prediction.model_validate(doc)
