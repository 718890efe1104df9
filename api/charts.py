"""The report's charts, drawn by matplotlib and inlined as SVG: no script, no network, so
the page is whole on its own, prints as it shows, and scales down to a phone.

Three kinds serve the report: horizontal bars with interval whiskers, stacked horizontal
bars, and lines over a log-scaled x axis.  A candidate keeps one colour in every chart
(`colours_for`).  Every mark is an element of class "mark" with a <title>, which browsers
show on hover and screen readers read.

Every figure is FIGURE_WIDTH_IN wide whatever its labels (a constrained layout gives long
labels room inside the figure rather than widening it), with text at FONT_PT: scaled to a
390 px phone its smallest text stays at about 11 px instead of shrinking with a wide drawing.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

# Colour-blind-safe (Okabe-Ito), in the order candidates and parts are given colours.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
FIGURE_WIDTH_IN = 4.0
FONT_PT = 10
ROW_IN = 0.34

Format = Callable[[float], str]


@dataclass(frozen=True)
class IntervalBar:
    label: str
    value: float
    low: float
    high: float
    highlight: bool = False
    colour: str | None = None


def colours_for(names: Sequence[str]) -> dict[str, str]:
    """One colour per name, in the order given: the same candidate, the same colour, in every chart."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(dict.fromkeys(names))}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": FONT_PT, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.hashsalt": "fsbm"})
    return plt


def _axis_formatter(fmt: Format) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: "0" if value == 0 else fmt(value))


