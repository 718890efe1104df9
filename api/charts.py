"""Inline SVG charts for the report: no script, no network, so the page is whole on its own,
prints as it shows, and scales to a phone's width (a viewBox, width 100%).

Three kinds serve the report: horizontal bars with interval whiskers, stacked horizontal
bars, and lines over a log-scaled x axis.  Every mark carries a <title>, which browsers
show on hover and screen readers read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

# Colour-blind-safe (Okabe-Ito), in the order series are drawn.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
WIDTH = 720
LABEL_WIDTH = 150
ROW = 34
MARGIN = 12

Format = Callable[[float], str]


@dataclass(frozen=True)
class IntervalBar:
    label: str
    value: float
    low: float
    high: float
    highlight: bool = False


def _svg(name: str, height: float, body: list[str], description: str) -> str:
    return (f'<svg class="chart" data-chart="{escape(name)}" viewBox="0 0 {WIDTH} {height:.0f}" role="img" '
            f'aria-label="{escape(description)}" xmlns="http://www.w3.org/2000/svg" '
            f'preserveAspectRatio="xMinYMin meet">' + "".join(body) + "</svg>")


def _nice_max(value: float) -> float:
    """A round axis end at or above value (1, 2, 2.5, 5 x 10^k)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _x_axis(x0: float, x1: float, top: float, bottom: float, end: float, fmt: Format, ticks: int = 4) -> list[str]:
    out = []
    for i in range(ticks + 1):
        value = end * i / ticks
        x = x0 + (x1 - x0) * i / ticks
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle">{escape(fmt(value))}</text>')
    return out


def interval_bars(name: str, bars: Sequence[IntervalBar], fmt: Format, description: str) -> str:
    """One bar per row with its interval as a whisker; the highlighted bar is drawn darker."""
    end = _nice_max(max(max(b.high, b.value) for b in bars) if bars else 1.0)
    x0, x1 = LABEL_WIDTH, WIDTH - MARGIN - 60
    height = MARGIN + ROW * len(bars) + 24
    body = _x_axis(x0, x1, MARGIN, MARGIN + ROW * len(bars), end, fmt)
    scale = (x1 - x0) / end
    for i, bar in enumerate(bars):
        y = MARGIN + ROW * i
        colour = PALETTE[0] if bar.highlight else "#7fa7c9"
        tip = f"{bar.label}: {fmt(bar.value)} (90% interval {fmt(bar.low)} to {fmt(bar.high)})"
        body.append(
            f'<text class="label" x="{x0 - 8}" y="{y + ROW / 2 + 4:.1f}" text-anchor="end">{escape(bar.label)}</text>'
            f'<rect class="mark" x="{x0}" y="{y + 7:.1f}" width="{max(bar.value * scale, 1):.1f}" height="{ROW - 14}" '
            f'fill="{colour}"><title>{escape(tip)}</title></rect>'
            f'<line class="whisker" x1="{x0 + bar.low * scale:.1f}" y1="{y + ROW / 2:.1f}" '
            f'x2="{x0 + bar.high * scale:.1f}" y2="{y + ROW / 2:.1f}"/>'
            f'<line class="whisker" x1="{x0 + bar.low * scale:.1f}" y1="{y + 10:.1f}" x2="{x0 + bar.low * scale:.1f}" '
            f'y2="{y + ROW - 10:.1f}"/><line class="whisker" x1="{x0 + bar.high * scale:.1f}" y1="{y + 10:.1f}" '
            f'x2="{x0 + bar.high * scale:.1f}" y2="{y + ROW - 10:.1f}"/>'
            f'<text class="value" x="{x0 + max(bar.high, bar.value) * scale + 6:.1f}" y="{y + ROW / 2 + 4:.1f}">'
            f'{escape(fmt(bar.value))}</text>')
    return _svg(name, height, body, description)


