"""The files a traced program read from outside its workload's directory, for the wait on them.

A cold run waits for more than the workload's files: its executables, their shared
libraries and loader, and whatever else it reads from the system disk (a compiler's
headers, locale and configuration files) come off disk too.  That wait is not the
filesystem under study, so no cost table prices it, and it is not CPU time, so the CPU
time of untraced runs misses it; yet it is in every real cold run, the same on every
candidate.  Measured here (tmpfs, where the workload's own files never leave memory): a
cold run of tar, cp or grep takes 13-17 ms more than one whose outside files are cached,
git 45 ms.

`fsbm trace record` measures it as the difference between cold runs and cold runs whose
outside files were read in first (record.measure_outside_wait); this module finds those files in the
trace and reads them in.  A file counts when the trace shows it executed or used through
a descriptor (strace -y annotates every descriptor with its path), it lies outside the
scope and outside /proc, /sys and /dev, and it is a regular file with bytes in it.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from pathlib import Path

from fsbm.microbench.cache import warm_file
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


def outside_files(log: Path, scope: Path, cwd: Path) -> list[Path]:
    """The regular files the traced program executed or used through a descriptor outside
    `scope` (module docstring), each once, in first-seen order; relative executables are
    taken from `cwd`."""
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
            if not candidate or candidate.startswith(_PSEUDO) or _inside(candidate, scope_text):
                continue
            try:
                info = os.stat(candidate)
            except (OSError, ValueError):
                continue  # gone since, a name strace escaped, or a failed exec's guess
            if stat.S_ISREG(info.st_mode) and info.st_size > 0:
                files.setdefault(os.path.realpath(candidate))
    return [Path(f) for f in files if not _inside(f, scope_text)]


def warm_outside(files: list[Path], budget: int = WARM_BUDGET_BYTES) -> int:
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
