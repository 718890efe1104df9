"""What a profile says about the time its program spends outside the filesystem.

Tracing inflates each traced call by tens of microseconds here (ptrace stops on both sides
of the call), which for a program making tens of thousands of calls is many times its
untraced runtime, and the inflation per call varies by a third between programs: no
subtraction from the traced wall time survives that.  So the time outside is what tracing
inflates least, fsrusage's CPU time, plus the time of calls on other filesystems less the
per-call inflation measured in the same trace.  It is not fitted: every fitted form tried
validated worse (docs/validation.md).
"""

from __future__ import annotations

from typing import Any

from fsbm.errors import UsageError


def outside_features(profile: dict[str, Any]) -> dict[str, float]:
    """user_cpu_s and outside_calls_s of a profile made from `fsbm trace record`; the CPU
    time of its untraced runs where it has them (record's untraced_runs), which tracing has
    not bent."""
    recording = profile.get("recording")
    trace_time = profile.get("trace_time") or {}
    if not recording or not trace_time.get("known"):
        raise UsageError(f"the profile of {profile.get('source') or 'this trace'} has no recording facts: the time "
                         "outside the filesystem is unknown",
                         hint="record the program with `fsbm trace record` (it keeps the CPU time beside the log), "
                              "or use the relative form (--measured SECONDS --traced-on CANDIDATE)")
    user = recording.get("untraced_user_cpu_ns", recording["user_cpu_ns"])
    return {"user_cpu_s": user / 1e9,
            "outside_calls_s": trace_time.get("outside_calls_corrected_ns", 0) / 1e9}


def outside_seconds(features: Any) -> Any:
    """Seconds outside the filesystem: CPU time + calls on other filesystems.  `features` is a
    dict from outside_features or a DataFrame of such rows (then one value per row)."""
    return features["user_cpu_s"] + features["outside_calls_s"]
