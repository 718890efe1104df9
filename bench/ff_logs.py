"""strace -ff logs of a real multi-process job, made larger by copies of the whole run.

The job (a shell that starts four Python workers doing file calls, and a hundred short
`cat`s writing a file they share with it) is traced for real with strace -ff -tt -T -y.
A copy of the run is the same logs with every pid moved up by a multiple of 2^23 (past
Linux's largest pid), in the file names and in what clone, fork and vfork return: each copy
is a process tree of its own, running at the same times as the others.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

PID_STEP = 1 << 23
WORKER = textwrap.dedent("""
    import os, sys
    n, calls = int(sys.argv[1]), int(sys.argv[2])
    os.makedirs(f"w{n}", exist_ok=True)
    for i in range(calls):
        path = f"w{n}/f{i % 200}"
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        os.write(fd, b"x" * 4096)
        os.lseek(fd, 0, os.SEEK_SET)
        os.read(fd, 4096)
        os.close(fd)
        os.stat(path)
        if i % 1000 == 0:
            os.write(3, b"progress\\n")
""")
JOB = textwrap.dedent("""
    exec 3> shared.log
    seq 1 100 > small
    for n in 1 2 3 4; do {python} worker.py $n {calls} & done
    for i in $(seq 1 100); do cat small >&3; done
    wait
""")
_MADE = re.compile(rb"^(.*\b(?:clone3?|v?fork)\(.*\) += )(\d+)", re.M)


def trace_job(directory: Path, calls: int = 15_000) -> list[Path]:
    """Trace the job in `directory` (made if need be); its per-pid logs."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "worker.py").write_text(WORKER)
    (directory / "job.sh").write_text(JOB.format(python=sys.executable, calls=calls))
    subprocess.run(["strace", "-ff", "-tt", "-T", "-y", "-o", str(directory / "log"), "sh", "job.sh"],
                   cwd=directory, check=True, capture_output=True)
    return sorted(directory.glob("log.*"))


def copies(logs: list[Path], n: int, out: Path) -> list[Path]:
    """The logs and n - 1 copies of them, each a run of its own, in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for k in range(n):
        shift = k * PID_STEP
        for log in logs:
            text = log.read_bytes()
            if shift:
                text = _MADE.sub(lambda m: m.group(1) + str(int(m.group(2)) + shift).encode(), text)
            target = out / f"log.{int(log.suffix[1:]) + shift}"
            target.write_bytes(text)
            made.append(target)
    return made
