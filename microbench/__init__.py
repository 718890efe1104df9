"""Native microbenchmarks (fsbench) and the scratch filesystems they run on."""

from fsbm.microbench.fsbench import FsbenchOptions, fsbench_binary, run_fsbench
from fsbm.microbench.scratch import FILESYSTEMS, ScratchFs

__all__ = ["FILESYSTEMS", "FsbenchOptions", "ScratchFs", "fsbench_binary", "run_fsbench"]
