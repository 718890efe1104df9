"""Drive the native fsprobe: filesystem parameters found from user space (issue 6)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fsbm.locations import native_binary
from fsbm.microbench.fsbench import check_target
from fsbm.microbench.native_run import load_result, run_with_progress

PROBES = ("block-size", "readahead", "direct-blocks")


def fsprobe_binary() -> Path:
    """The built fsprobe: $FSBM_FSPROBE, the package's bin/, or PATH."""
    return native_binary("fsprobe", Path(__file__).parent)


def run_probes(target: Path, *, only: list[str] | None = None, quick: bool = False) -> dict[str, Any]:
    """Run the probes in scratch files beneath `target`; fsprobe's report."""
    check_target(target)
    with tempfile.TemporaryDirectory(prefix="fsbm-probe-") as tmp:
        out_path = Path(tmp) / "probe.json"
        command = [str(fsprobe_binary()), "--target", str(target), "--output", str(out_path),
                   *(["--only", ",".join(only)] if only else []), *(["--quick"] if quick else [])]
        returncode, stderr = run_with_progress(lambda fd: command, None)
        return load_result("fsprobe", returncode, stderr, out_path)