def stacked_bars(name: str, rows: Sequence[tuple[str, dict[str, float]]], fmt: Format, description: str) -> str:
    """One bar per row, split into its parts (the same parts, in the same colours, on every row)."""
    parts: list[str] = []
    for _, values in rows:
        parts += [p for p in values if p not in parts]
    end = _nice_max(max((sum(v.values()) for _, v in rows), default=1.0))
    x0, x1 = LABEL_WIDTH, WIDTH - MARGIN - 60
    legend_rows = math.ceil(len(parts) / 4)
    top = MARGIN + 18 * legend_rows + 6
    height = top + ROW * len(rows) + 24
    body = []
    for i, part in enumerate(parts):
        lx, ly = MARGIN + (i % 4) * 175, MARGIN + 18 * (i // 4)
        body.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
                    f'<text class="legend" x="{lx + 17}" y="{ly + 10}">{escape(part)}</text>')
    body += _x_axis(x0, x1, top, top + ROW * len(rows), end, fmt)
    scale = (x1 - x0) / end
    for r, (label, values) in enumerate(rows):
        y = top + ROW * r
        body.append(f'<text class="label" x="{x0 - 8}" y="{y + ROW / 2 + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        x = float(x0)
        for i, part in enumerate(parts):
            value = values.get(part, 0.0)
            if value <= 0:
                continue
            width = value * scale
            body.append(f'<rect class="mark" x="{x:.1f}" y="{y + 7:.1f}" width="{max(width, 0.5):.1f}" '
                        f'height="{ROW - 14}" fill="{PALETTE[i % len(PALETTE)]}">'
                        f'<title>{escape(f"{label}: {part} {fmt(value)}")}</title></rect>')
            x += width
        body.append(f'<text class="value" x="{x + 6:.1f}" y="{y + ROW / 2 + 4:.1f}">'
                    f'{escape(fmt(sum(values.values())))}</text>')
    return _svg(name, height, body, description)


def log_lines(name: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]], x_fmt: Format, y_fmt: Format,
              description: str, marker_x: float | None = None, y_from_zero: bool = True) -> str:
    """Lines over a log2 x axis (sizes); an optional vertical marker (e.g. this machine's cache)."""
    points = [p for _, s in series for p in s if p[0] > 0]
    if not points:
        return _svg(name, 40, ['<text class="label" x="10" y="24">no data</text>'], description)
    lo_x, hi_x = math.log2(min(p[0] for p in points)), math.log2(max(p[0] for p in points))
    hi_x = hi_x if hi_x > lo_x else lo_x + 1
    y_end = _nice_max(max(p[1] for p in points))
    y_start = 0.0 if y_from_zero else min(p[1] for p in points)
    x0, x1, top, bottom = 64, WIDTH - MARGIN - 120, MARGIN, 240
    height = bottom + 30

    def px(x: float) -> float:
        return x0 + (x1 - x0) * (math.log2(x) - lo_x) / (hi_x - lo_x)

    def py(y: float) -> float:
        return bottom - (bottom - top) * (y - y_start) / ((y_end - y_start) or 1.0)

    body = []
    for i in range(5):
        y = y_start + (y_end - y_start) * i / 4
        body.append(f'<line class="grid" x1="{x0}" y1="{py(y):.1f}" x2="{x1}" y2="{py(y):.1f}"/>'
                    f'<text class="tick" x="{x0 - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{escape(y_fmt(y))}</text>')
    k = math.ceil(lo_x)
    step = max(1, math.ceil((hi_x - lo_x) / 6))
    while k <= hi_x:
        body.append(f'<line class="grid" x1="{px(2 ** k):.1f}" y1="{top}" x2="{px(2 ** k):.1f}" y2="{bottom}"/>'
                    f'<text class="tick" x="{px(2 ** k):.1f}" y="{bottom + 14}" text-anchor="middle">'
                    f'{escape(x_fmt(2 ** k))}</text>')
        k += step
    if marker_x and 2 ** lo_x <= marker_x <= 2 ** hi_x:
        body.append(f'<line class="marker" x1="{px(marker_x):.1f}" y1="{top}" x2="{px(marker_x):.1f}" y2="{bottom}"/>'
                    f'<text class="tick" x="{px(marker_x) - 4:.1f}" y="{bottom - 6}" text-anchor="end">this machine</text>')
    for i, (label, line) in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        drawn = [(px(x), py(y)) for x, y in line if x > 0]
        if not drawn:
            continue
        path = " ".join(f"{'M' if j == 0 else 'L'}{x:.1f},{y:.1f}" for j, (x, y) in enumerate(drawn))
        body.append(f'<path class="mark line" d="{path}" stroke="{colour}" fill="none">'
                    f'<title>{escape(label)}</title></path>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>' for x, y in drawn]
        body.append(f'<text class="legend" x="{x1 + 8}" y="{top + 16 * i + 10}" fill="{colour}">{escape(label)}</text>')
    return _svg(name, height, body, description)
