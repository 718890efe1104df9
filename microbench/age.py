"""Drive the native fsage: lay a tree down, age it (Tang, appendix E), measure the layout."""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fsbm.errors import UsageError
from fsbm.locations import native_binary
from fsbm.microbench.fsbench import check_target
from fsbm.microbench.native_run import count_progress, load_result, run_with_progress


def fsage_binary() -> Path:
    """The built fsage: $FSBM_FSAGE, the package's bin/, or PATH."""
    return native_binary("fsage", Path(__file__).parent)


@dataclass
class AgingOptions:
    rounds: int = 10
    files: int | None = None
    fill_pct: float | None = None
    max_file: str | None = None
    seed: int = 1
    sizes: list[int] | None = None  # the tree's file sizes; None: Impressions' log-normal

    def arguments(self, sizes_file: Path | None) -> list[str]:
        args = ["--rounds", str(self.rounds), "--seed", str(self.seed)]
        if self.files:
            args += ["--files", str(self.files)]
        if self.fill_pct:
            args += ["--fill", str(self.fill_pct)]
        if self.max_file:
            args += ["--max-file", self.max_file]
        if sizes_file is not None:
            args += ["--sizes", str(sizes_file)]
        return args

    def describe(self) -> str:
        tree = "sizes given" if self.sizes else "Impressions log-normal sizes"
        amount = f"fill {self.fill_pct:g}%" if self.fill_pct else f"{self.files or len(self.sizes or []) or 1000} files"
        return f"aged: Tang appendix E, {self.rounds} rounds, {amount}, {tree}, seed {self.seed}"


def sizes_from_listing(path: Path) -> list[int]:
    """File sizes from an `ls -l`-style listing (regular files: 5th field) or lines that start
    with a size (`find -printf '%s %p\\n'`)."""
    sizes = []
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or line.startswith(("total ", "#")) or line.endswith(":"):
            continue
        if fields[0][0] in "-dlcbps" and len(fields) >= 9:  # ls -l
            if fields[0][0] == "-" and fields[4].isdigit():
                sizes.append(int(fields[4]))
            continue
        if not fields[0].isdigit():
            raise UsageError(f"{path}:{number}: expected an `ls -l` line or a size in bytes first")
        sizes.append(int(fields[0]))
    if not sizes:
        raise UsageError(f"{path}: no file sizes in it")
    return sizes


def sizes_from_profile(body: dict[str, Any], seed: int = 1) -> list[int]:
    """As many sizes as the profile's files, drawn from its file-size histogram (uniform
    within each log2 bucket), so the aged tree looks like the traced workload's."""
    distribution = body["namespace"]["file_size_bytes"]
    buckets = distribution.get("histogram_log2", [])
    if not buckets:
        raise UsageError("the profile has no file sizes (no reads or writes at known offsets)")
    rng = np.random.default_rng(seed)
    counts = np.array([b["count"] for b in buckets], dtype=float)
    chosen = rng.choice(len(buckets), size=int(distribution["count"]), p=counts / counts.sum())
    return [int(rng.integers(buckets[k]["lo"], buckets[k]["hi"])) for k in chosen]


def run_aging(target: Path, options: AgingOptions, *,
              on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Age an empty directory `target`; returns fsage's report (layout before and after)."""
    check_target(target)
    binary = fsage_binary()

    with tempfile.TemporaryDirectory(prefix="fsbm-age-") as tmp:
        sizes_file = None
        if options.sizes:
            sizes_file = Path(tmp) / "sizes"
            sizes_file.write_text("".join(f"{s}\n" for s in options.sizes))
        out_path = Path(tmp) / "aging.json"
        command = [str(binary), "--target", str(target), "--output", str(out_path), *options.arguments(sizes_file)]
        returncode, stderr = run_with_progress(lambda fd: [*command, "--progress-fd", str(fd)],
                                                 count_progress(on_progress))
        return load_result("fsage", returncode, stderr, out_path)


def read_direct(files: list[Path]) -> float:
    """Seconds to read `files` front to back in 1 MiB O_DIRECT reads: the device's time for
    the tree's layout, never the page cache's."""
    buffer = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT needs
    buffer.write(bytes(len(buffer)))  # its pages faulted in now, not inside the first timed read
    start = time.perf_counter()
    for path in files:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        try:
            offset = 0
            while (n := os.preadv(fd, [buffer], offset)) > 0:
                offset += n
        finally:
            os.close(fd)
    return time.perf_counter() - start


def reads_completed(device: str) -> int:
    """Read requests block device `device` (/dev/loopN) has completed since it was set up."""
    return int((Path("/sys/block") / Path(device).name / "stat").read_text().split()[0])
