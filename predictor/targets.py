"""The targets the predictor is held to (issue 35): one definition, read by both judges, the
validation overview and the demo.

A buyer reads a prediction in one of two forms, and each has its own bound on the errors
against real runs.  Where a runtime was measured on the traced candidate, or the trace was
recorded with `fsbm trace record`, the prediction is held to the tighter bound, for runtimes
and for ratios to the traced candidate alike; from a plain trace alone (strace, with or
without -T), to the looser.  Every form's 90% intervals must cover enough of the measured
runtimes, and every pair of candidates measured far enough apart must be ranked right.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsbm.units import percent


@dataclass(frozen=True)
class ErrorBound:
    """The absolute errors of a form: their median and their largest, at most."""

    median: float
    largest: float

    def met(self, median: float | None, largest: float | None) -> bool:
        """Whether a form's errors meet the bound; an error not measured (None) meets it."""
        return (median is None or median <= self.median) and (largest is None or largest <= self.largest)


@dataclass(frozen=True)
class Targets:
    relative: ErrorBound  # the relative form and recordings: runtimes, and ratios to the traced candidate
    absolute: ErrorBound  # the absolute form from a plain trace
    coverage: float       # the share of measured runtimes inside their 90% intervals, at least
    rank_gap: float       # pairs of candidates measured further apart than this are ranked right


def targets_sentence(targets: "Targets") -> str:
    """The targets in words, as the validation documents state them."""
    return (f"relative form median <= {percent(targets.relative.median)}, largest <= {percent(targets.relative.largest)}, "
            f"for runtimes and ratios; absolute forms median <= {percent(targets.absolute.median)}, largest <= "
            f"{percent(targets.absolute.largest)}; intervals covering >= {percent(targets.coverage)}")


def form_met(bound: ErrorBound, runtimes: tuple[float | None, float | None], ratios: tuple[float | None, float | None],
             covered: int | None, intervals: int | None, pairs_right: int, pairs: int) -> bool:
    """Whether a form judged on one set meets every target: its runtimes' median and largest
    errors `bound`, its ratios' TARGETS.relative, its intervals covering at least
    TARGETS.coverage of the runtimes (where counted), and every pair measured apart ranked
    right."""
    covering = intervals is None or covered is None or covered >= TARGETS.coverage * intervals
    return bound.met(*runtimes) and TARGETS.relative.met(*ratios) and covering and pairs_right == pairs


def form_bound(form: str) -> ErrorBound:
    """The bound a form of a plain trace's prediction is held to: the relative form's own;
    the absolute and untimed forms', the absolute one."""
    return TARGETS.relative if form == "relative" else TARGETS.absolute


TARGETS = Targets(relative=ErrorBound(median=0.10, largest=0.25), absolute=ErrorBound(median=0.20, largest=0.50),
                  coverage=0.85, rank_gap=0.15)
