"""What capturing costs the job it captures, per MiB moved, as measured on this machine.

A capture of NFS traffic taken on the host its clients and server share (the loopback) holds
a job slowed by the capturer (microbench/capture_cost.py says why and how it is measured),
and what it tells of the time outside the server is too long by about what capturing cost
the job.  Measured in pairs of the same transfer captured and not, that cost grows with the
bytes the packets carry: it is told here as seconds per MiB the job's reads and writes moved,
the median of the pairs, with a 90% band from their spread.  A prediction from such a
capture lets its time outside's band reach lower by it (predict._with_capturing_cost); one
from a capture whose clients called a server elsewhere does not (its capturer need not have
shared their cores).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fsbm.documents import Profile, Timeline

MIB = 1 << 20
CAPTURE_CALIBRATION = "capture_calibration"  # the kind the store keeps it as,
CALIBRATED_ON = "loopback"  # and the name


@dataclass(frozen=True)
class CaptureCost:
    """Pairs of transfers timed captured and not (microbench.capture_cost.CapturePair, as
    dicts), when, and where their share was."""

    pairs: list[dict[str, Any]] = field(default_factory=list)
    measured_at: str = ""
    share_in: str | None = None  # where the share was (cold runs there); None: in memory
    starts: list[dict[str, Any]] = field(default_factory=list)  # microbench.capture_cost.ClientStart, as dicts

    def _starts(self) -> list[float]:
        return [s["seconds"] - s["span_s"] for s in self.starts]

    @property
    def client_start_s(self) -> float:
        """The client's own start and end no capture holds: the median of the small jobs'
        seconds beyond their captures' spans (never below 0)."""
        starts = self._starts()
        return max(float(np.median(starts)), 0.0) if starts else 0.0

    @property
    def client_start_band(self) -> tuple[float, float]:
        """The least and the most any run's was (never below 0)."""
        starts = self._starts()
        return (max(min(starts), 0.0), max(max(starts), 0.0)) if starts else (0.0, 0.0)

    def start_words(self) -> str:
        """The client's start, as a person reads it, with what it rests on."""
        low, high = self.client_start_band
        jobs = ", ".join(sorted({s["job"] for s in self.starts}))
        return (f"the client's own start and end no capture holds, {1e3 * self.client_start_s:.1f} ms "
                f"({1e3 * low:.1f}-{1e3 * high:.1f}), measured here on small client jobs ({jobs}) run cold and "
                "captured, beyond their captures' spans")

    def _per_mib(self) -> np.ndarray:
        return np.array([(p["captured_s"] - p["plain_s"]) / p["mib"] for p in self.pairs if p["mib"] > 0])

    @property
    def seconds_per_mib(self) -> float:
        """The median pair's extra seconds captured, per MiB moved (never below 0)."""
        per_mib = self._per_mib()
        return max(float(np.median(per_mib)), 0.0) if len(per_mib) else 0.0

    @property
    def band_per_mib(self) -> tuple[float, float]:
        """The pairs' 5th and 95th percentiles of it (never below 0)."""
        per_mib = self._per_mib()
        if not len(per_mib):
            return 0.0, 0.0
        low, high = np.percentile(per_mib, [5, 95])
        return max(float(low), 0.0), max(float(high), 0.0)

    def words(self) -> str:
        """The rate and its band, as a person reads them: "0.27 ms a MiB moved (0.06-0.55)"."""
        low, high = self.band_per_mib
        return f"{1e3 * self.seconds_per_mib:.2f} ms a MiB moved ({1e3 * low:.2f}-{1e3 * high:.2f})"

    def of_capture(self, profile: Profile) -> tuple[float, tuple[float, float], float] | None:
        """What capturing cost the job a capture holds: seconds, their band, and the MiB its
        reads and writes moved; None where none of its clients called a server at their own
        address (Timeline.same_host_clients)."""
        timeline = Timeline.of(profile.timeline)
        if not timeline.same_host_clients or not timeline.processes:
            return None
        share = min(1.0, timeline.same_host_clients / timeline.processes)
        mib = share * moved_bytes(profile) / MIB
        low, high = self.band_per_mib
        return mib * self.seconds_per_mib, (mib * low, mib * high), mib

    def to_json(self) -> dict[str, Any]:
        return {"kind": CAPTURE_CALIBRATION, "measured_at": self.measured_at, "share_in": self.share_in,
                "pairs": self.pairs,
                "seconds_per_mib": self.seconds_per_mib, "band_per_mib": list(self.band_per_mib),
                "client_starts": self.starts, "client_start_s": self.client_start_s,
                "client_start_band": list(self.client_start_band)}

    @classmethod
    def from_json(cls, body: dict[str, Any] | None) -> "CaptureCost | None":
        if not body:
            return None
        return cls(list(body.get("pairs", [])), body.get("measured_at", ""), body.get("share_in"),
                   list(body.get("client_starts", [])))


def moved_bytes(profile: Profile) -> int:
    """The bytes a workload's reads and writes moved (its data classes)."""
    return sum(count.bytes for op in ("read", "write") for buckets in profile.classes.data.get(op, {}).values()
               for count in buckets.values())
