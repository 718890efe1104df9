"""How numbers are written for people, the same in every document and table fsbm writes."""

from __future__ import annotations

import math


def percent(fraction: float | None, *, signed: bool = False, digits: int = 0) -> str:
    """A fraction as a percentage: 0.125 -> "12%", "+12%" (`signed`), "12.5%" (`digits=1`);
    "-" for None or NaN, where nothing was measured."""
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return "-"
    return f"{100 * fraction:{'+' if signed else ''}.{digits}f}%"


def percents(*fractions: float | None, digits: int = 1) -> str:
    """Fractions as percentages joined by " / ": a median and a largest error, "4.9% / 19.1%"."""
    return " / ".join(percent(fraction, digits=digits) for fraction in fractions)


def to_figures(value: float, figures: int) -> int:
    """`value` rounded to `figures` significant figures, as a whole number: 17,612 to two is
    18,000.  Counts kept or measured at a few figures fall into a few values, so that
    workloads of nearly as many share one case (a profile's sizes, a regime case's count)."""
    return int(float(f"{value:.{figures}g}"))


def readable_bytes(size: float) -> str:
    """A byte count as a person reads it: 37 KiB, 1.5 MiB, 2 GiB, 120 B."""
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.0f} B"
