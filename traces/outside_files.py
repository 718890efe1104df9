"""The files a traced program read from outside its workload's directory, for the wait on them.

A cold run waits for more than the workload's files: its executables, their shared
libraries and loader, and whatever else it reads from the system disk (a compiler's
headers, locale and configuration files) come off disk too.  That wait is not the
filesystem under study, so no cost table prices it, and it is not CPU time, so the CPU
time of untraced runs misses it; yet it is in every real cold run, the same on every
candidate.  Measured here (tmpfs, where the workload's own files never leave memory): a
cold run of tar, cp or grep takes 13-17 ms more than one whose outside files are cached,
git 45 ms.

How it is measured (record.measure_outside_wait, and validate's rounds): pairs of runs that
start cold and read the workload's own files in first, one of each pair also the outside
files; the pairs' median difference in idle time (wall less CPU time), clamped between 0
and the time reading the outside files cold takes (bounded_wait_ns).  Why so:
- the difference of two whole cold runs is mostly the program's own disk I/O drifting
  (measured on ext4 here, one pair a round: copy-delete -13..141 ms, sqlite -793..43 ms);
  with the workload's files read in before both runs, the read-heavy programs' pairs agree
  with pairs on tmpfs, where those files never leave memory (random-reads 10 ms against 12,
  copy-delete 10 against 13, grep 8 against 7, medians of 6 pairs);
- a program that syncs waits for the device in both runs of a pair, and its pairs stay
  noise (sqlite: -410..47 ms).  Reading the outside files cold, front to back, is a steady
  measure (git's 41-44 ms over 6 reads) and the most the wait can be: a fault reads a
  window around it, and the rest of the window arrives while the program computes (sqlite3's
  files: 17 ms read cold, against 0-12 ms of wait on tmpfs).  So it bounds the pairs.
- the idle times' difference, not the walls': the walls' carries the runs' CPU time, whose
  noise is as large as the wait (copy-delete's runs: 70-83 ms of CPU time over five rounds
  of one validation, its pairs' wall differences -10.8..10.1 ms, median -2.8, so no wait
  at all, where its tmpfs runs idled 8 ms each); and the CPU time of faulting the files in
  is the cold runs' CPU time already, which the predictor counts outside the filesystem.
  The walls' difference is kept beside it (outside_wall_difference_ns).

This module finds the files in the trace, reads them in, and times their cold read.  A file
counts when the trace shows it executed or used through a descriptor (strace -y annotates
every descriptor with its path), it is outside /proc, /sys and /dev, and it is a regular
file with bytes in it; it is outside or inside the workload by the scope.
"""

from __future__ import annotations

import os
import re
import stat
import statistics
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from fsbm.microbench.cache import drop_all, warm_file
from fsbm.traces.files import open_decompressed

_DESCRIPTOR_PATH = re.compile(rb"<(/[^<>]*)>")
_EXECUTED = re.compile(rb'\bexecve(?:at)?\((?:[^,]*, )?"([^"]+)"')
_PSEUDO = ("/proc/", "/sys/", "/dev/")
ELF_MAGIC = b"\x7fELF"
PT_INTERP = 3
WARM_BUDGET_BYTES = 1 << 30  # more than this outside a workload is a workload of its own


def _inside(path: str, scope: str) -> bool:
    return path == scope or path.startswith(scope.rstrip("/") + "/")


def elf_interpreter(path: Path) -> Path | None:
    """The loader a dynamically linked ELF executable names (PT_INTERP): the kernel opens it
    at exec, so no traced call shows it."""
    try:
        with open(path, "rb") as file:
            header = file.read(64)
            if len(header) < 64 or header[:4] != ELF_MAGIC or header[4] != 2:  # 64-bit ELF only
                return None
            order = "<" if header[5] == 1 else ">"
            phoff, = struct.unpack_from(order + "Q", header, 32)
            phentsize, phnum = struct.unpack_from(order + "HH", header, 54)
            for index in range(phnum):
                file.seek(phoff + index * phentsize)
                entry = file.read(56)
                if len(entry) < 56:
                    return None
                p_type, = struct.unpack_from(order + "I", entry, 0)
                if p_type == PT_INTERP:
                    offset, = struct.unpack_from(order + "Q", entry, 8)
                    size, = struct.unpack_from(order + "Q", entry, 32)
                    file.seek(offset)
                    return Path(file.read(size).rstrip(b"\0").decode(errors="replace"))
    except (OSError, struct.error):
        return None
    return None


@dataclass
class UsedFiles:
    """The regular files a traced program used, each once, in first-seen order: inside its
    scope (the workload's own) and outside it (executables, libraries, headers)."""

    inside: list[Path] = field(default_factory=list)
    outside: list[Path] = field(default_factory=list)


def used_files(log: Path, scope: Path, cwd: Path) -> UsedFiles:
    """The regular files the traced program executed or used through a descriptor (module
    docstring), split by `scope`; relative executables are taken from `cwd`.  A file that
    no longer exists is left out; one that a later run's start removes (an output) is
    skipped when read in (read_in)."""
    scope_text = str(Path(scope).resolve())
    seen: dict[str, None] = {}
    with open_decompressed(Path(log)) as lines:
        for line in lines:
            for match in _DESCRIPTOR_PATH.finditer(line):
                seen.setdefault(os.fsdecode(match.group(1)))
            executed = _EXECUTED.search(line)
            if executed:
                seen.setdefault(os.path.join(cwd, os.fsdecode(executed.group(1))))
    files: dict[str, None] = {}
    for text in seen:
        for candidate in (text, str(elf_interpreter(Path(text)) or "")):
            if not candidate or candidate.startswith(_PSEUDO):
                continue
            try:
                info = os.stat(candidate)
            except (OSError, ValueError):
                continue  # gone since, a name strace escaped, or a failed exec's guess
            if stat.S_ISREG(info.st_mode) and info.st_size > 0:
                files.setdefault(os.path.realpath(candidate))
    used = UsedFiles()
    for name in files:
        (used.inside if _inside(name, scope_text) else used.outside).append(Path(name))
    return used


def outside_files(log: Path, scope: Path, cwd: Path) -> list[Path]:
    """The regular files the traced program used outside `scope` (used_files)."""
    return used_files(log, scope, cwd).outside


def read_in(files: list[Path], budget: int = WARM_BUDGET_BYTES) -> int:
    """Read `files` through (cache.warm_file) until `budget` bytes; the bytes read.  A file
    that vanished or cannot be read is skipped: it only makes the wait measured smaller."""
    total = 0
    for path in files:
        if total >= budget:
            break
        try:
            total += warm_file(path)
        except OSError:
            continue
    return total


def cold_read_ns(files: list[Path]) -> int:
    """How long reading `files` in takes with every cache dropped first (root): the most a
    cold run can wait for them (module docstring)."""
    drop_all()
    started = time.perf_counter_ns()
    read_in(files)
    return time.perf_counter_ns() - started


def bounded_wait_ns(differences: list[int], cold_reads: list[int]) -> int:
    """The wait for the outside files: the median of the pairs' differences (the run that
    found them uncached less the one that had them read in), clamped between 0 and the
    median time their cold read took (module docstring)."""
    wait = statistics.median(differences)
    return int(min(max(wait, 0), statistics.median(cold_reads))) if cold_reads else int(max(wait, 0))
