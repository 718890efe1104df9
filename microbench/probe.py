"""Drive the native fsprobe: filesystem parameters found from user space (issue 6)."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from fsbm.locations import native_binary
from fsbm.microbench.cgroup import memory_cgroup, run_inside
from fsbm.microbench.fsbench import check_target
from fsbm.microbench.native_run import load_result, run_with_progress

PROBES = ("block-size", "readahead", "direct-blocks", "name-cache", "cache-size")


def fsprobe_binary() -> Path:
    """The built fsprobe: $FSBM_FSPROBE, the package's bin/, or PATH."""
    return native_binary("fsprobe", Path(__file__).parent)


def run_probes(target: Path, *, only: list[str] | None = None, quick: bool = False,
               memory_limit: int | None = None) -> dict[str, Any]:
    """Run the probes in scratch files beneath `target`; fsprobe's report.  With a memory
    limit they run in a memory cgroup of that size, so the page cache has a known bound."""
    check_target(target)
    with tempfile.TemporaryDirectory(prefix="fsbm-probe-") as tmp, ExitStack() as stack:
        out_path = Path(tmp) / "probe.json"
        command = [str(fsprobe_binary()), "--target", str(target), "--output", str(out_path),
                   *(["--only", ",".join(only)] if only else []), *(["--quick"] if quick else [])]
        if memory_limit:
            command = run_inside(stack.enter_context(memory_cgroup(memory_limit)), command)
        returncode, stderr = run_with_progress(lambda fd: command, None)
        doc = load_result("fsprobe", returncode, stderr, out_path)
    doc["memory_limit_bytes"] = memory_limit
    return doc
