"""Drive the native fsreplay: a plan and a target in, one JSON report out (issue 5)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, UsageError
from fsbm.locations import native_binary
from fsbm.microbench.fsbench import check_target
from fsbm.microbench.native_run import count_progress, load_result, run_with_progress

MODES = ("serial", "threads", "timed")


def fsreplay_binary() -> Path:
    """The built fsreplay: $FSBM_FSREPLAY, the package's bin/, or PATH."""
    return native_binary("fsreplay", Path(__file__).parent)


def run_replay(plan: Path, target: Path, *, mode: str = "serial", cold: bool = False, cpu_per_op: bool = False,
               skip_syncs: bool = False, on_progress: Callable[[int, int], None] | None = None,
               tree_bytes: int | None = None) -> dict[str, Any]:
    """Replay `plan` beneath `target` (which must be empty: the plan's tree is built there).
    `cpu_per_op`: also the CPU time of each kind of operation, at the cost of two system
    calls an operation (fsreplay --cpu-per-op).  `skip_syncs`: the plan's syncs succeed at
    once, as a program's do under libeatmydata (fsreplay --skip-syncs; not the library
    itself, which would also skip the replay's own writeback before --cold drops the
    caches, and leave the tree cached).  `tree_bytes` (the plan's, replay_plan.PlanStats):
    a tree larger than the target's free space is refused before anything is written.  A
    replay that fails part-way removes what it built: the target was empty (fsreplay refuses
    any other), so nothing of the user's goes."""
    check_target(target)
    binary = fsreplay_binary()
    if tree_bytes is not None:
        free = shutil.disk_usage(target).free
        if tree_bytes > free:
            raise UsageError(f"the trace's files need {tree_bytes / 2**20:,.1f} MiB and {target} has "
                             f"{free / 2**20:,.1f} MiB free", hint="replay on a larger filesystem")

    with tempfile.TemporaryDirectory(prefix="fsbm-replay-") as tmp:
        out_path = Path(tmp) / "replay.json"
        command = [str(binary), "--plan", str(plan), "--target", str(target), "--mode", mode,
                   "--output", str(out_path), *(["--cold"] if cold else []), *(["--cpu-per-op"] if cpu_per_op else []),
                   *(["--skip-syncs"] if skip_syncs else [])]
        returncode, stderr = run_with_progress(lambda fd: [*command, "--progress-fd", str(fd)],
                                                 count_progress(on_progress))
        try:
            return load_result("fsreplay", returncode, stderr, out_path)
        except UsageError:
            raise  # refused before it built anything (a target that was not empty, say)
        except FsbmError as exc:
            _remove_contents(target)
            raise FsbmError(f"{exc.message} (what it had built beneath {target} was removed)") from None


def _remove_contents(directory: Path) -> None:
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def cold_replay_beneath(plan: Path, base: Path, *, prefix: str, cpu_per_op: bool = False,
                        skip_syncs: bool = False) -> dict[str, Any]:
    """One cold serial replay of `plan` (run_replay) in a fresh directory beneath `base`,
    named from `prefix` and removed after, whatever happened: how the validation's timed
    replays and the measuring replays of the calls' CPU are made."""
    directory = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    try:
        return run_replay(plan, directory, mode="serial", cold=True, cpu_per_op=cpu_per_op, skip_syncs=skip_syncs)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def mismatches(report: dict[str, Any]) -> int:
    """How many of a replay's calls ended otherwise than traced: failed where they had
    succeeded, succeeded where they had failed, or failed with another error.  A replay
    with any did other work than the program's."""
    return sum(counts.get("failed_unexpectedly", 0) + counts.get("succeeded_unexpectedly", 0)
               + counts.get("failed_differently", 0)
               for counts in (entry.get("errors", {}) for entry in report.get("operations", {}).values()))