def _svg(figure: Any, name: str, description: str, tips: dict[str, str]) -> str:
    """The figure as an inline <svg>: sized by its viewBox (width 100% in the page's CSS), named
    for the tests and the page (data-chart), described for screen readers, its marks classed
    and titled."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    _pyplot().close(figure)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"',
                  lambda m: (f'<svg class="chart" data-chart="{escape(name)}" role="img" '
                             f'aria-label="{escape(description)}" {m.group(1)}'), text, count=1)
    for gid, tip in tips.items():
        text = text.replace(f'<g id="{gid}">', f'<g id="{gid}" class="mark"><title>{escape(tip)}</title>', 1)
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


def interval_bars(name: str, bars: Sequence[IntervalBar], fmt: Format, description: str) -> str:
    """One bar per row with its interval as a whisker; the highlighted bar drawn solid, the
    others lighter, each in its own colour (IntervalBar.colour)."""
    plt = _pyplot()
    figure, axes = plt.subplots(layout="constrained", figsize=(FIGURE_WIDTH_IN, 0.6 + ROW_IN * max(len(bars), 1)))
    tips = {}
    for i, bar in enumerate(bars):
        colour = bar.colour or PALETTE[0]
        gid = f"{name}-mark-{i}"
        patch = axes.barh(i, bar.value, height=0.6, color=colour, alpha=1.0 if bar.highlight else 0.55)[0]
        patch.set_gid(gid)
        axes.errorbar(bar.value, i, xerr=[[max(bar.value - bar.low, 0)], [max(bar.high - bar.value, 0)]],
                      fmt="none", ecolor="#333333", capsize=4, linewidth=1)
        axes.annotate(fmt(bar.value), (max(bar.high, bar.value), i), xytext=(5, 0), textcoords="offset points",
                      va="center", fontsize=FONT_PT - 1)
        tips[gid] = f"{bar.label}: {fmt(bar.value)} (interval {fmt(bar.low)} to {fmt(bar.high)})"
    axes.set_yticks(range(len(bars)), [bar.label for bar in bars])
    axes.invert_yaxis()
    end = max((max(b.high, b.value) for b in bars), default=1.0) or 1.0
    axes.set_xlim(0, end * 1.18)
    axes.xaxis.set_major_formatter(_axis_formatter(fmt))
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    return _svg(figure, name, description, tips)


def stacked_bars(name: str, rows: Sequence[tuple[str, dict[str, float]]], fmt: Format, description: str) -> str:
    """One bar per row, split into its parts (the same parts, in the same colours, on every
    row), with a legend of the parts."""
    plt = _pyplot()
    parts: list[str] = []
    for _, values in rows:
        parts += [p for p in values if p not in parts]
    colours = colours_for(parts)
    figure, axes = plt.subplots(layout="constrained", figsize=(FIGURE_WIDTH_IN, 1.0 + ROW_IN * max(len(rows), 1) + 0.22 * len(parts)))
    tips = {}
    for r, (label, values) in enumerate(rows):
        left = 0.0
        for part in parts:
            value = values.get(part, 0.0)
            if value <= 0:
                continue
            gid = f"{name}-mark-{len(tips)}"
            axes.barh(r, value, left=left, height=0.6, color=colours[part], label=part if r == 0 else None)[0] \
                .set_gid(gid)
            tips[gid] = f"{label}: {part} {fmt(value)}"
            left += value
        axes.annotate(fmt(left), (left, r), xytext=(5, 0), textcoords="offset points", va="center",
                      fontsize=FONT_PT - 1)
    axes.set_yticks(range(len(rows)), [label for label, _ in rows])
    axes.invert_yaxis()
    end = max((sum(v.values()) for _, v in rows), default=1.0) or 1.0
    axes.set_xlim(0, end * 1.18)
    axes.xaxis.set_major_formatter(_axis_formatter(fmt))
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[p]) for p in parts]
    axes.legend(handles, parts, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False,
                fontsize=FONT_PT - 1)
    return _svg(figure, name, description, tips)


def log_lines(name: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]], x_fmt: Format, y_fmt: Format,
              description: str, marker_x: float | None = None, y_from_zero: bool = True,
              colours: dict[str, str] | None = None) -> str:
    """Lines over a log2 x axis (sizes), each in its series' colour; an optional vertical
    marker (this machine's page cache)."""
    plt = _pyplot()
    from matplotlib.ticker import FixedLocator

    figure, axes = plt.subplots(layout="constrained", figsize=(FIGURE_WIDTH_IN, 2.8))
    colours = colours or colours_for([label for label, _ in series])
    points = [p for _, line in series for p in line if p[0] > 0]
    tips = {}
    for label, line in series:
        drawn = sorted((x, y) for x, y in line if x > 0)
        if not drawn:
            continue
        gid = f"{name}-mark-{len(tips)}"
        axes.plot([x for x, _ in drawn], [y for _, y in drawn], marker="o", markersize=3, linewidth=1.6,
                  color=colours.get(label, PALETTE[0]), label=label)[0].set_gid(gid)
        tips[gid] = label
    axes.set_xscale("log", base=2)
    if points:
        lo, hi = min(p[0] for p in points), max(p[0] for p in points)
        exponents = range(math.ceil(math.log2(lo)), math.floor(math.log2(hi)) + 1)
        step = max(1, math.ceil(len(exponents) / 5))  # at most five labels: "512 MiB" is wide beside "64 MiB"
        axes.xaxis.set_major_locator(FixedLocator([2.0 ** k for k in exponents[::step]]))
        axes.xaxis.set_minor_locator(FixedLocator([]))
        if marker_x and lo <= marker_x <= hi:
            axes.axvline(marker_x, color="#555555", linestyle="--", linewidth=1)
            axes.annotate("this machine", (marker_x, 1), xycoords=("data", "axes fraction"), xytext=(-4, -4),
                          textcoords="offset points", ha="right", va="top", fontsize=FONT_PT - 1)
        top = max(p[1] for p in points)
        axes.set_ylim(0 if y_from_zero else min(p[1] for p in points), top * 1.08 if top > 0 else 1)
    axes.xaxis.set_major_formatter(_axis_formatter(x_fmt))
    axes.yaxis.set_major_formatter(_axis_formatter(y_fmt))
    axes.grid(color="#dddddd", linewidth=0.6)
    if len(series) > 1:
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=min(len(series), 3), frameon=False,
                    fontsize=FONT_PT - 1)
    return _svg(figure, name, description, tips)
