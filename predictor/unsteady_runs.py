"""The runs a validation measured that moved most from round to round, beside what the
machine did while each ran (fsbm/host_activity.py): whether a slow run had the host's disk
writing for someone else, time stolen, or its own writeback, which a reader needs before
blaming the model for missing it."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

UNSTEADY_RUNS = 1.3  # a pair whose slowest run took this many times its fastest is shown
SHOWN = 8  # the most pairs shown, the most unsteady first


def _host_words(host: dict[str, Any]) -> str:
    """One run's counters, as a person reads them."""
    parts = []
    if host.get("disks_read_mib") is not None and host.get("disks_read_s") is not None:
        parts.append(f"disks read {host['disks_read_mib']:.1f} MiB, the reads waiting {host['disks_read_s']:.2f} s")
    disks, target = host.get("disks_written_mib"), host.get("target_written_mib")
    if disks is not None:
        beyond = f", {max(disks - target, 0.0):.1f} beyond the target's" if target is not None else ""
        parts.append(f"disks wrote {disks:.1f} MiB{beyond}")
    if host.get("disks_write_s") is not None:
        parts.append(f"their writes waited {host['disks_write_s']:.2f} s")
    if host.get("disks_flushes") is not None:
        parts.append(f"{host['disks_flushes']} flushes")
    if host.get("target_flushes") is not None:
        parts.append(f"the target {host['target_flushes']} flushes, {host.get('target_discarded_mib') or 0:.1f} MiB "
                     "discarded")
    if host.get("iowait_s") is not None:
        parts.append(f"iowait {host['iowait_s']:.2f} s")
    if host.get("steal_s"):
        parts.append(f"stolen {host['steal_s']:.2f} s")
    if host.get("dirty_mib_before") is not None:
        writeback = host.get("writeback_mib_before")
        under = f" and {writeback:.1f} MiB under writeback" if writeback else ""
        parts.append(f"{host['dirty_mib_before']:.1f} MiB dirty{under} at the start")
    if host.get("target_unallocated_mib_before") is not None:
        parts.append(f"btrfs {host['target_unallocated_mib_before']:.0f} MiB unallocated")
    return "; ".join(parts)


def unsteady_runs_section(records: list[dict[str, Any]]) -> list[str]:
    """Markdown: for the (program, target, kind) pairs whose runs moved by UNSTEADY_RUNS or
    more, the fastest and the slowest run with what the host did in each.  Empty where no
    pair moved so, or no run was watched (records from before the host was watched)."""
    runs: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("kind") in ("real", "replay") and r.get("host") and r.get("seconds", 0) > 0:
            runs[(r["program"], r["target"], r["kind"])].append(r)
    moved = sorted(((max(g, key=lambda r: r["seconds"])["seconds"] / min(g, key=lambda r: r["seconds"])["seconds"],
                     key) for key, g in runs.items() if len(g) > 2), reverse=True)
    moved = [(ratio, key) for ratio, key in moved if ratio >= UNSTEADY_RUNS][:SHOWN]
    if not moved:
        return []
    lines = ["", "## The runs that moved most, and what the host did meanwhile", "",
             f"Pairs whose slowest run took {UNSTEADY_RUNS}x their fastest or more (at most {SHOWN}), from the "
             "counters the kernel keeps (read before and after each run): what the machine's disks read and how "
             "long the reads waited (the same reads waiting longer is the device slower); what they wrote, a loop "
             "image's writes included, and how much of it was not the target's; how long their writes waited; "
             "their cache flushes, and the target's own flushes and discards (a filesystem that commits more in one "
             "run than in another shows here); the processors' iowait; the dirty memory, and any under "
             "writeback, when the run began; and on btrfs how much of the device was unallocated then (with "
             "little left, btrfs commits whole transactions to reclaim metadata space while a program writes).", "",
             "| program | target | kind | run | seconds | round | what the host did |", "|---|---|---|---|---|---|---|"]
    for ratio, key in moved:
        group = sorted(runs[key], key=lambda r: r["seconds"])
        program, target, kind = key
        for which, r in (("fastest", group[0]), (f"slowest ({ratio:.2f}x)", group[-1])):
            lines.append(f"| {program} | {target} | {kind} | {which} | {r['seconds']:.3f} | {r['round'] + 1} | "
                         f"{_host_words(r['host'])} |")
    return lines
